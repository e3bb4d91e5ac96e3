//! The profile of a schema version as clients see it: every kept upload's profile merged, and
//! what changed between the last two uploads (a jump in a column's null share, a value new to a
//! low-cardinality column, a range that moved).

use serde::Serialize;
use serde_json::Value;

use super::merged::{merge, MergedColumn};
use super::{StoredColumn, StoredProfile};

/// Bars of a histogram.
const BINS: usize = 10;

/// A null share that moves by more than this between two uploads is flagged.
const NULL_SHARE_JUMP: f64 = 0.1;

/// A range that reaches past the previous upload's by more than this share of its width (at
/// least 1, or 31 days for dates) is flagged.
const RANGE_SHIFT: f64 = 0.5;

#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ProfileView {
    pub version: i64,
    /// Rows of the profiled uploads.
    pub rows: u64,
    /// Uploads whose profile is merged here (uploads stored before profiles existed are not).
    pub uploads: usize,
    pub columns: Vec<ColumnView>,
    /// What changed between the last two uploads; empty with fewer than two.
    pub changes: Vec<ProfileChange>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ColumnView {
    pub name: String,
    pub data_type: String,
    pub nulls: u64,
    /// Nulls over rows, 0 to 1.
    pub null_share: f64,
    /// Distinct non-null values: exact when `top_values` lists them all, else estimated
    /// (HyperLogLog, about 1.6% error).
    pub distinct_estimate: u64,
    /// The smallest value (a number, text, boolean, or a date as `YYYY-MM-DD`).
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Value>))]
    pub min: Option<Value>,
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Value>))]
    pub max: Option<Value>,
    /// Each value and its count, most frequent first, when the column has at most 50 values.
    pub top_values: Option<Vec<ValueCount>>,
    /// Numbers and dates: rows per equal-width bin between min and max (each of 256 finer bins
    /// counted in the bin holding its middle).
    pub histogram: Option<Vec<HistogramBin>>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ValueCount {
    #[cfg_attr(feature = "openapi", schema(value_type = Value))]
    pub value: Value,
    pub count: u64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HistogramBin {
    /// The bin's lower end (dates as `YYYY-MM-DD`); the last bin includes its upper end.
    #[cfg_attr(feature = "openapi", schema(value_type = Value))]
    pub from: Value,
    #[cfg_attr(feature = "openapi", schema(value_type = Value))]
    pub to: Value,
    pub count: u64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ProfileChange {
    pub column: String,
    /// `null_share`, `new_values` or `range`.
    pub kind: &'static str,
    pub message: String,
}

/// The profile of `version` from its uploads' kept profiles, oldest first.
pub fn view(version: i64, uploads: &[StoredProfile]) -> ProfileView {
    let names: Vec<&StoredColumn> = uploads
        .last()
        .map(|p| p.columns.iter().collect())
        .unwrap_or_default();
    let columns = names
        .iter()
        .filter_map(|c| {
            let same: Vec<&StoredColumn> = uploads
                .iter()
                .filter_map(|p| p.columns.iter().find(|x| x.name == c.name))
                .collect();
            merge(&same).map(column_view)
        })
        .collect();
    let changes = match uploads {
        [.., before, last] => changes(before, last),
        _ => Vec::new(),
    };
    ProfileView {
        version,
        rows: uploads.iter().map(|p| p.rows).sum(),
        uploads: uploads.len(),
        columns,
        changes,
    }
}

fn column_view(merged: MergedColumn) -> ColumnView {
    let c = &merged.stored;
    let histogram = histogram(c);
    ColumnView {
        name: c.name.clone(),
        data_type: c.data_type.clone(),
        nulls: c.nulls,
        null_share: share(c.nulls, c.rows),
        distinct_estimate: merged.distinct.round() as u64,
        min: c.min.clone(),
        max: c.max.clone(),
        top_values: c.frequent.as_ref().map(|list| {
            list.iter()
                .map(|(value, count)| ValueCount {
                    value: value.clone(),
                    count: *count,
                })
                .collect()
        }),
        histogram,
    }
}

fn share(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

/// [`BINS`] equal-width bins between the column's bounds, each with its row count.
fn histogram(c: &StoredColumn) -> Option<Vec<HistogramBin>> {
    let bins = c.bins.as_ref()?;
    let (lo, hi) = (as_number(&c.min)?, as_number(&c.max)?);
    let is_date = c.data_type == "date";
    let at = |x: f64| -> Value {
        if is_date {
            Value::from(crate::schema::date_format::date32_to_string(
                x.round() as i32
            ))
        } else if c.data_type == "int" {
            Value::from(x.round() as i64)
        } else {
            Value::from(x)
        }
    };
    let n = if hi > lo { BINS } else { 1 };
    Some(
        bins.regroup(lo, hi, n)
            .into_iter()
            .map(|(from, to, count)| HistogramBin {
                from: at(from),
                to: at(to),
                count,
            })
            .collect(),
    )
}

/// A bound of a number or date column as a number (dates as days since 1970-01-01).
fn as_number(v: &Option<Value>) -> Option<f64> {
    match v.as_ref()? {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d")
            .ok()
            .map(|d| crate::schema::date_format::date_to_days(d) as f64),
        _ => None,
    }
}

/// What moved between the upload `before` and the upload `last`, column by column.
fn changes(before: &StoredProfile, last: &StoredProfile) -> Vec<ProfileChange> {
    let mut out = Vec::new();
    for l in &last.columns {
        let Some(b) = before.columns.iter().find(|c| c.name == l.name) else {
            continue;
        };
        let (was, now) = (share(b.nulls, b.rows), share(l.nulls, l.rows));
        if (now - was).abs() > NULL_SHARE_JUMP {
            out.push(ProfileChange {
                column: l.name.clone(),
                kind: "null_share",
                message: format!(
                    "Column [{}] is {:.0}% null in the last upload, {:.0}% in the one before",
                    l.name,
                    now * 100.0,
                    was * 100.0
                ),
            });
        }
        // New values matter in categories; numbers and dates move on by nature.
        let categorical = matches!(l.data_type.as_str(), "string" | "boolean");
        if let (true, Some(old), Some(new)) = (categorical, &b.frequent, &l.frequent) {
            let fresh: Vec<String> = new
                .iter()
                .filter(|(v, _)| !old.iter().any(|(o, _)| o == v))
                .map(|(v, _)| v.to_string())
                .collect();
            if !fresh.is_empty() {
                out.push(ProfileChange {
                    column: l.name.clone(),
                    kind: "new_values",
                    message: format!(
                        "Column [{}] has values the upload before did not: {}",
                        l.name,
                        fresh.iter().take(5).cloned().collect::<Vec<_>>().join(", ")
                    ),
                });
            }
        }
        if let Some(message) = range_shift(b, l) {
            out.push(ProfileChange {
                column: l.name.clone(),
                kind: "range",
                message,
            });
        }
    }
    out
}

/// Numbers and dates whose range reaches well past the previous upload's.
fn range_shift(before: &StoredColumn, last: &StoredColumn) -> Option<String> {
    let number = as_number;
    if !matches!(last.data_type.as_str(), "int" | "double" | "date") {
        return None;
    }
    let (b_lo, b_hi) = (number(&before.min)?, number(&before.max)?);
    let (l_lo, l_hi) = (number(&last.min)?, number(&last.max)?);
    // Dates move on with every upload: only a month or more past is a shift (a year typed wrong).
    let least = if last.data_type == "date" { 31.0 } else { 1.0 };
    let slack = ((b_hi - b_lo).abs() * RANGE_SHIFT).max(least);
    (l_lo < b_lo - slack || l_hi > b_hi + slack).then(|| {
        let shown = |v: &Option<Value>| v.as_ref().map(Value::to_string).unwrap_or_default();
        format!(
            "Column [{}] ranges from {} to {} in the last upload, {} to {} in the one before",
            last.name,
            shown(&last.min),
            shown(&last.max),
            shown(&before.min),
            shown(&before.max)
        )
    })
}
