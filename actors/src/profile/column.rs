//! One column's profile: counted batch by batch while an upload is validated, kept as
//! [`StoredColumn`] (sketches as base64 bytes), merged with other uploads' when read.

use std::cmp::Ordering;
use std::collections::HashMap;

use arrow::array::{Array, AsArray};
use arrow::datatypes::{Date32Type, Float64Type, Int64Type};
use base64::Engine as _;
use datasketches::hll::{HllSketch, HllType, HllUnion};
use datasketches::tdigest::TDigestMut;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::MAX_FREQUENT;
use crate::schema::{DataType, ValidColumn};

/// HyperLogLog precision: 2^12 buckets, about 1.6% error, 4 KiB a column.
const LG_K: u8 = 12;

/// t-digest size: about 1% rank error, a few KiB a column.
const DIGEST_K: u16 = 100;

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

/// A column's profile as kept: counts, bounds (JSON of the column's type; dates as
/// `YYYY-MM-DD`), the sketches' bytes, and each value's count when there were few.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct StoredColumn {
    pub name: String,
    pub data_type: String,
    pub rows: u64,
    pub nulls: u64,
    pub min: Option<Value>,
    pub max: Option<Value>,
    /// HyperLogLog sketch of the non-null values (base64).
    pub distinct: String,
    /// Each non-null value and its count; `None` past [`MAX_FREQUENT`] distinct values.
    pub frequent: Option<Vec<(Value, u64)>>,
    /// t-digest of numbers and dates (dates as days since 1970-01-01), base64.
    pub digest: Option<String>,
}

/// A bound, in the column's own order (doubles by value, NaN left out).
#[derive(Debug, Clone, PartialEq)]
enum Bound {
    Int(i64),
    Double(f64),
    Text(String),
    Bool(bool),
    Date(i32),
}

impl Bound {
    fn json(&self) -> Value {
        match self {
            Bound::Int(v) => Value::from(*v),
            Bound::Double(v) => Value::from(*v),
            Bound::Text(v) => Value::from(v.as_str()),
            Bound::Bool(v) => Value::from(*v),
            Bound::Date(d) => Value::from(crate::schema::date_format::date32_to_string(*d)),
        }
    }
}

/// Each value's count while there are few, keyed without allocating for numbers.
enum Counts {
    /// Ints, dates and booleans by value, doubles by their bits.
    Numbers(HashMap<u64, (Bound, u64)>),
    Texts(HashMap<String, (Bound, u64)>),
}

/// Counts one column of an upload.
pub struct ColumnProfiler {
    name: String,
    data_type: DataType,
    rows: u64,
    nulls: u64,
    min: Option<Bound>,
    max: Option<Bound>,
    distinct: HllSketch,
    /// Dropped once it would hold more than [`MAX_FREQUENT`] values.
    frequent: Option<Counts>,
    digest: Option<TDigestMut>,
}

/// Replaces the bound in `slot` with `make()` when there is none or `better` says so.
fn keep(
    slot: &mut Option<Bound>,
    better: impl FnOnce(&Bound) -> bool,
    make: impl FnOnce() -> Bound,
) {
    if slot.as_ref().is_none_or(better) {
        *slot = Some(make());
    }
}

impl ColumnProfiler {
    pub fn new(column: &ValidColumn) -> ColumnProfiler {
        let t = column.data_type;
        let numeric = matches!(t, DataType::Int | DataType::Double | DataType::Date);
        let counts = match t {
            DataType::String => Counts::Texts(HashMap::new()),
            _ => Counts::Numbers(HashMap::new()),
        };
        ColumnProfiler {
            name: column.name.clone(),
            data_type: t,
            rows: 0,
            nulls: 0,
            min: None,
            max: None,
            distinct: HllSketch::new(LG_K, HllType::Hll8).expect("12 is a valid precision"),
            frequent: Some(counts),
            digest: numeric.then(|| TDigestMut::new(DIGEST_K).expect("100 is a valid size")),
        }
    }

