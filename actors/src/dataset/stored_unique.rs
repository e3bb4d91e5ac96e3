//! `unique` across the whole stored version: the upload's values of each unique column are
//! looked up in the version's unique index ([`super::unique_index`]), or, for a version whose
//! files predate the index, read from the files that will remain after the commit.
//!
//! Checked twice: before the upload is answered ([`check_before_answer`], so a clash is a 422
//! rather than a 202 and a failed job), and again at commit, which also catches an upload
//! committed in between.

use std::collections::{HashMap, HashSet};

use super::unique_index::{column_values, index_key, indexed, keyed, upload_keys};
use crate::catalog::{Catalog, ColumnKeys, FilePart, KeyList, PartsOf, StoredKeys};
use crate::error::{Error, Result};
use crate::ingest::{Place, Problems, StagedOutput, UniqueColumn, UniqueValue};
use crate::manifest::{snapshot, DataFile};
use crate::schema::UpdateBehaviour;
use crate::storage::{encode_partition_value, ObjectReader, Storage};

/// The version an upload goes to, and how it changes it.
#[derive(Clone, Copy)]
pub(super) struct Target {
    pub dataset_id: i64,
    pub version: i64,
    pub behaviour: UpdateBehaviour,
}

/// The partitions an upload replaces: those it has rows in, under OVERWRITE ("" stands for the
/// whole of an unpartitioned dataset); none under APPEND.
fn replaced_partitions(target: Target, output: &StagedOutput) -> HashSet<&str> {
    match target.behaviour {
        UpdateBehaviour::Append => HashSet::new(),
        UpdateBehaviour::Overwrite => output
            .files
            .iter()
            .map(|f| f.partition_path.as_str())
            .collect(),
    }
}

/// The upload's `unique` values (`file_keys`: [`super::staged_keys`]) against the version as
/// stored now (files leased while read): 422 naming every clashing value. Returns the version's
/// manifest generation read before checking (none without `unique` columns): a commit based on
/// the same generation lands on the state checked here. Blocking (catalog, maybe Parquet): call
/// off the async workers.
pub(crate) fn check_before_answer(
    catalog: &dyn Catalog,
    storage: &Storage,
    dataset_id: i64,
    version: i64,
    behaviour: UpdateBehaviour,
    staged: (&StagedOutput, &[Vec<ColumnKeys>]),
) -> Result<Option<i64>> {
    let (output, file_keys) = staged;
    if output.unique.is_empty() {
        return Ok(None);
    }
    let generation = catalog.manifest_generation(dataset_id, version)?;
    let target = Target {
        dataset_id,
        version,
        behaviour,
    };
    let mut lease = None;
    let mut current = || {
        let (files, guard) = snapshot(catalog, storage, dataset_id, version)?;
        lease = Some(guard);
        Ok(files)
    };
    let mut problems = Problems::default();
    find_clashes(
        catalog,
        storage,
        target,
        (output, file_keys),
        &mut current,
        &mut problems,
    )?;
    if problems.is_empty() {
        Ok(Some(generation))
    } else {
        Err(problems.into_error())
    }
}

