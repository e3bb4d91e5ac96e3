//! One answer column's cells written straight into an output buffer: the column's type is matched
//! once per batch, not once per cell, and no value is built on the way (no `serde_json::Value`,
//! no `String` per cell). Numbers and strings are written by serde_json's own serializer, so the
//! bytes are exactly what serialising a `Value` gave (`output::tests` compares the two).

use arrow::array::{
    Array, AsArray, BooleanArray, GenericStringArray, PrimitiveArray, StringArray, StringViewArray,
};
use arrow::datatypes::{
    DataType as ArrowType, Date32Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type,
    Int8Type, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use arrow::util::display::{ArrayFormatter, FormatOptions};
use serde_json::Value;

use crate::ingest::{date32_to_string, EPOCH_DAYS_FROM_CE};

/// A column, typed once.
pub(super) struct Cells<'a> {
    /// The validity bitmap, taken once: asking the array per cell goes through its vtable.
    nulls: Option<&'a arrow::buffer::NullBuffer>,
    typed: Typed<'a>,
}

enum Typed<'a> {
    I64(&'a PrimitiveArray<Int64Type>),
    I32(&'a PrimitiveArray<Int32Type>),
    I16(&'a PrimitiveArray<Int16Type>),
    I8(&'a PrimitiveArray<Int8Type>),
    U64(&'a PrimitiveArray<UInt64Type>),
    U32(&'a PrimitiveArray<UInt32Type>),
    U16(&'a PrimitiveArray<UInt16Type>),
    U8(&'a PrimitiveArray<UInt8Type>),
    F64(&'a PrimitiveArray<Float64Type>),
    F32(&'a PrimitiveArray<Float32Type>),
    Bool(&'a BooleanArray),
    Utf8(&'a StringArray),
    LargeUtf8(&'a GenericStringArray<i64>),
    View(&'a StringViewArray),
    Date(&'a PrimitiveArray<Date32Type>),
    /// Anything else (decimals, timestamps...): through the general cell conversion.
    Other(&'a dyn Array),
}

/// What one cell is, for the writers: absent (null, or a float that is not finite), a number or
/// boolean written as its JSON text, or a string.
pub(super) enum Written {
    Null,
    Bare,
    Text,
}

// unwrap (below): serde_json writing a number or a string into a Vec cannot fail.
fn json<T: serde::Serialize + ?Sized>(out: &mut Vec<u8>, v: &T) {
    serde_json::to_writer(&mut *out, v).unwrap();
}

impl<'a> Cells<'a> {
    pub(super) fn new(array: &'a dyn Array) -> Cells<'a> {
        let typed = match array.data_type() {
            ArrowType::Int64 => Typed::I64(array.as_primitive()),
            ArrowType::Int32 => Typed::I32(array.as_primitive()),
            ArrowType::Int16 => Typed::I16(array.as_primitive()),
            ArrowType::Int8 => Typed::I8(array.as_primitive()),
            ArrowType::UInt64 => Typed::U64(array.as_primitive()),
            ArrowType::UInt32 => Typed::U32(array.as_primitive()),
            ArrowType::UInt16 => Typed::U16(array.as_primitive()),
            ArrowType::UInt8 => Typed::U8(array.as_primitive()),
            ArrowType::Float64 => Typed::F64(array.as_primitive()),
            ArrowType::Float32 => Typed::F32(array.as_primitive()),
            ArrowType::Boolean => Typed::Bool(array.as_boolean()),
            ArrowType::Utf8 => Typed::Utf8(array.as_string::<i32>()),
            ArrowType::LargeUtf8 => Typed::LargeUtf8(array.as_string::<i64>()),
            ArrowType::Utf8View => Typed::View(array.as_string_view()),
            ArrowType::Date32 => Typed::Date(array.as_primitive()),
            _ => Typed::Other(array),
        };
        // The bitmap `Array::is_null` reads.
        Cells {
            nulls: array.nulls(),
            typed,
        }
    }

    /// Cell `i` as a JSON value: its JSON text appended to `out` (a string quoted and escaped)
    /// unless it is null.
    pub(super) fn json(&self, i: usize, out: &mut Vec<u8>) -> Written {
        self.write(i, out, true)
    }

    /// Cell `i` as CSV field text, unquoted (the CSV writer quotes): a string's own bytes.
    pub(super) fn text(&self, i: usize, out: &mut Vec<u8>) -> Written {
        self.write(i, out, false)
    }

    fn write(&self, i: usize, out: &mut Vec<u8>, quoted: bool) -> Written {
        let float = |out: &mut Vec<u8>, f: f64| {
            if f.is_finite() {
                json(out, &f);
                Written::Bare
            } else {
                Written::Null
            }
        };
        let text = |out: &mut Vec<u8>, s: &str| {
            if quoted {
                json(out, s);
            } else {
                out.extend_from_slice(s.as_bytes());
            }
            Written::Text
        };
        macro_rules! bare {
            ($a:expr) => {{
                json(out, &$a.value(i));
                Written::Bare
            }};
        }
        if self.nulls.is_some_and(|n| n.is_null(i)) {
            return Written::Null;
        }
        match &self.typed {
            Typed::I64(a) => bare!(a),
            Typed::I32(a) => bare!(a),
            Typed::I16(a) => bare!(a),
            Typed::I8(a) => bare!(a),
            Typed::U64(a) => bare!(a),
            Typed::U32(a) => bare!(a),
            Typed::U16(a) => bare!(a),
            Typed::U8(a) => bare!(a),
            Typed::Bool(a) => bare!(a),
            Typed::F64(a) => float(out, a.value(i)),
            Typed::F32(a) => float(out, a.value(i) as f64),
            Typed::Utf8(a) => text(out, a.value(i)),
            Typed::LargeUtf8(a) => text(out, a.value(i)),
            Typed::View(a) => text(out, a.value(i)),
            Typed::Date(a) => {
                // A date's text never needs escaping: quoted by hand.
                if quoted {
                    out.push(b'"');
                }
                push_date(out, a.value(i));
                if quoted {
                    out.push(b'"');
                }
                Written::Text
            }
            Typed::Other(a) => match cell(*a, i) {
                None => Written::Null,
                Some(Value::String(s)) => text(out, &s),
                Some(v) => {
                    json(out, &v);
                    Written::Bare
                }
            },
        }
    }
}

/// `YYYY-MM-DD` of days since the epoch, written digit by digit: chrono's `format` parses its
/// format string on every call, which was a quarter of a CSV export's time. Years outside
/// 0..=9999 (which chrono writes with a sign) go through chrono.
fn push_date(out: &mut Vec<u8>, days: i32) {
    use chrono::Datelike;
    let date =
        chrono::NaiveDate::from_num_days_from_ce_opt(days.saturating_add(EPOCH_DAYS_FROM_CE));
    match date {
        Some(d) if (0..=9999).contains(&d.year()) => {
            let (y, m, day) = (d.year() as u32, d.month(), d.day());
            let digit = |n: u32| b'0' + n as u8;
            out.extend_from_slice(&[
                digit(y / 1000),
                digit(y / 100 % 10),
                digit(y / 10 % 10),
                digit(y % 10),
                b'-',
                digit(m / 10),
                digit(m % 10),
                b'-',
                digit(day / 10),
                digit(day % 10),
            ]);
        }
        _ => out.extend_from_slice(date32_to_string(days).as_bytes()),
    }
}

/// One cell as JSON. `None` means "null" for the caller to render (JSON: `null`, or `{}` for booleans).
pub(super) fn cell(array: &dyn Array, i: usize) -> Option<Value> {
    if array.is_null(i) {
        return None;
    }
    let float = |f: f64| {
        if f.is_finite() {
            serde_json::Number::from_f64(f).map(Value::Number)
        } else {
            None
        }
    };
    Some(match array.data_type() {
        ArrowType::Int64 => Value::from(array.as_primitive::<Int64Type>().value(i)),
        ArrowType::Int32 => Value::from(array.as_primitive::<Int32Type>().value(i)),
        ArrowType::Int16 => Value::from(array.as_primitive::<Int16Type>().value(i)),
        ArrowType::Int8 => Value::from(array.as_primitive::<Int8Type>().value(i)),
        ArrowType::UInt64 => Value::from(array.as_primitive::<UInt64Type>().value(i)),
        ArrowType::UInt32 => Value::from(array.as_primitive::<UInt32Type>().value(i)),
        ArrowType::UInt16 => Value::from(array.as_primitive::<UInt16Type>().value(i)),
        ArrowType::UInt8 => Value::from(array.as_primitive::<UInt8Type>().value(i)),
        ArrowType::Float64 => return float(array.as_primitive::<Float64Type>().value(i)),
        ArrowType::Float32 => return float(array.as_primitive::<Float32Type>().value(i) as f64),
        ArrowType::Boolean => Value::from(array.as_boolean().value(i)),
        ArrowType::Utf8 => Value::from(array.as_string::<i32>().value(i)),
        ArrowType::LargeUtf8 => Value::from(array.as_string::<i64>().value(i)),
        ArrowType::Utf8View => Value::from(array.as_string_view().value(i)),
        ArrowType::Date32 => Value::from(date32_to_string(
            array.as_primitive::<Date32Type>().value(i),
        )),
        _ => {
            let options = FormatOptions::default();
            let text = ArrayFormatter::try_new(array, &options)
                .ok()?
                .value(i)
                .to_string();
            if let Ok(n) = text.parse::<f64>() {
                return float(n);
            }
            Value::from(text)
        }
    })
}
