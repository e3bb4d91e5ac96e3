//! `COPY ... TO STDOUT (FORMAT binary)` rows written straight from typed Arrow columns: what the
//! ADBC driver and DuckDB's `postgres` extension read every result with. The library's encoder
//! dispatches on the column's type and clones the field's type for every value; here each
//! column is matched once a batch, and each row is one slice of a single buffer. Columns of any
//! other type (decimals, nanosecond timestamps, times, intervals, binary...) leave the whole copy
//! to the library.
//! The bytes are the library's (a test compares them).

use datafusion::arrow::array::{
    Array, AsArray, BooleanArray, Date32Array, Float32Array, Float64Array, Int16Array, Int32Array,
    Int64Array, LargeStringArray, RecordBatch, StringArray, StringViewArray,
    TimestampMicrosecondArray, TimestampMillisecondArray, TimestampSecondArray,
};
use datafusion::arrow::datatypes::{DataType, Schema, TimeUnit};
use datafusion_postgres::pgwire::messages::copy::CopyData;

/// Days from 1970-01-01 to PostgreSQL's epoch, 2000-01-01.
const EPOCH_DAYS: i32 = 10_957;
/// The same in microseconds.
const EPOCH_MICROS: i64 = EPOCH_DAYS as i64 * 86_400_000_000;

/// A column as its values are written: its array for nulls, and the values typed once a batch.
struct Column<'a> {
    array: &'a dyn Array,
    values: Values<'a>,
}

