//! `unique` across the whole stored version: the upload's values of each unique column are
//! looked up in the files that will remain after the commit.

use std::fs::File;

use arrow::array::Array;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ProjectionMask;

use super::manifest::DataFile;
use crate::error::{Error, Result};
use crate::ingest::{value_at, Problems, UniqueColumn, UniqueValue};
use crate::storage::{encode_partition_value, Storage};

pub(super) fn find_duplicates(
    storage: &Storage,
    kept: &[&DataFile],
    unique: &[UniqueColumn],
    problems: &mut Problems,
) -> Result<()> {
    for column in unique {
        if column.partition {
            partition_duplicates(column, kept, problems);
        } else {
            for file in kept {
                file_duplicates(storage, file, column, problems)?;
            }
        }
    }
    Ok(())
}

fn report(column: &UniqueColumn, value: &UniqueValue, problems: &mut Problems) {
    problems.add(|| {
        format!(
            "Column [{}] must be unique: value {} is already stored in this dataset version",
            column.name,
            value.display()
        )
    });
}

/// A partition column's stored values are in the folder names of the kept files.
fn partition_duplicates(column: &UniqueColumn, kept: &[&DataFile], problems: &mut Problems) {
    let prefix = format!("{}=", column.name);
    for value in &column.values {
        let text = match value {
            UniqueValue::Date(d) => crate::ingest::date32_to_string(*d),
            UniqueValue::Str(s) => s.clone(),
            other => other.display(),
        };
        let segment = format!("{prefix}{}", encode_partition_value(&text));
        if kept
            .iter()
            .any(|f| f.partition_path.split('/').any(|s| s == segment))
        {
            report(column, value, problems);
        }
    }
}

fn file_duplicates(
    storage: &Storage,
    file: &DataFile,
    column: &UniqueColumn,
    problems: &mut Problems,
) -> Result<()> {
    let read_error =
        |e: &dyn std::fmt::Display| Error::internal(format!("reading {}: {e}", file.path));
    let handle = File::open(storage.absolute(&file.path))?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(handle).map_err(|e| read_error(&e))?;
    let Some(index) = builder
        .schema()
        .fields()
        .iter()
        .position(|f| f.name() == &column.name)
    else {
        return Ok(());
    };
    let mask = ProjectionMask::roots(builder.parquet_schema(), [index]);
    let reader = builder
        .with_projection(mask)
        .build()
        .map_err(|e| read_error(&e))?;
    for batch in reader {
        let batch = batch.map_err(|e| read_error(&e))?;
        let array = batch.column(0);
        for i in 0..array.len() {
            if array.is_valid(i) {
                let v = value_at(column.data_type, array.as_ref(), i);
                if column.values.contains(&v) {
                    report(column, &v, problems);
                }
            }
        }
    }
    Ok(())
}
