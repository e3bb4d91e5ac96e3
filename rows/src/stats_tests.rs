use std::sync::Arc;

use arrow::array::{BooleanArray, Date32Array, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{Field, Schema};
use parquet::arrow::ArrowWriter;

use super::*;

fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("id", ArrowType::Int64, true),
        Field::new("day", ArrowType::Date32, true),
        Field::new("name", ArrowType::Utf8, true),
        Field::new("ok", ArrowType::Boolean, true),
        Field::new("x", ArrowType::Float64, true),
        Field::new("empty", ArrowType::Int64, true),
    ]))
}

/// Two row groups: the second holds the extremes of `id`, and `name` is null in all of it.
fn row_groups() -> Vec<RowGroupMetaData> {
    let schema = schema();
    let batch = |ids: Vec<Option<i64>>, names: Vec<Option<&str>>| {
        let n = ids.len();
        RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int64Array::from(ids)),
                Arc::new(Date32Array::from(vec![Some(19_000); n])),
                Arc::new(StringArray::from(names)),
                Arc::new(BooleanArray::from(vec![Some(true); n])),
                Arc::new(Float64Array::from(vec![Some(1.5); n])),
                Arc::new(Int64Array::from(vec![None; n])),
            ],
        )
        .unwrap()
    };
    let mut writer = ArrowWriter::try_new(Vec::new(), schema.clone(), None).unwrap();
    writer
        .write(&batch(vec![Some(5), None], vec![Some("b"), Some("a")]))
        .unwrap();
    writer.flush().unwrap();
    writer
        .write(&batch(vec![Some(-3), Some(70)], vec![None, None]))
        .unwrap();
    writer.flush().unwrap();
    writer.flushed_row_groups().to_vec()
}

#[test]
fn bounds_span_every_row_group_and_count_every_null() {
    let groups = row_groups();
    assert_eq!(groups.len(), 2);
    let stats = encode(&schema(), &groups).unwrap();
    let parsed: Value = serde_json::from_str(&stats).unwrap();
    assert_eq!(parsed["id"], serde_json::json!([-3, 70, 1]));
    assert_eq!(parsed["day"], serde_json::json!([19_000, 19_000, 0]));
    assert_eq!(parsed["name"], serde_json::json!(["a", "b", 2]));
    assert_eq!(parsed["ok"], serde_json::json!([true, true, 0]));
    assert_eq!(parsed["empty"], serde_json::json!([null, null, 4]));
    assert!(parsed.get("x").is_none(), "doubles are not kept: {stats}");
    assert_eq!(encode(&schema(), &[]), None);
}

#[test]
fn decoded_bounds_take_the_type_the_column_is_read_as() {
    let stats = encode(&schema(), &row_groups()).unwrap();
    let fields: Vec<FieldRef> = vec![
        Arc::new(Field::new("name", ArrowType::Utf8View, true)),
        Arc::new(Field::new("day", ArrowType::Date32, true)),
        Arc::new(Field::new("empty", ArrowType::Int64, true)),
        Arc::new(Field::new("x", ArrowType::Float64, true)),
    ];
    let decoded = decode(&stats, &fields);
    assert_eq!(
        decoded[0],
        Some(ColumnBounds {
            min: ScalarValue::Utf8View(Some("a".into())),
            max: ScalarValue::Utf8View(Some("b".into())),
            nulls: Some(2),
        })
    );
    assert_eq!(
        decoded[1].as_ref().unwrap().max,
        ScalarValue::Date32(Some(19_000))
    );
    let empty = decoded[2].as_ref().unwrap();
    assert!(empty.min.is_null() && empty.max.is_null());
    assert_eq!(empty.nulls, Some(4));
    assert_eq!(decoded[3], None);
    // A file recorded without bounds (or with text that is not ours) bounds nothing.
    assert_eq!(decode("not json", &fields), vec![None, None, None, None]);
    // A bound that does not fit the column's type is no bound.
    assert_eq!(decode(r#"{"day": ["x", 1, 0]}"#, &fields[1..2]), vec![None]);
}
