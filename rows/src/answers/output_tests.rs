//! The column-typed writers against the way answers were written before them (a
//! `serde_json::Value` per cell, a map per row, a `String` per CSV field): same bytes on every
//! column type, nulls, odd strings and duplicated names.

use std::sync::Arc;

use arrow::array::{
    ArrayRef, BooleanArray, Date32Array, Decimal128Array, Float32Array, Float64Array, Int16Array,
    Int32Array, Int64Array, Int8Array, LargeStringArray, RecordBatch, StringArray, StringViewArray,
    TimestampMillisecondArray, UInt16Array, UInt32Array, UInt64Array, UInt8Array,
};
use arrow::datatypes::{DataType as ArrowType, Field, Schema};
use serde_json::{Map, Value};

use super::*;
use crate::answers::cells::cell;

/// The JSON writer as it was: a map of maps serialised at the end.
fn json_via_values(batches: &[RecordBatch]) -> Vec<u8> {
    let mut out = Map::new();
    let mut index = 0usize;
    for batch in batches {
        let schema = batch.schema();
        for i in 0..batch.num_rows() {
            let mut row = Map::with_capacity(batch.num_columns());
            for (field, column) in schema.fields().iter().zip(batch.columns()) {
                let value = match cell(column.as_ref(), i) {
                    Some(v) => v,
                    None if field.data_type() == &ArrowType::Boolean => Value::Object(Map::new()),
                    None => Value::Null,
                };
                row.insert(field.name().clone(), value);
            }
            out.insert(index.to_string(), Value::Object(row));
            index += 1;
        }
    }
    serde_json::to_vec(&Value::Object(out)).unwrap()
}

/// The CSV writer as it was: a `String` per field.
fn csv_via_strings(names: &[String], batches: &[RecordBatch]) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header = vec![String::new()];
    header.extend(names.iter().cloned());
    w.write_record(&header).unwrap();
    let mut index = 0u64;
    for batch in batches {
        for i in 0..batch.num_rows() {
            let mut record = vec![index.to_string()];
            for column in batch.columns() {
                record.push(match cell(column.as_ref(), i) {
                    None => String::new(),
                    Some(Value::String(s)) => s,
                    Some(v) => v.to_string(),
                });
            }
            w.write_record(&record).unwrap();
            index += 1;
        }
    }
    w.into_inner().unwrap()
}

const ODD: [Option<&str>; 8] = [
    Some("plain"),
    None,
    Some(""),
    Some("quote \" and, comma\nnew line\r\ttab"),
    Some("unicode é 漢字 🦀 \u{0}\u{1f}\u{7f}"),
    Some("back\\slash / </script>"),
    Some(" lead and trail "),
    Some("#hash"),
];

/// Every column type the engine answers with, eight rows each, nulls among them.
fn every_type() -> RecordBatch {
    let f = [
        Some(1.5),
        None,
        Some(-0.0),
        Some(f64::NAN),
        Some(f64::INFINITY),
        Some(1e300),
        Some(0.1 + 0.2),
        Some(-123456789.0),
    ];
    let i = [
        Some(0),
        None,
        Some(-1),
        Some(i64::MIN),
        Some(i64::MAX),
        Some(42),
        Some(7),
        Some(-9),
    ];
    let b = [
        Some(true),
        None,
        Some(false),
        Some(true),
        None,
        Some(false),
        None,
        Some(true),
    ];
    let cols: Vec<(&str, ArrayRef)> = vec![
        ("i64", Arc::new(Int64Array::from(i.to_vec()))),
        (
            "i32",
            Arc::new(Int32Array::from(i.map(|v| v.map(|v| v as i32)).to_vec())),
        ),
        (
            "i16",
            Arc::new(Int16Array::from(i.map(|v| v.map(|v| v as i16)).to_vec())),
        ),
        (
            "i8",
            Arc::new(Int8Array::from(i.map(|v| v.map(|v| v as i8)).to_vec())),
        ),
        (
            "u64",
            Arc::new(UInt64Array::from(i.map(|v| v.map(|v| v as u64)).to_vec())),
        ),
        (
            "u32",
            Arc::new(UInt32Array::from(i.map(|v| v.map(|v| v as u32)).to_vec())),
        ),
        (
            "u16",
            Arc::new(UInt16Array::from(i.map(|v| v.map(|v| v as u16)).to_vec())),
        ),
        (
            "u8",
            Arc::new(UInt8Array::from(i.map(|v| v.map(|v| v as u8)).to_vec())),
        ),
        ("f64", Arc::new(Float64Array::from(f.to_vec()))),
        (
            "f32",
            Arc::new(Float32Array::from(f.map(|v| v.map(|v| v as f32)).to_vec())),
        ),
        ("bool", Arc::new(BooleanArray::from(b.to_vec()))),
        ("utf8", Arc::new(StringArray::from(ODD.to_vec()))),
        ("large", Arc::new(LargeStringArray::from(ODD.to_vec()))),
        ("view", Arc::new(StringViewArray::from(ODD.to_vec()))),
        (
            "date",
            Arc::new(Date32Array::from(
                i.map(|v| v.map(|v| (v % 100_000) as i32)).to_vec(),
            )),
        ),
        (
            "decimal",
            Arc::new(
                Decimal128Array::from(i.map(|v| v.map(|v| v as i128)).to_vec())
                    .with_precision_and_scale(38, 3)
                    .unwrap(),
            ),
        ),
        (
            "stamp",
            Arc::new(TimestampMillisecondArray::from(
                i.map(|v| v.map(|v| v % 1_000_000_000_000)).to_vec(),
            )),
        ),
        (
            "name \"quoted\", odd",
            Arc::new(StringArray::from(ODD.to_vec())),
        ),
    ];
    let schema = Schema::new(
        cols.iter()
            .map(|(n, a)| Field::new(*n, a.data_type().clone(), true))
            .collect::<Vec<_>>(),
    );
    RecordBatch::try_new(Arc::new(schema), cols.into_iter().map(|(_, a)| a).collect()).unwrap()
}