/// The typed values of a column (text and timestamps too: no type match per value).
enum Values<'a> {
    Bool(&'a BooleanArray),
    I16(&'a Int16Array),
    I32(&'a Int32Array),
    I64(&'a Int64Array),
    F32(&'a Float32Array),
    F64(&'a Float64Array),
    Utf8(&'a StringArray),
    LargeUtf8(&'a LargeStringArray),
    Utf8View(&'a StringViewArray),
    Date(&'a Date32Array),
    Seconds(&'a TimestampSecondArray),
    Millis(&'a TimestampMillisecondArray),
    Micros(&'a TimestampMicrosecondArray),
}

impl<'a> Column<'a> {
    fn of(array: &'a dyn Array) -> Option<Column<'a>> {
        let values = match array.data_type() {
            DataType::Boolean => Values::Bool(array.as_boolean()),
            DataType::Int16 => Values::I16(array.as_primitive()),
            DataType::Int32 => Values::I32(array.as_primitive()),
            DataType::Int64 => Values::I64(array.as_primitive()),
            DataType::Float32 => Values::F32(array.as_primitive()),
            DataType::Float64 => Values::F64(array.as_primitive()),
            DataType::Utf8 => Values::Utf8(array.as_string()),
            DataType::LargeUtf8 => Values::LargeUtf8(array.as_string()),
            DataType::Utf8View => Values::Utf8View(array.as_string_view()),
            DataType::Date32 => Values::Date(array.as_primitive()),
            DataType::Timestamp(TimeUnit::Second, _) => Values::Seconds(array.as_primitive()),
            DataType::Timestamp(TimeUnit::Millisecond, _) => Values::Millis(array.as_primitive()),
            DataType::Timestamp(TimeUnit::Microsecond, _) => Values::Micros(array.as_primitive()),
            // Nanoseconds are rounded to microseconds by the library's conversion: left to it.
            _ => return None,
        };
        Some(Column { array, values })
    }

    /// Value `row`'s length and bytes, or -1 for a null.
    fn write(&self, row: usize, out: &mut Vec<u8>) {
        if self.array.is_null(row) {
            out.extend_from_slice(&(-1i32).to_be_bytes());
            return;
        }
        let mut value = |bytes: &[u8]| {
            out.extend_from_slice(&(bytes.len() as i32).to_be_bytes());
            out.extend_from_slice(bytes);
        };
        // Timestamps as microseconds since PostgreSQL's epoch.
        let since_epoch = |micros: i64| (micros - EPOCH_MICROS).to_be_bytes();
        match &self.values {
            Values::Bool(a) => value(&[u8::from(a.value(row))]),
            Values::I16(a) => value(&a.value(row).to_be_bytes()),
            Values::I32(a) => value(&a.value(row).to_be_bytes()),
            Values::I64(a) => value(&a.value(row).to_be_bytes()),
            Values::F32(a) => value(&a.value(row).to_bits().to_be_bytes()),
            Values::F64(a) => value(&a.value(row).to_bits().to_be_bytes()),
            Values::Utf8(a) => value(a.value(row).as_bytes()),
            Values::LargeUtf8(a) => value(a.value(row).as_bytes()),
            Values::Utf8View(a) => value(a.value(row).as_bytes()),
            Values::Date(a) => value(&(a.value(row) - EPOCH_DAYS).to_be_bytes()),
            Values::Seconds(a) => value(&since_epoch(a.value(row).saturating_mul(1_000_000))),
            Values::Millis(a) => value(&since_epoch(a.value(row).saturating_mul(1_000))),
            Values::Micros(a) => value(&since_epoch(a.value(row))),
        }
    }
}

/// One CopyData a row (the first with the PGCOPY header), or None when a column of `schema` is
/// not of a type written here. A batch's rows are written into one buffer and each message is a
/// slice of it: a buffer of its own for every row (an allocation and a free for each of 100,000
/// rows) was about a seventh of the server's samples in a profile of an ADBC read.
pub(crate) fn rows(schema: &Schema, batches: &[RecordBatch]) -> Option<Vec<CopyData>> {
    let fields = schema.fields().len();
    let mut out = Vec::with_capacity(batches.iter().map(|b| b.num_rows()).sum());
    let mut header = true;
    let mut ends = Vec::new();
    for batch in batches {
        let columns = batch
            .columns()
            .iter()
            .map(|c| Column::of(c.as_ref()))
            .collect::<Option<Vec<_>>>()?;
        // A guess (the length words alone), grown as needed.
        let mut buffer = Vec::with_capacity(batch.num_rows() * (2 + fields * 8) + 19);
        ends.clear();
        for row in 0..batch.num_rows() {
            if header {
                buffer.extend_from_slice(b"PGCOPY\n\xff\r\n\0");
                buffer.extend_from_slice(&[0; 8]);
                header = false;
            }
            buffer.extend_from_slice(&(fields as i16).to_be_bytes());
            for column in &columns {
                column.write(row, &mut buffer);
            }
            ends.push(buffer.len());
        }
        let buffer = bytes::Bytes::from(buffer);
        let mut start = 0;
        for &end in &ends {
            out.push(CopyData::new(buffer.slice(start..end)));
            start = end;
        }
    }
    // Columns checked even when no batch holds a row.
    for field in schema.fields() {
        let empty = datafusion::arrow::array::new_empty_array(field.data_type());
        Column::of(empty.as_ref())?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use datafusion::arrow::array::{
        ArrayRef, BooleanArray, Date32Array, Float32Array, Float64Array, Int16Array, Int32Array,
        Int64Array, LargeStringArray, StringArray, StringViewArray, TimestampMicrosecondArray,
        TimestampMillisecondArray, TimestampNanosecondArray, TimestampSecondArray,
    };
    use datafusion::arrow::datatypes::{Field, Schema};
    use datafusion_postgres::arrow_pg::datatypes::arrow_schema_to_pg_fields;
    use datafusion_postgres::arrow_pg::encoder::encode_value;
    use datafusion_postgres::pgwire::api::portal::Format;
    use datafusion_postgres::pgwire::api::results::CopyEncoder;

    use super::*;

    /// The library's rows for the same batch, as `copy_out` writes them without this module.
    fn library(schema: &Schema, batch: &RecordBatch) -> Vec<u8> {
        let fields =
            Arc::new(arrow_schema_to_pg_fields(schema, &Format::UnifiedText, None).unwrap());
        let mut encoder = CopyEncoder::new_binary(fields.clone());
        let mut bytes = Vec::new();
        for row in 0..batch.num_rows() {
            for ((column, field), pg) in batch
                .columns()
                .iter()
                .zip(schema.fields())
                .zip(fields.iter())
            {
                encode_value(&mut encoder, column, row, field, pg).unwrap();
            }
            bytes.extend_from_slice(&encoder.take_copy().data);
        }
        bytes
    }

    #[test]
    fn rows_are_the_librarys_bytes() {
        let columns: Vec<ArrayRef> = vec![
            Arc::new(BooleanArray::from(vec![Some(true), None, Some(false)])),
            Arc::new(Int16Array::from(vec![Some(-3), Some(i16::MAX), None])),
            Arc::new(Int32Array::from(vec![None, Some(7), Some(i32::MIN)])),
            Arc::new(Int64Array::from(vec![Some(1), Some(-1), Some(i64::MAX)])),
            Arc::new(Float32Array::from(vec![Some(1.5), Some(f32::NAN), None])),
            Arc::new(Float64Array::from(vec![
                Some(-0.0),
                Some(f64::INFINITY),
                Some(2.25),
            ])),
            Arc::new(StringArray::from(vec![Some("north"), None, Some("ünï")])),
            Arc::new(LargeStringArray::from(vec![Some(""), Some("b"), None])),
            Arc::new(StringViewArray::from(vec![
                Some("a string longer than twelve"),
                None,
                Some("x"),
            ])),
            Arc::new(Date32Array::from(vec![
                Some(0),
                Some(-800_000),
                Some(19_000),
            ])),
            Arc::new(TimestampMicrosecondArray::from(vec![
                Some(0),
                Some(-1),
                None,
            ])),
            Arc::new(TimestampMillisecondArray::from(vec![
                Some(1_700_000_000_123),
                None,
                Some(-5),
            ])),
            Arc::new(TimestampSecondArray::from(vec![
                Some(86_400),
                Some(-86_401),
                None,
            ])),
        ];
        let fields: Vec<Field> = columns
            .iter()
            .enumerate()
            .map(|(n, c)| Field::new(format!("c{n}"), c.data_type().clone(), true))
            .collect();
        let schema = Schema::new(fields);
        let batch = RecordBatch::try_new(Arc::new(schema.clone()), columns).unwrap();
        let ours: Vec<u8> = rows(&schema, std::slice::from_ref(&batch))
            .unwrap()
            .iter()
            .flat_map(|c| c.data.to_vec())
            .collect();
        assert_eq!(ours, library(&schema, &batch));
    }

    #[test]
    fn other_types_are_left_to_the_library() {
        for data_type in [
            DataType::Decimal128(10, 2),
            DataType::Timestamp(TimeUnit::Nanosecond, None),
        ] {
            let schema = Schema::new(vec![Field::new("d", data_type, true)]);
            assert!(rows(&schema, &[]).is_none());
        }
        // Nanoseconds are rounded by the library: a batch of them is its to write.
        let schema = Schema::new(vec![Field::new(
            "t",
            DataType::Timestamp(TimeUnit::Nanosecond, None),
            true,
        )]);
        let batch = RecordBatch::try_new(
            Arc::new(schema.clone()),
            vec![Arc::new(TimestampNanosecondArray::from(vec![Some(1_999)]))],
        )
        .unwrap();
        assert!(rows(&schema, &[batch]).is_none());
    }
}
