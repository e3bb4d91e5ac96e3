//! Reads a dataset version back from the data folder, the way an outside reader would: every
//! Parquet file under `data/{layer}/{domain}/{dataset}/{version}`, with partition values taken
//! from the `col=value` folder names.

use std::path::{Path, PathBuf};

use arrow::array::{Array, AsArray};
use arrow::datatypes::{DataType, Date32Type, Float64Type, Int64Type};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use serde_json::{Map, Value};

pub(crate) fn parquet_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries {
            let p = e.unwrap().path();
            if p.is_dir() {
                // The Delta log's checkpoints are Parquet too, but not data.
                if p.file_name().is_some_and(|n| n == "_delta_log") {
                    continue;
                }
                out.extend(parquet_files(&p));
            } else if p.extension().is_some_and(|x| x == "parquet") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            out.push(u8::from_str_radix(&s[i + 1..i + 3], 16).unwrap());
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap()
}

/// Every stored row of a version as JSON objects (dates as days since the epoch: `{"date": n}`).
pub(crate) fn stored_rows(
    data_dir: &Path,
    layer: &str,
    domain: &str,
    dataset: &str,
    version: i64,
) -> Vec<Map<String, Value>> {
    let root = data_dir
        .join("data")
        .join(layer)
        .join(domain)
        .join(dataset)
        .join(version.to_string());
    let mut rows = Vec::new();
    for file in parquet_files(&root) {
        let partitions: Vec<(String, String)> = file
            .strip_prefix(&root)
            .unwrap()
            .parent()
            .unwrap()
            .components()
            .map(|c| {
                let seg = c.as_os_str().to_str().unwrap();
                let (k, v) = seg.split_once('=').unwrap();
                (k.to_string(), percent_decode(v))
            })
            .collect();
        let reader = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(&file).unwrap())
            .unwrap()
            .build()
            .unwrap();
        for batch in reader {
            let batch = batch.unwrap();
            for i in 0..batch.num_rows() {
                let mut row = Map::new();
                for (k, v) in &partitions {
                    row.insert(k.clone(), Value::String(v.clone()));
                }
                for (f, col) in batch.schema().fields().iter().zip(batch.columns()) {
                    let v = if col.is_null(i) {
                        Value::Null
                    } else {
                        match f.data_type() {
                            DataType::Int64 => {
                                Value::from(col.as_primitive::<Int64Type>().value(i))
                            }
                            DataType::Float64 => {
                                Value::from(col.as_primitive::<Float64Type>().value(i))
                            }
                            DataType::Boolean => Value::from(col.as_boolean().value(i)),
                            DataType::Utf8 => Value::from(col.as_string::<i32>().value(i)),
                            DataType::Date32 => {
                                serde_json::json!({ "date": col.as_primitive::<Date32Type>().value(i) })
                            }
                            other => panic!("unexpected stored type {other}"),
                        }
                    };
                    row.insert(f.name().clone(), v);
                }
                rows.push(row);
            }
        }
    }
    rows
}

/// The stored Arrow type of each column in the first file of a version.
pub(crate) fn stored_types(
    data_dir: &Path,
    layer: &str,
    domain: &str,
    dataset: &str,
    version: i64,
) -> Vec<(String, DataType)> {
    let root = data_dir
        .join("data")
        .join(layer)
        .join(domain)
        .join(dataset)
        .join(version.to_string());
    let file = parquet_files(&root)
        .into_iter()
        .next()
        .expect("a stored file");
    let builder =
        ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(file).unwrap()).unwrap();
    builder
        .schema()
        .fields()
        .iter()
        .map(|f| (f.name().clone(), f.data_type().clone()))
        .collect()
}