    /// Counts `array` (this column's values in one batch) in.
    pub fn observe(&mut self, array: &dyn Array) {
        self.rows += array.len() as u64;
        self.nulls += array.null_count() as u64;
        match self.data_type {
            DataType::Int => {
                for v in array.as_primitive::<Int64Type>().iter().flatten() {
                    self.distinct.update(v);
                    keep(
                        &mut self.min,
                        |m| matches!(m, Bound::Int(m) if v < *m),
                        || Bound::Int(v),
                    );
                    keep(
                        &mut self.max,
                        |m| matches!(m, Bound::Int(m) if v > *m),
                        || Bound::Int(v),
                    );
                    self.number(v as f64, v as u64, || Bound::Int(v));
                }
            }
            DataType::Double => {
                for v in array.as_primitive::<Float64Type>().iter().flatten() {
                    self.distinct.update(v.to_bits());
                    if v.is_nan() {
                        continue;
                    }
                    let d = || Bound::Double(v);
                    keep(
                        &mut self.min,
                        |m| matches!(m, Bound::Double(m) if v < *m),
                        d,
                    );
                    keep(
                        &mut self.max,
                        |m| matches!(m, Bound::Double(m) if v > *m),
                        d,
                    );
                    self.number(v, v.to_bits(), d);
                }
            }
            DataType::Date => {
                for v in array.as_primitive::<Date32Type>().iter().flatten() {
                    self.distinct.update(v);
                    keep(
                        &mut self.min,
                        |m| matches!(m, Bound::Date(m) if v < *m),
                        || Bound::Date(v),
                    );
                    keep(
                        &mut self.max,
                        |m| matches!(m, Bound::Date(m) if v > *m),
                        || Bound::Date(v),
                    );
                    self.number(v as f64, v as i64 as u64, || Bound::Date(v));
                }
            }
            DataType::String => {
                for v in array.as_string::<i32>().iter().flatten() {
                    self.text(v);
                }
            }
            DataType::Boolean => {
                for v in array.as_boolean().iter().flatten() {
                    self.distinct.update(v);
                    keep(
                        &mut self.min,
                        |m| matches!(m, Bound::Bool(m) if !v & *m),
                        || Bound::Bool(v),
                    );
                    keep(
                        &mut self.max,
                        |m| matches!(m, Bound::Bool(m) if v & !*m),
                        || Bound::Bool(v),
                    );
                    self.number(f64::NAN, v as u64, || Bound::Bool(v));
                }
            }
        }
    }

    fn text(&mut self, v: &str) {
        self.distinct.update(v);
        let t = || Bound::Text(v.to_string());
        keep(
            &mut self.min,
            |m| matches!(m, Bound::Text(m) if v < m.as_str()),
            t,
        );
        keep(
            &mut self.max,
            |m| matches!(m, Bound::Text(m) if v > m.as_str()),
            t,
        );
        let Some(Counts::Texts(counts)) = &mut self.frequent else {
            return;
        };
        if let Some((_, n)) = counts.get_mut(v) {
            *n += 1;
        } else if counts.len() < MAX_FREQUENT {
            counts.insert(v.to_string(), (t(), 1));
        } else {
            self.frequent = None;
        }
    }

    /// A number (a boolean: `value` NaN, no digest) counted by `key`.
    fn number(&mut self, value: f64, key: u64, bound: impl FnOnce() -> Bound) {
        if let (Some(d), false) = (&mut self.digest, value.is_nan()) {
            d.update(value);
        }
        let Some(Counts::Numbers(counts)) = &mut self.frequent else {
            return;
        };
        if let Some((_, n)) = counts.get_mut(&key) {
            *n += 1;
        } else if counts.len() < MAX_FREQUENT {
            counts.insert(key, (bound(), 1));
        } else {
            self.frequent = None;
        }
    }

