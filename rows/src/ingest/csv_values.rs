//! CSV fields into typed Arrow builders: each field parsed once, straight into its column's
//! builder; a field that does not parse becomes a null and a problem with its row number.

use std::sync::Arc;

use arrow::array::{
    ArrayRef, BooleanBuilder, Date32Builder, Float64Builder, Int64Builder, StringBuilder,
};

use super::csv_records::{is_null_text, number_shape};
use super::date_to_days;
use super::problems::{shown, Place, Problems};
use crate::schema::{DataType, DateFormat, ValidColumn};

pub(super) enum Builder {
    Int(Int64Builder),
    Double(Float64Builder),
    Bool(BooleanBuilder),
    Date(Date32Builder, DateFormat),
    Str(StringBuilder),
}

impl Builder {
    pub(super) fn new(column: &ValidColumn, n: usize) -> Builder {
        match column.data_type {
            DataType::Int => Builder::Int(Int64Builder::with_capacity(n)),
            DataType::Double => Builder::Double(Float64Builder::with_capacity(n)),
            DataType::Boolean => Builder::Bool(BooleanBuilder::with_capacity(n)),
            // unwrap_or: schema validation guarantees a format on every date column.
            DataType::Date => Builder::Date(
                Date32Builder::with_capacity(n),
                column.format.unwrap_or(DateFormat::ALL[3]),
            ),
            DataType::String => Builder::Str(StringBuilder::with_capacity(n, n * 16)),
        }
    }

    pub(super) fn append_null(&mut self) {
        match self {
            Builder::Int(b) => b.append_null(),
            Builder::Double(b) => b.append_null(),
            Builder::Bool(b) => b.append_null(),
            Builder::Date(b, _) => b.append_null(),
            Builder::Str(b) => b.append_null(),
        }
    }

    /// Appends a non-null value (`text`: the field as text, `None` when it is not UTF-8);
    /// `false` (and a null appended) when it does not parse.
    fn append(&mut self, raw: &[u8], text: Option<&str>) -> bool {
        let ok = match self {
            Builder::Int(b) => parse_int(raw).map(|v| b.append_value(v)).is_some(),
            // The shape first, then one parse (`looks_numeric` would parse twice).
            Builder::Double(b) => text
                .filter(|s| number_shape(s))
                .and_then(|s| s.parse::<f64>().ok())
                .map(|v| b.append_value(v))
                .is_some(),
            Builder::Bool(b) => {
                if raw.eq_ignore_ascii_case(b"true") {
                    b.append_value(true);
                    true
                } else if raw.eq_ignore_ascii_case(b"false") {
                    b.append_value(false);
                    true
                } else {
                    false
                }
            }
            Builder::Date(b, format) => text
                .and_then(|s| format.parse_value(s))
                .map(|d| b.append_value(date_to_days(d)))
                .is_some(),
            Builder::Str(b) => text.map(|s| b.append_value(s)).is_some(),
        };
        if !ok {
            self.append_null();
        }
        ok
    }

    pub(super) fn finish(&mut self) -> ArrayRef {
        match self {
            Builder::Int(b) => Arc::new(b.finish()),
            Builder::Double(b) => Arc::new(b.finish()),
            Builder::Bool(b) => Arc::new(b.finish()),
            Builder::Date(b, _) => Arc::new(b.finish()),
            Builder::Str(b) => Arc::new(b.finish()),
        }
    }
}

/// A 64-bit integer: optional sign and digits; `3.0` (how pandas writes an int column that has
/// nulls) is accepted as 3, `3.5` is not.
fn parse_int(raw: &[u8]) -> Option<i64> {
    let (negative, digits) = match raw.first()? {
        b'-' => (true, &raw[1..]),
        b'+' => (false, &raw[1..]),
        _ => (false, raw),
    };
    let (whole, fraction) = match digits.iter().position(|b| *b == b'.') {
        Some(i) => (&digits[..i], &digits[i + 1..]),
        None => (digits, &digits[..0]),
    };
    if whole.is_empty() || !fraction.iter().all(|b| *b == b'0') {
        return None;
    }
    let mut value: i64 = 0;
    for b in whole {
        if !b.is_ascii_digit() {
            return None;
        }
        let d = (b - b'0') as i64;
        value = value.checked_mul(10)?;
        value = if negative {
            value.checked_sub(d)?
        } else {
            value.checked_add(d)?
        };
    }
    Some(value)
}

pub(super) fn parse_field(
    builder: &mut Builder,
    column: &ValidColumn,
    raw: &[u8],
    text: Option<&str>,
    row: u64,
    problems: &mut Problems,
) {
    if text.is_some_and(is_null_text) {
        builder.append_null();
        if !column.allow_null {
            let place = Place::row(row, &column.name, "null", text.map(str::to_string));
            problems.add_at(place, || {
                format!(
                    "Column [{}] does not allow null values: row {row} has {}",
                    column.name,
                    shown(raw)
                )
            });
        }
    } else if !builder.append(raw, text) {
        let value = String::from_utf8_lossy(raw).into_owned();
        if text.is_none() {
            let place = Place::row(row, &column.name, "encoding", Some(value));
            problems.add_at(place, || {
                super::file_problems::value_not_utf8(&column.name, raw, row)
            });
            return;
        }
        problems.add_at(Place::row(row, &column.name, "type", Some(value)), || {
            let expected = match column.format {
                Some(f) => format!("date in format {}", f.as_str()),
                None => column.data_type.as_str().to_string(),
            };
            format!(
                "Column [{}] has an incorrect data type. Expected {expected}, received {} in row {row}",
                column.name,
                shown(raw)
            )
        });
    }
}

#[cfg(test)]
mod tests {
    use super::parse_int;

    #[test]
    fn integers_parse_strictly_with_pandas_style_zero_fractions() {
        assert_eq!(parse_int(b"42"), Some(42));
        assert_eq!(parse_int(b"-7"), Some(-7));
        assert_eq!(parse_int(b"+7"), Some(7));
        assert_eq!(parse_int(b"3.0"), Some(3));
        assert_eq!(parse_int(b"-9223372036854775808"), Some(i64::MIN));
        for bad in [
            &b"3.5"[..],
            b"9223372036854775808",
            b"1e3",
            b"",
            b"-",
            b"12a",
            b" 1",
            b".0",
        ] {
            assert_eq!(parse_int(bad), None, "{}", String::from_utf8_lossy(bad));
        }
    }
}
