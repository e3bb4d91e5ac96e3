//! Dictionary encoding by what a file's first rows hold: off for mostly distinct text, on for
//! repeated text; the values read back the same either way.

use std::sync::Arc;

use arrow::array::{AsArray, RecordBatch, StringArray};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::file::reader::{FileReader, SerializedFileReader};
use serde_json::json;

use super::super::{arrow_schema, test_schema};
use super::PartitionedWriter;
use crate::storage::Durability;

/// Text columns' values, column by column.
type Columns = Vec<Vec<Option<String>>>;

/// Writes `rows` rows (text `unique` distinct per row, `kind` one of three, `sparse` mostly
/// null) and returns, per column, whether its first column chunk has a dictionary page, and
/// the values read back.
fn write(rows: usize) -> (Vec<bool>, Columns, Columns) {
    let schema = test_schema(
        "dict",
        json!([
            {"name": "unique", "data_type": "string", "allow_null": true},
            {"name": "kind", "data_type": "string", "allow_null": true},
            {"name": "sparse", "data_type": "string", "allow_null": true}
        ]),
    );
    let unique: StringArray = (0..rows)
        .map(|i| Some(format!("note {i}, batch")))
        .collect();
    let kind: StringArray = (0..rows).map(|i| Some(["a", "b", "c"][i % 3])).collect();
    let sparse: StringArray = (0..rows)
        .map(|i| (i % 100 == 0).then(|| format!("s{i}")))
        .collect();
    let written: Columns = [&unique, &kind, &sparse]
        .iter()
        .map(|a| a.iter().map(|v| v.map(str::to_string)).collect())
        .collect();
    let batch = RecordBatch::try_new(
        arrow_schema(&schema),
        vec![Arc::new(unique), Arc::new(kind), Arc::new(sparse)],
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut writer = PartitionedWriter::new(
        dir.path(),
        &arrow_schema(&schema),
        schema.columns(),
        Durability::Full,
    )
    .unwrap();
    writer.write(&batch).unwrap();
    let files = writer.finish().unwrap();
    assert_eq!(files.len(), 1);
    let path = &files[0].staged_path;
    let reader = SerializedFileReader::new(std::fs::File::open(path).unwrap()).unwrap();
    let group = reader.metadata().row_group(0);
    let dictionaries = (0..3)
        .map(|c| group.column(c).dictionary_page_offset().is_some())
        .collect();
    let mut read: Columns = vec![Vec::new(); 3];
    let batches = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(path).unwrap())
        .unwrap()
        .build()
        .unwrap();
    for b in batches {
        let b = b.unwrap();
        for (c, out) in read.iter_mut().enumerate() {
            out.extend(
                b.column(c)
                    .as_string::<i32>()
                    .iter()
                    .map(|v| v.map(str::to_string)),
            );
        }
    }
    (dictionaries, written, read)
}

#[test]
fn mostly_distinct_text_is_written_without_a_dictionary() {
    let (dictionaries, written, read) = write(10_000);
    // `sparse`: 100 values, all distinct, among nulls: also without.
    assert_eq!(dictionaries, [false, true, false]);
    assert_eq!(read, written);
}

#[test]
fn a_start_too_short_to_judge_keeps_the_dictionary() {
    let (dictionaries, written, read) = write(40);
    assert_eq!(dictionaries, [true, true, true]);
    assert_eq!(read, written);
}