fn names(batch: &RecordBatch) -> Vec<String> {
    batch
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect()
}

#[test]
fn json_is_byte_for_byte_what_the_value_writer_gave_on_every_type() {
    let batch = every_type();
    let new = to_json(std::slice::from_ref(&batch));
    assert_eq!(
        String::from_utf8(new).unwrap(),
        String::from_utf8(json_via_values(&[batch])).unwrap()
    );
}

#[test]
fn csv_is_byte_for_byte_what_the_string_writer_gave_on_every_type() {
    let batch = every_type();
    let new = to_csv(&names(&batch), std::slice::from_ref(&batch));
    let old = csv_via_strings(&names(&batch), &[batch]);
    assert_eq!(
        String::from_utf8(new).unwrap(),
        String::from_utf8(old).unwrap()
    );
}

#[test]
fn a_large_answer_written_on_two_threads_keeps_every_index_in_order() {
    let batch = every_type();
    let batches: Vec<RecordBatch> = (0..PARALLEL_ROWS / 8 + 10).map(|_| batch.clone()).collect();
    let new = to_json(&batches);
    assert_eq!(new, json_via_values(&batches));
    let parsed: Map<String, Value> = serde_json::from_slice(&new).unwrap();
    assert_eq!(parsed.len(), batches.len() * 8);
    assert!(parsed.keys().enumerate().all(|(i, k)| *k == i.to_string()));
}

#[test]
fn empty_answers_and_duplicated_names_match_the_value_writer() {
    assert_eq!(to_json(&[]), b"{}");
    let batch = every_type();
    assert_eq!(
        to_json(&[batch.slice(0, 0)]),
        json_via_values(&[batch.slice(0, 0)])
    );
    let dup = RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("a", ArrowType::Int64, true),
            Field::new("b", ArrowType::Utf8, true),
            Field::new("a", ArrowType::Boolean, true),
        ])),
        vec![
            Arc::new(Int64Array::from(vec![Some(1), None])),
            Arc::new(StringArray::from(vec![Some("x"), None])),
            Arc::new(BooleanArray::from(vec![None, Some(true)])),
        ],
    )
    .unwrap();
    assert_eq!(
        String::from_utf8(to_json(std::slice::from_ref(&dup))).unwrap(),
        String::from_utf8(json_via_values(&[dup])).unwrap()
    );
}

#[test]
fn dates_are_written_as_chrono_writes_them_across_its_range() {
    // Every 997th day from before year 0 to past 9999, and the edges of the fast path.
    let edges = [
        -719_529, -719_528, -719_162, 0, 2_932_896, 2_932_897, 2_932_898,
    ];
    let days: Vec<Option<i32>> = (-800_000..3_100_000)
        .step_by(997)
        .chain(edges)
        .map(Some)
        .collect();
    let schema = Schema::new(vec![Field::new("d", ArrowType::Date32, true)]);
    let batch =
        RecordBatch::try_new(Arc::new(schema), vec![Arc::new(Date32Array::from(days))]).unwrap();
    let names = names(&batch);
    let new = to_csv(&names, std::slice::from_ref(&batch));
    assert_eq!(new, csv_via_strings(&names, std::slice::from_ref(&batch)));
    assert!(String::from_utf8_lossy(&new).contains(",9999-12-31\n"));
    assert!(String::from_utf8_lossy(&new).contains(",+10000-01-01\n"));
    let json = to_json(std::slice::from_ref(&batch));
    assert_eq!(json, json_via_values(&[batch]));
}

#[test]
fn header_names_are_quoted_as_the_csv_writer_quotes_them() {
    let names: Vec<String> = ["plain", "com,ma", "quo\"te", "new\nline", "cr\r", ""]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let mut new = Vec::new();
    csv_header(&names, &mut new);
    let mut old = csv::Writer::from_writer(Vec::new());
    let mut record = vec![String::new()];
    record.extend(names.iter().cloned());
    old.write_record(&record).unwrap();
    assert_eq!(new, old.into_inner().unwrap());
    let mut none = Vec::new();
    csv_header(&[], &mut none);
    let mut old = csv::Writer::from_writer(Vec::new());
    old.write_record([""]).unwrap();
    assert_eq!(none, old.into_inner().unwrap());
}

#[test]
fn fields_are_quoted_in_place_as_the_csv_writer_quotes_them() {
    let odd = [
        "\"",
        "\"\"",
        "a\"b",
        "\"start",
        "end\"",
        ",",
        "a,b",
        "\n",
        "\r\n",
        "x\"y\"z,\n",
        "no specials",
        "",
        "🦀\"🦀",
        "\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"",
    ];
    let column: ArrayRef = Arc::new(StringArray::from(odd.to_vec()));
    let schema = Schema::new(vec![
        Field::new("s", ArrowType::Utf8, false),
        Field::new("t", ArrowType::Utf8, false),
    ]);
    let batch = RecordBatch::try_new(Arc::new(schema), vec![column.clone(), column]).unwrap();
    let names = names(&batch);
    let new = to_csv(&names, std::slice::from_ref(&batch));
    assert_eq!(
        String::from_utf8(new).unwrap(),
        String::from_utf8(csv_via_strings(&names, &[batch])).unwrap()
    );
}
