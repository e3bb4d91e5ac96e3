//! The lanes against what one writer would store: every row once, each partition's rows in
//! their order, files closed to make room included; a lane that fails is an error, not a hang.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow::array::{AsArray, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::Int64Type;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use serde_json::json;

use super::super::writer::PartitionedWriter;
use super::super::{arrow_schema, test_schema};
use super::BackgroundWriter;
use crate::schema::ValidSchema;
use crate::storage::Durability;

fn schema() -> ValidSchema {
    test_schema(
        "lanes",
        json!([
            {"name": "part", "data_type": "string", "allow_null": false, "partition_index": 0},
            {"name": "id", "data_type": "int", "allow_null": false}
        ]),
    )
}

/// Rows `from..to`, row `i` in partition `p{i % parts}`.
fn batch(schema: &ValidSchema, from: i64, to: i64, parts: i64) -> RecordBatch {
    let part: StringArray = (from..to)
        .map(|i| Some(format!("p{}", i % parts)))
        .collect();
    let id: Int64Array = (from..to).collect();
    RecordBatch::try_new(arrow_schema(schema), vec![Arc::new(part), Arc::new(id)]).unwrap()
}

#[test]
fn every_row_is_stored_once_in_order_within_its_partition() {
    let schema = schema();
    let dir = tempfile::tempdir().unwrap();
    let columns = schema.columns();
    let writer = PartitionedWriter::new(
        dir.path(),
        &arrow_schema(&schema),
        columns,
        Durability::Full,
    );
    let mut lanes = BackgroundWriter::start(writer.unwrap(), 2);
    // 100 partitions: more than a lane may keep open, so files are closed and new ones made.
    for start in (0..30_000).step_by(1_000) {
        lanes = lanes
            .write(batch(&schema, start, start + 1_000, 100))
            .unwrap();
    }
    let files = lanes.finish().unwrap();
    assert!(
        files.len() > 100,
        "files closed to make room: {}",
        files.len()
    );
    let mut names: Vec<_> = files.iter().map(|f| f.staged_path.clone()).collect();
    names.sort();
    names.dedup();
    assert_eq!(
        names.len(),
        files.len(),
        "each staged file name is used once"
    );
    let mut by_part: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    let mut order: Vec<(String, usize)> = files
        .iter()
        .map(|f| {
            let n = f.staged_path.file_stem().unwrap().to_str().unwrap();
            (f.partition_path.clone(), n.parse().unwrap())
        })
        .collect();
    // Files of one partition in the order they were made (a lane numbers its files upwards).
    order.sort();
    for (path, n) in order {
        let file = std::fs::File::open(dir.path().join(format!("{n}.parquet"))).unwrap();
        let rows = by_part.entry(path).or_default();
        for b in ParquetRecordBatchReaderBuilder::try_new(file)
            .unwrap()
            .build()
            .unwrap()
        {
            rows.extend(b.unwrap().column(0).as_primitive::<Int64Type>().values());
        }
    }
    assert_eq!(by_part.len(), 100);
    for (path, rows) in &by_part {
        let p: i64 = path.strip_prefix("part=p").unwrap().parse().unwrap();
        let expected: Vec<i64> = (0..30_000).filter(|i| i % 100 == p).collect();
        assert_eq!(rows, &expected, "{path}");
    }
    let counted: u64 = files.iter().map(|f| f.rows).sum();
    assert_eq!(counted, 30_000);
}

#[test]
fn a_lane_that_cannot_write_is_an_error_not_a_hang() {
    let schema = schema();
    let dir = tempfile::tempdir().unwrap();
    let staging = dir.path().join("staging");
    let columns = schema.columns();
    let writer =
        PartitionedWriter::new(&staging, &arrow_schema(&schema), columns, Durability::Full);
    let mut lanes = Some(BackgroundWriter::start(writer.unwrap(), 2));
    std::fs::remove_dir_all(&staging).unwrap();
    for start in (0..200_000).step_by(20_000) {
        // unwrap: put back after every successful write below.
        match lanes
            .take()
            .unwrap()
            .write(batch(&schema, start, start + 20_000, 4))
        {
            Ok(l) => lanes = Some(l),
            Err(_) => break,
        }
    }
    if let Some(lanes) = lanes {
        assert!(
            lanes.finish().is_err(),
            "no staging folder, yet every file was written"
        );
    }
}