    pub fn finish(self) -> StoredColumn {
        let frequent = self.frequent.map(|counts| {
            let list: Vec<(Value, u64)> = match counts {
                Counts::Numbers(c) => c.into_values().map(|(b, n)| (b.json(), n)).collect(),
                Counts::Texts(c) => c.into_values().map(|(b, n)| (b.json(), n)).collect(),
            };
            by_count(list)
        });
        StoredColumn {
            name: self.name,
            data_type: self.data_type.as_str().to_string(),
            rows: self.rows,
            nulls: self.nulls,
            min: self.min.as_ref().map(Bound::json),
            max: self.max.as_ref().map(Bound::json),
            distinct: B64.encode(self.distinct.serialize()),
            frequent,
            digest: self.digest.map(|mut d| B64.encode(d.serialize())),
        }
    }
}

/// Most frequent first; ties by the value's text, so the order is the same every time.
fn by_count(mut list: Vec<(Value, u64)>) -> Vec<(Value, u64)> {
    list.sort_by(|a, b| {
        b.1.cmp(&a.1)
            .then_with(|| a.0.to_string().cmp(&b.0.to_string()))
    });
    list
}

/// Two JSON bounds of a column of type `data_type`, compared in the column's order.
fn json_cmp(data_type: &str, a: &Value, b: &Value) -> Ordering {
    match data_type {
        "int" | "double" => {
            let (x, y) = (a.as_f64().unwrap_or(0.0), b.as_f64().unwrap_or(0.0));
            x.total_cmp(&y)
        }
        "boolean" => a.as_bool().cmp(&b.as_bool()),
        _ => a.as_str().cmp(&b.as_str()),
    }
}

/// The merged sketches of a column over several uploads.
pub(super) struct MergedColumn {
    pub stored: StoredColumn,
    pub distinct: f64,
    pub digest: Option<TDigestMut>,
}

/// Merges the same column of several uploads' profiles (at least one).
pub(super) fn merge(columns: &[&StoredColumn]) -> Option<MergedColumn> {
    let first = columns.first()?;
    let mut union = HllUnion::new(LG_K).ok()?;
    let mut digest: Option<TDigestMut> = None;
    let mut frequent: Option<HashMap<String, (Value, u64)>> = Some(HashMap::new());
    let mut out = StoredColumn {
        name: first.name.clone(),
        data_type: first.data_type.clone(),
        rows: 0,
        nulls: 0,
        min: None,
        max: None,
        distinct: String::new(),
        frequent: None,
        digest: None,
    };
    let pick = |current: &mut Option<Value>, new: &Option<Value>, want: Ordering| {
        if let Some(n) = new {
            let better = current
                .as_ref()
                .is_none_or(|c| json_cmp(&first.data_type, n, c) == want);
            if better {
                *current = Some(n.clone());
            }
        }
    };
    for c in columns {
        out.rows += c.rows;
        out.nulls += c.nulls;
        pick(&mut out.min, &c.min, Ordering::Less);
        pick(&mut out.max, &c.max, Ordering::Greater);
        if let Some(sketch) = B64
            .decode(&c.distinct)
            .ok()
            .and_then(|b| HllSketch::deserialize(&b).ok())
        {
            union.update(&sketch);
        }
        if let Some(d) = c.digest.as_ref().and_then(|t| B64.decode(t).ok()) {
            if let Ok(d) = TDigestMut::deserialize(&d) {
                match &mut digest {
                    Some(m) => m.merge(&d),
                    None => digest = Some(d),
                }
            }
        }
        frequent = match (frequent, &c.frequent) {
            (Some(mut counts), Some(list)) => {
                for (value, n) in list {
                    counts
                        .entry(value.to_string())
                        .or_insert((value.clone(), 0))
                        .1 += n;
                }
                (counts.len() <= MAX_FREQUENT).then_some(counts)
            }
            _ => None,
        };
    }
    out.frequent = frequent.map(|counts| by_count(counts.into_values().collect()));
    Some(MergedColumn {
        distinct: union.estimate(),
        stored: out,
        digest,
    })
}
