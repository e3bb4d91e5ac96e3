//! Committing a staged upload (docs/DESIGN.md, Upload path step 6), run off the actor thread while the
//! actor waits, so commits of one dataset are strictly one at a time.

use std::collections::{BTreeSet, HashSet};
use std::path::PathBuf;

use super::stored_unique::{find_clashes, Target};
use crate::catalog::refusal::is_commit_conflict;
use crate::catalog::ColumnKeys;
use crate::catalog::{Catalog, CommitOperation, NewDataFile, UploadCommit};
use crate::error::{Error, Result};
use crate::ingest::{Problems, StagedOutput};
use crate::key::DatasetRecord;
use crate::manifest::DataFile;
use crate::schema::UpdateBehaviour;
use crate::storage::{keys, StagedObject, Storage};

/// A validated upload waiting in staging.
#[derive(Debug)]
pub(crate) struct StagedUpload {
    pub job_id: String,
    /// The catalog id of the dataset the upload was validated against: a dataset deleted and
    /// created again under the same name meanwhile is another dataset, with its own schema.
    pub dataset_id: i64,
    pub version: i64,
    pub behaviour: UpdateBehaviour,
    pub raw_staged: PathBuf,
    pub raw_filename: String,
    pub original_filename: String,
    /// The name of the subject that uploaded it.
    pub uploaded_by: String,
    pub raw_bytes: u64,
    pub output: StagedOutput,
    /// The unique index keys of each staged file, in `output.files`' order
    /// ([`super::unique_index::staged_keys`]).
    pub file_keys: Vec<Vec<ColumnKeys>>,
    /// The version's manifest generation the keys were checked against before the answer
    /// ([`super::check_before_answer`]); `None` when they were not.
    pub checked_at: Option<i64>,
}

/// 1. For OVERWRITE, the files of the partitions present in the upload (every file when
///    unpartitioned) are to be replaced.
/// 2. `unique` columns are checked against the files that stay (their unique index).
/// 3. Staged Parquet files and the raw file (fsynced by the threads that wrote them) are put
///    under their keys, durably (on the local folder: renamed into place, folders fsynced).
/// 4. One durable transaction records them with their unique keys, retires the replaced files
///    (their keys dropped) from the live manifest, numbers the commit, keeps the upload's
///    profile and marks the job SUCCESS; readers see the old set or the new one, never a mix,
///    also after a power cut.
/// 5. Replaced files stay for the commits before this one: retention deletes them later
///    ([`crate::history::expire`]).
pub(super) fn commit(
    catalog: &dyn Catalog,
    storage: &Storage,
    record: &DatasetRecord,
    upload: StagedUpload,
) -> Result<()> {
    let objects = staged_objects(record, &upload);
    let mut placed = false;
    let mut attempt = 1;
    let outcome = loop {
        match try_commit(
            catalog,
            storage,
            record,
            &upload,
            &objects,
            attempt,
            &mut placed,
        ) {
            // Another node committed to the dataset after the checks read its files: check
            // again on the new files (the objects stay where they are).
            Err(e) if is_commit_conflict(&e) && attempt < ATTEMPTS => attempt += 1,
            other => break other,
        }
    };
    match outcome {
        // The replaced files are retired in the catalog: earlier commits still list them.
        Ok(_replaced) => Ok(()),
        Err(e) => {
            // Nothing refers to the placed objects; remove them now (the sweep would, too).
            if placed {
                for object in &objects {
                    let _ = storage.objects().delete(&object.key);
                }
            }
            Err(e)
        }
    }
}

/// How many times a commit whose checks went stale is checked again, in all.
const ATTEMPTS: u32 = 8;

