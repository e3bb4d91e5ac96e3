//! Per-file column bounds kept in the manifest: each column's smallest and largest value and
//! its null count over the whole file, taken from the row group statistics the Parquet writer
//! has just computed (no extra pass over the rows). A query prunes whole files with them before
//! any is opened (`query::reading::table`).
//!
//! Kept as JSON text (`{"column": [min, max, nulls]}`, `null` for an unknown bound) so both
//! catalogs store them as they are, for integer, date, text and boolean columns. Not for
//! doubles: a comparison of doubles reaches the scan wrapped in `positive_zero` (signed zeros),
//! which pruning cannot see through, and Parquet's bounds of doubles leave NaN out. Text bounds
//! may be truncated prefixes (the writer keeps 64 bytes; a cut maximum is rounded up), so they
//! are bounds, not values.

use arrow::array::{Array, ArrayRef, AsArray};
use arrow::datatypes::{
    DataType as ArrowType, Date32Type, FieldRef, Int64Type, Schema as ArrowSchema,
};
use datafusion::common::ScalarValue;
use parquet::arrow::arrow_reader::statistics::StatisticsConverter;
use parquet::file::metadata::RowGroupMetaData;
use serde_json::{Map, Value};

/// One bound of a column, in an order that agrees with the column's own.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Bound {
    Int(i64),
    Text(String),
    Bool(bool),
}

impl Bound {
    fn json(self) -> Value {
        match self {
            Bound::Int(n) => Value::from(n),
            Bound::Text(s) => Value::from(s),
            Bound::Bool(b) => Value::from(b),
        }
    }
}

fn kept(t: &ArrowType) -> bool {
    matches!(
        t,
        ArrowType::Int64
            | ArrowType::Date32
            | ArrowType::Utf8
            | ArrowType::Utf8View
            | ArrowType::LargeUtf8
            | ArrowType::Boolean
    )
}

/// Row `i` of a statistics array; `None` when it is null or of a type not kept.
fn bound(array: &ArrayRef, i: usize) -> Option<Bound> {
    if array.is_null(i) {
        return None;
    }
    Some(match array.data_type() {
        ArrowType::Int64 => Bound::Int(array.as_primitive::<Int64Type>().value(i)),
        ArrowType::Date32 => Bound::Int(array.as_primitive::<Date32Type>().value(i).into()),
        ArrowType::Utf8 => Bound::Text(array.as_string::<i32>().value(i).to_string()),
        ArrowType::LargeUtf8 => Bound::Text(array.as_string::<i64>().value(i).to_string()),
        ArrowType::Utf8View => Bound::Text(array.as_string_view().value(i).to_string()),
        ArrowType::Boolean => Bound::Bool(array.as_boolean().value(i)),
        _ => return None,
    })
}

/// `[min, max, nulls]` of one column over `row_groups`; `None` when a row group with values
/// lacks bounds or a null count (nothing can be said of the file then).
fn column_bounds(
    converter: &StatisticsConverter<'_>,
    row_groups: &[RowGroupMetaData],
) -> Option<Value> {
    let mins = converter.row_group_mins(row_groups).ok()?;
    let maxes = converter.row_group_maxes(row_groups).ok()?;
    let nulls = converter.row_group_null_counts(row_groups).ok()?;
    let (mut low, mut high, mut null_total): (Option<Bound>, Option<Bound>, u64) = (None, None, 0);
    for (i, group) in row_groups.iter().enumerate() {
        if nulls.is_null(i) {
            return None;
        }
        null_total += nulls.value(i);
        match (bound(&mins, i), bound(&maxes, i)) {
            (Some(min), Some(max)) => {
                low = Some(low.map_or(min.clone(), |l| l.min(min)));
                high = Some(high.map_or(max.clone(), |h| h.max(max)));
            }
            // A row group of nulls only has no bounds, and needs none.
            _ if nulls.value(i) == group.num_rows() as u64 => {}
            _ => return None,
        }
    }
    let json = |b: Option<Bound>| b.map_or(Value::Null, Bound::json);
    Some(Value::from(vec![
        json(low),
        json(high),
        Value::from(null_total),
    ]))
}

/// The bounds of every kept column of a file of `schema` made of `row_groups`, as the manifest
/// stores them; `None` for a file without row groups.
pub fn encode(schema: &ArrowSchema, row_groups: &[RowGroupMetaData]) -> Option<String> {
    let descr = row_groups.first()?.schema_descr();
    let mut columns = Map::new();
    for field in schema.fields().iter().filter(|f| kept(f.data_type())) {
        let Ok(converter) = StatisticsConverter::try_new(field.name(), schema, descr) else {
            continue;
        };
        if let Some(bounds) = column_bounds(&converter, row_groups) {
            columns.insert(field.name().clone(), bounds);
        }
    }
    Some(Value::Object(columns).to_string())
}

/// One column's bounds over a file, typed as the column is read.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnBounds {
    /// Null when unknown.
    pub min: ScalarValue,
    pub max: ScalarValue,
    pub nulls: Option<u64>,
}

/// A file's bounds of each of `fields` (as they are read), in their order, from the
/// manifest's `stats`; `None` where they are not known (a file recorded before bounds were
/// kept, or a column without them).
pub fn decode(stats: &str, fields: &[FieldRef]) -> Vec<Option<ColumnBounds>> {
    let parsed: Option<Value> = serde_json::from_str(stats).ok();
    fields
        .iter()
        .map(|field| {
            let entry = parsed.as_ref()?.get(field.name())?.as_array()?;
            let [min, max, nulls] = entry.as_slice() else {
                return None;
            };
            Some(ColumnBounds {
                min: scalar(min, field.data_type())?,
                max: scalar(max, field.data_type())?,
                nulls: nulls.as_u64(),
            })
        })
        .collect()
}

/// `value` as a scalar of `data_type` (a null scalar for JSON null); `None` when it does not fit.
fn scalar(value: &Value, data_type: &ArrowType) -> Option<ScalarValue> {
    if value.is_null() {
        return ScalarValue::try_from(data_type).ok();
    }
    Some(match data_type {
        ArrowType::Int64 => ScalarValue::Int64(Some(value.as_i64()?)),
        ArrowType::Date32 => ScalarValue::Date32(Some(i32::try_from(value.as_i64()?).ok()?)),
        ArrowType::Utf8 => ScalarValue::Utf8(Some(value.as_str()?.to_string())),
        ArrowType::Utf8View => ScalarValue::Utf8View(Some(value.as_str()?.to_string())),
        ArrowType::LargeUtf8 => ScalarValue::LargeUtf8(Some(value.as_str()?.to_string())),
        ArrowType::Boolean => ScalarValue::Boolean(Some(value.as_bool()?)),
        _ => return None,
    })
}

#[cfg(test)]
#[path = "stats_tests.rs"]
mod tests;
