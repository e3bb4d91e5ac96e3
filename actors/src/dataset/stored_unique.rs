//! `unique` across the whole stored version: the upload's values of each unique column are
//! looked up in the files that will remain after the commit.
//!
//! Checked twice: before the upload is answered ([`check_before_answer`], so a clash is a 422
//! rather than a 202 and a failed job), and again at commit, which also catches an upload
//! committed in between.

use arrow::array::Array;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ProjectionMask;

use crate::catalog::Catalog;
use crate::error::{Error, Result};
use crate::ingest::{value_at, Problems, StagedOutput, UniqueColumn, UniqueValue};
use crate::manifest::{snapshot, DataFile};
use crate::schema::UpdateBehaviour;
use crate::storage::{encode_partition_value, ObjectReader, Storage};

/// The files that stay after an upload commits: all of them for APPEND; for OVERWRITE, those of
/// the partitions the upload does not replace (none when unpartitioned).
pub(super) fn kept_files<'a>(
    current: &'a [DataFile],
    behaviour: UpdateBehaviour,
    output: &StagedOutput,
) -> Vec<&'a DataFile> {
    match behaviour {
        UpdateBehaviour::Append => current.iter().collect(),
        UpdateBehaviour::Overwrite => current
            .iter()
            .filter(|f| {
                !output
                    .files
                    .iter()
                    .any(|n| n.partition_path == f.partition_path)
            })
            .collect(),
    }
}

/// The upload's `unique` values against the version as stored now (files leased while read):
/// 422 naming every clashing value. Blocking (reads Parquet): call off the async workers.
pub fn check_before_answer(
    catalog: &dyn Catalog,
    storage: &Storage,
    dataset_id: i64,
    version: i64,
    behaviour: UpdateBehaviour,
    output: &StagedOutput,
) -> Result<()> {
    if output.unique.is_empty() {
        return Ok(());
    }
    let (current, _lease) = snapshot(catalog, storage, dataset_id, version)?;
    let kept = kept_files(&current, behaviour, output);
    let mut problems = Problems::default();
    find_duplicates(storage, &kept, &output.unique, &mut problems)?;
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.into_error())
    }
}

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
    // A listed file that is missing is a fault of ours, not a 404.
    let handle = ObjectReader::new(storage.objects().clone(), &file.path)
        .map_err(|e| e.with_kind(crate::error::ErrorKind::Internal))?;
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