/// Steps 1 to 4 on the files as they are now; returns the paths of the files it replaced.
/// `placed` records that step 3 is done (it is done once, on the first attempt that gets there).
fn try_commit(
    catalog: &dyn Catalog,
    storage: &Storage,
    record: &DatasetRecord,
    upload: &StagedUpload,
    objects: &[StagedObject],
    attempt: u32,
    placed: &mut bool,
) -> Result<Vec<String>> {
    // An APPEND with no unique column depends on no other file: it commits on any state. Read
    // first: any commit after this refuses this one (conflict), so later reads may be newer.
    let checked = !upload.output.unique.is_empty() || upload.behaviour != UpdateBehaviour::Append;
    let based_on = if checked {
        Some(catalog.manifest_generation(record.id, upload.version)?)
    } else {
        None
    };
    let replaced = replaced_files(catalog, record, upload)?;
    let replaced_ids: HashSet<i64> = replaced.iter().map(|f| f.id).collect();

    let mut backfill = None;
    // The generation the keys were last checked against: the commit probes the runs since.
    let mut keys_checked_at = upload.checked_at;
    if !upload.output.unique.is_empty()
        && (attempt > 1 || !index_decides(catalog, record.id, upload)?)
    {
        let target = Target {
            dataset_id: record.id,
            version: upload.version,
            behaviour: upload.behaviour,
        };
        let mut problems = Problems::default();
        backfill = find_clashes(
            catalog,
            storage,
            target,
            (&upload.output, &upload.file_keys),
            &mut || catalog.data_files(record.id, upload.version),
            &mut problems,
        )?;
        if !problems.is_empty() {
            return Err(problems.into_error());
        }
        keys_checked_at = based_on;
    }

    if !*placed {
        let started = std::time::Instant::now();
        storage.objects().put(objects)?;
        *placed = true;
        let micros = started.elapsed().as_micros();
        tracing::debug!(files = objects.len(), micros, "staged files placed");
    }
    let rels: Vec<String> = objects[..upload.output.files.len()]
        .iter()
        .map(|o| o.key.clone())
        .collect();
    let mut commit = upload_commit(record, upload, based_on, &rels, &replaced_ids);
    commit.backfill = backfill;
    commit.keys_checked_at = keys_checked_at;
    let started = std::time::Instant::now();
    catalog.commit_upload(&commit)?;
    let micros = started.elapsed().as_micros();
    tracing::debug!(attempt, micros, "commit recorded in the catalog");
    Ok(replaced.iter().map(|f| f.path.clone()).collect())
}