/// Every value of the upload already stored in a file that stays, into `problems`. `current`
/// lists the version's files; it is called only when needed (a unique partition column, or a
/// version not indexed yet). Returns, for a version not indexed yet, the keys of the files that
/// stay (read from them), for the commit to record.
pub(super) fn find_clashes(
    catalog: &dyn Catalog,
    storage: &Storage,
    target: Target,
    staged: (&StagedOutput, &[Vec<ColumnKeys>]),
    current: &mut dyn FnMut() -> Result<Vec<DataFile>>,
    problems: &mut Problems,
) -> Result<Option<Vec<StoredKeys>>> {
    let (output, file_keys) = staged;
    let replaced = replaced_partitions(target, output);
    let mut listed: Option<Vec<DataFile>> = None;
    let mut kept = |listed: &mut Option<Vec<DataFile>>| -> Result<Vec<DataFile>> {
        if listed.is_none() {
            *listed = Some(current()?);
        }
        // unwrap: set just above
        let files = listed.as_ref().unwrap();
        Ok(files
            .iter()
            .filter(|f| !replaced.contains(f.partition_path.as_str()))
            .cloned()
            .collect())
    };
    for column in output.unique.iter().filter(|c| c.partition) {
        partition_duplicates(column, &kept(&mut listed)?, problems);
    }
    let mut unindexed = false;
    for column in indexed(&output.unique) {
        let lists = upload_keys(file_keys, &column.name);
        let Some(mut hits) =
            catalog.stored_keys(target.dataset_id, target.version, &column.name, &lists)?
        else {
            unindexed = true;
            break;
        };
        if hits.is_empty() {
            continue;
        }
        // Values by key only to name the clashes.
        let values = keyed(column);
        // In key order, whatever order the catalog found them in: one refusal, one text.
        hits.sort_unstable_by(|a, b| a.key.cmp(&b.key));
        for hit in hits {
            if !replaced.contains(hit.partition_path.as_str()) {
                if let Some(value) = values.get(&hit.key) {
                    report(column, value, problems);
                }
            }
        }
    }
    if !unindexed {
        return Ok(None);
    }
    let kept = kept(&mut listed)?;
    let mut parts: HashMap<i64, Vec<FilePart>> = HashMap::new();
    let merged: Vec<i64> = kept
        .iter()
        .filter(|f| f.raw_filename.is_empty())
        .map(|f| f.id)
        .collect();
    for (id, part) in catalog.file_parts(PartsOf::Files(&merged))? {
        parts.entry(id).or_default().push(part);
    }
    read_kept_files(storage, &kept, &parts, output, problems).map(Some)
}

/// For a version not indexed yet: reads the indexed columns of every kept file, reporting the
/// upload's values found there and returning their keys by raw file (a merged file's rows by
/// its `parts`).
fn read_kept_files(
    storage: &Storage,
    kept: &[DataFile],
    parts: &HashMap<i64, Vec<FilePart>>,
    output: &StagedOutput,
    problems: &mut Problems,
) -> Result<Vec<StoredKeys>> {
    let mut stored = Vec::new();
    for column in indexed(&output.unique) {
        for file in kept {
            let read_error =
                |e: &dyn std::fmt::Display| Error::internal(format!("reading {}: {e}", file.path));
            // A listed file that is missing is a fault of ours, not a 404.
            let handle = ObjectReader::new(storage.objects().clone(), &file.path)
                .map_err(|e| e.with_kind(crate::error::ErrorKind::Internal))?;
            let whole = [FilePart {
                raw_filename: file.raw_filename.clone(),
                first_row: 0,
                rows: file.rows,
            }];
            let file_parts = parts.get(&file.id).map_or(&whole[..], |p| p.as_slice());
            let mut keys: Vec<KeyList> = vec![KeyList::default(); file_parts.len()];
            column_values(handle, column, &mut |row, v| {
                if column.values.contains(&v) {
                    report(column, &v, problems);
                }
                // Parts are in row order: the last one starting at or before the row holds it.
                let at = file_parts.partition_point(|p| p.first_row <= row as i64);
                keys[at.saturating_sub(1)].push(&index_key(&v));
            })
            .map_err(|e| read_error(&e))?;
            for (part, keys) in file_parts.iter().zip(keys) {
                stored.push(StoredKeys {
                    raw_filename: part.raw_filename.clone(),
                    partition_path: file.partition_path.clone(),
                    keys: ColumnKeys {
                        column: column.name.clone(),
                        keys: keys.into(),
                    },
                });
            }
        }
    }
    Ok(stored)
}

fn report(column: &UniqueColumn, value: &UniqueValue, problems: &mut Problems) {
    let place = Place::column(&column.name, "unique", Some(value.display().to_string()));
    problems.add_at(place, || {
        format!(
            "Column [{}] must be unique: value {} is already stored in this dataset version",
            column.name,
            value.display()
        )
    });
}

/// A partition column's stored values are in the folder names of the kept files.
fn partition_duplicates(column: &UniqueColumn, kept: &[DataFile], problems: &mut Problems) {
    let prefix = format!("{}=", column.name);
    for value in column.values.iter() {
        let text = match &value {
            UniqueValue::Date(d) => crate::ingest::date32_to_string(*d),
            UniqueValue::Str(s) => s.clone(),
            other => other.display(),
        };
        let segment = format!("{prefix}{}", encode_partition_value(&text));
        if kept
            .iter()
            .any(|f| f.partition_path.split('/').any(|s| s == segment))
        {
            report(column, &value, problems);
        }
    }
}