/// Whether the commit's own refusal of a stored key is check enough for a first attempt: every
/// `unique` column is kept in the version's index (none is a partition column, the index is
/// built). The check before the answer ran moments ago; a key stored since refuses the commit as
/// a conflict, and the next attempt checks here and names the values.
fn index_decides(catalog: &dyn Catalog, dataset_id: i64, upload: &StagedUpload) -> Result<bool> {
    for column in &upload.output.unique {
        let built = catalog
            .stored_keys(dataset_id, upload.version, &column.name, &[])?
            .is_some();
        if column.partition || !built {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Step 1: the current files an upload replaces (OVERWRITE: those of the partitions present).
fn replaced_files(
    catalog: &dyn Catalog,
    record: &DatasetRecord,
    upload: &StagedUpload,
) -> Result<Vec<DataFile>> {
    match upload.behaviour {
        UpdateBehaviour::Append => Ok(Vec::new()),
        UpdateBehaviour::Overwrite => {
            let incoming: BTreeSet<String> = upload
                .output
                .files
                .iter()
                .map(|f| f.partition_path.clone())
                .collect();
            let incoming: Vec<String> = incoming.into_iter().collect();
            catalog.data_files_in(record.id, upload.version, &incoming)
        }
    }
}

/// Step 3's objects: each staged data file under its manifest key, in the upload's order, then
/// the raw file.
fn staged_objects(record: &DatasetRecord, upload: &StagedUpload) -> Vec<StagedObject> {
    let raw_id = upload
        .raw_filename
        .rsplit_once('.')
        .map_or(upload.raw_filename.as_str(), |(stem, _)| stem);
    let mut objects: Vec<StagedObject> = upload
        .output
        .files
        .iter()
        .enumerate()
        .map(|(n, file)| StagedObject {
            staged: file.staged_path.clone(),
            key: keys::data_key(
                &record.key,
                upload.version,
                &file.partition_path,
                &format!("{raw_id}-{n}.parquet"),
            ),
        })
        .collect();
    objects.push(StagedObject {
        staged: upload.raw_staged.clone(),
        key: keys::raw_key(&record.key, upload.version, &upload.raw_filename),
    });
    objects
}

/// Step 4's rows: the raw file, the data files, the replaced files dropped, the job SUCCESS,
/// recorded by the catalog in one atomic step on top of the files the checks saw (`based_on`).
fn upload_commit(
    record: &DatasetRecord,
    upload: &StagedUpload,
    based_on: Option<i64>,
    rels: &[String],
    replaced_ids: &HashSet<i64>,
) -> UploadCommit {
    UploadCommit {
        dataset_id: record.id,
        version: upload.version,
        job_id: upload.job_id.clone(),
        raw_filename: upload.raw_filename.clone(),
        original_filename: upload.original_filename.clone(),
        uploaded_by: upload.uploaded_by.clone(),
        rows: upload.output.rows as i64,
        raw_bytes: upload.raw_bytes as i64,
        files: upload
            .output
            .files
            .iter()
            .zip(rels)
            .enumerate()
            .map(|(n, (file, rel))| NewDataFile {
                partition_path: file.partition_path.clone(),
                path: rel.clone(),
                rows: file.rows as i64,
                bytes: file.bytes as i64,
                stats: file.stats.clone(),
                unique_keys: upload.file_keys.get(n).cloned().unwrap_or_default(),
            })
            .collect(),
        based_on,
        replaced: replaced_ids.iter().copied().collect(),
        backfill: None,
        keys_checked_at: None,
        operation: match upload.behaviour {
            UpdateBehaviour::Append => CommitOperation::Append,
            UpdateBehaviour::Overwrite => CommitOperation::Overwrite,
        },
        profile: upload.output.profile.as_ref().map(|p| p.to_json()),
    }
}

/// Removes one raw file and every row it contributed (also rows merged into other files by
/// compaction); 404 when there is no such file.
pub(super) fn delete_raw_file(
    catalog: &dyn Catalog,
    storage: &Storage,
    record: &DatasetRecord,
    version: i64,
    raw_filename: &str,
    subject: &str,
) -> Result<()> {
    if super::swap::delete_merged_rows(catalog, storage, record, version, raw_filename, subject)? {
        return storage
            .objects()
            .delete(&keys::raw_key(&record.key, version, raw_filename));
    }
    // Its data files are retired (earlier commits still list them), not deleted; the raw upload
    // itself goes now: no read needs it.
    catalog
        .delete_raw_file(record.id, version, raw_filename, Some(subject))?
        .ok_or_else(|| {
            Error::not_found(format!(
                "The file [{raw_filename}] does not exist in dataset layer [{}], domain [{}], dataset [{}] and version [{version}]",
                record.key.layer, record.key.domain, record.key.dataset
            ))
        })?;
    storage
        .objects()
        .delete(&keys::raw_key(&record.key, version, raw_filename))
}

/// [`delete_raw_file`] with erasure (`?erase=true`): then its rows also leave every retained
/// commit ([`super::swap::erase_retired`]). A deletion whose erasure did not finish (a crash
/// between the two steps) is finished by asking again: the raw file is gone but retired files
/// still hold its rows.
pub(super) fn erase_raw_file(
    catalog: &dyn Catalog,
    storage: &Storage,
    record: &DatasetRecord,
    version: i64,
    raw_filename: &str,
    subject: &str,
) -> Result<usize> {
    match delete_raw_file(catalog, storage, record, version, raw_filename, subject) {
        Ok(()) => {}
        Err(e)
            if e.kind == crate::error::ErrorKind::NotFound
                && !catalog
                    .retired_holding(record.id, version, raw_filename)?
                    .is_empty() => {}
        Err(e) => return Err(e),
    }
    super::swap::erase_retired(catalog, storage, record, version, raw_filename)
}

/// Removes the dataset's catalog rows (every version, schema, manifest entry) and its folders.
pub(super) fn delete_dataset(
    catalog: &dyn Catalog,
    storage: &Storage,
    record: &DatasetRecord,
) -> Result<()> {
    catalog.delete_dataset(record.id)?;
    for prefix in [
        keys::data_dataset_prefix(&record.key),
        keys::raw_dataset_prefix(&record.key),
    ] {
        storage.objects().delete_prefix(&prefix)?;
    }
    Ok(())
}
