//! The manifest in PostgreSQL: raw files and data files per dataset version, and the upload
//! commit, serialised per dataset across nodes by the dataset's advisory lock.

use super::history::{self, data_files};
use super::pool::Db;
use super::rows::data_file;
use super::{lock_dataset_id, swap, unique_keys, PostgresCatalog};
use crate::catalog::interface::ManifestCatalog;
use crate::catalog::refusal::{commit_conflict, job_not_running};
use crate::catalog::{
    now_text, CommitOperation, DataFile, FilePart, FileSwap, KeyHit, ListedRawFile, PartsOf,
    RawFile, StoredFiles, UploadCommit,
};
use crate::error::Result;
use crate::job_state::{JobStatus, JobStep};
use crate::key::DatasetKey;

/// The version's manifest generation (0 for a version with no row: nothing recorded yet).
pub(super) fn generation(db: &Db<'_>, dataset_id: i64, version: i64) -> Result<i64> {
    let row = db.query_opt(
        "SELECT generation FROM schema_versions WHERE dataset_id = $1 AND version = $2",
        &[&dataset_id, &version],
    )?;
    Ok(match row {
        Some(row) => row.try_get(0)?,
        None => 0,
    })
}

/// Every listed file; call inside a snapshot (or with the manifest locked) for one state.
pub(super) fn stored_files(db: &Db<'_>) -> Result<StoredFiles> {
    let mut data: Vec<DataFile> = db
        .query(
            "SELECT id, raw_filename, partition_path, path, rows, bytes, stats FROM data_files
             UNION ALL
             SELECT id, raw_filename, partition_path, path, rows, bytes, stats FROM retired_files
             ORDER BY 4",
            &[],
        )?
        .iter()
        .map(data_file)
        .collect::<Result<Vec<_>>>()?;
    // A file a rollback listed again is both live and retired: one object.
    data.dedup_by(|a, b| a.path == b.path);
    let raw = db
        .query(
            "SELECT d.layer, d.domain, d.dataset_key, r.version, r.raw_filename, r.bytes
             FROM raw_files r JOIN datasets d ON d.id = r.dataset_id ORDER BY 1, 2, 3, 4, 5",
            &[],
        )?
        .iter()
        .map(|r| {
            Ok(ListedRawFile {
                key: DatasetKey {
                    layer: r.try_get(0)?,
                    domain: r.try_get(1)?,
                    dataset: r.try_get(2)?,
                },
                version: r.try_get(3)?,
                raw_filename: r.try_get(4)?,
                bytes: r.try_get(5)?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(StoredFiles { data, raw })
}

/// The commit's rows, inside its transaction: the raw file, the data files, the replaced files
/// retired, the commit numbered, the upload's profile, the job SUCCESS.
fn record_commit(db: &Db<'_>, commit: &UploadCommit) -> Result<()> {
    let now = now_text();
    let number = history::latest_commit(db, commit.dataset_id, commit.version)? + 1;
    db.execute(
        "INSERT INTO raw_files (dataset_id, version, raw_filename, original_filename, rows, bytes,
                                job_id, uploaded_at, uploaded_by)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        &[
            &commit.dataset_id,
            &commit.version,
            &commit.raw_filename,
            &commit.original_filename,
            &commit.rows,
            &commit.raw_bytes,
            &commit.job_id,
            &now,
            &commit.uploaded_by,
        ],
    )?;
    if let Some(profile) = &commit.profile {
        db.execute(
            "INSERT INTO upload_profiles (dataset_id, version, raw_filename, profile)
             VALUES ($1, $2, $3, $4)",
            &[
                &commit.dataset_id,
                &commit.version,
                &commit.raw_filename,
                profile,
            ],
        )?;
    }
    unique_keys::record_backfill(db, commit)?;
    for file in &commit.files {
        db.execute(
            "INSERT INTO data_files (dataset_id, version, raw_filename, partition_path, path, rows,
                                     bytes, created_at, stats, added_commit)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
            &[
                &commit.dataset_id,
                &commit.version,
                &commit.raw_filename,
                &file.partition_path,
                &file.path,
                &file.rows,
                &file.bytes,
                &now,
                &file.stats,
                &number,
            ],
        )?;
    }
    // The replaced files' keys go first, before the new keys are recorded.
    for id in &commit.replaced {
        unique_keys::drop_file_keys(db, *id)?;
    }
    let mut rows_removed = 0;
    if !commit.replaced.is_empty() {
        let gone = history::retire_where(db, "id = ANY($2)", &[&commit.replaced], number)?;
        rows_removed = gone.iter().map(|(_, rows)| rows).sum();
    }
    unique_keys::record_new_keys(db, commit)?;
    history::record_upload(db, commit, number, rows_removed)?;
    let succeeded = db.execute(
        "UPDATE jobs SET status = $1, step = $2, finished_at = $3 WHERE job_id = $4 AND status = $5",
        &[
            &JobStatus::Success.as_str(),
            &JobStep::Done.as_str(),
            &now_text(),
            &commit.job_id,
            &JobStatus::InProgress.as_str(),
        ],
    )?;
    if succeeded == 0 {
        return Err(job_not_running(&commit.job_id));
    }
    Ok(())
}

impl ManifestCatalog for PostgresCatalog {
    fn data_files(&self, dataset_id: i64, version: i64) -> Result<Vec<DataFile>> {
        self.with(|db| data_files(db, dataset_id, version))
    }

    fn manifest_generation(&self, dataset_id: i64, version: i64) -> Result<i64> {
        self.with(|db| generation(db, dataset_id, version))
    }

    fn data_files_in(
        &self,
        dataset_id: i64,
        version: i64,
        partition_paths: &[String],
    ) -> Result<Vec<DataFile>> {
        self.with(|db| {
            db.query(
                "SELECT id, raw_filename, partition_path, path, rows, bytes, stats FROM data_files
                 WHERE dataset_id = $1 AND version = $2 AND partition_path = ANY($3) ORDER BY id",
                &[&dataset_id, &version, &partition_paths],
            )?
            .iter()
            .map(data_file)
            .collect()
        })
    }

    fn data_files_held(
        &self,
        dataset_id: i64,
        version: i64,
        hold: &mut dyn FnMut(&[DataFile]),
    ) -> Result<Vec<DataFile>> {
        // The dataset's lock, shared: a commit (exclusive) that replaces these files cannot
        // return, and so retire them, before `hold` has leased them.
        self.transaction(|db| {
            lock_dataset_id(db, dataset_id, true)?;
            let files = data_files(db, dataset_id, version)?;
            hold(&files);
            Ok(files)
        })
    }

    fn raw_files(&self, dataset_id: i64, version: i64) -> Result<Vec<RawFile>> {
        self.with(|db| {
            db.query(
                "SELECT raw_filename, original_filename, rows, bytes, uploaded_at FROM raw_files
                 WHERE dataset_id = $1 AND version = $2 ORDER BY uploaded_at, raw_filename",
                &[&dataset_id, &version],
            )?
            .iter()
            .map(|r| {
                Ok(RawFile {
                    raw_filename: r.try_get(0)?,
                    original_filename: r.try_get(1)?,
                    rows: r.try_get(2)?,
                    bytes: r.try_get(3)?,
                    uploaded_at: r.try_get(4)?,
                })
            })
            .collect()
        })
    }

    fn commit_upload(&self, commit: &UploadCommit) -> Result<()> {
        self.transaction(|db| {
            // Under the dataset's lock, the files read are the newest committed by any node.
            lock_dataset_id(db, commit.dataset_id, false)?;
            if let Some(based_on) = commit.based_on {
                if generation(db, commit.dataset_id, commit.version)? != based_on {
                    return Err(commit_conflict(commit.dataset_id, commit.version));
                }
            }
            record_commit(db, commit)
        })
    }

    fn stored_keys(
        &self,
        dataset_id: i64,
        version: i64,
        column: &str,
        lists: &[&crate::catalog::KeyList],
    ) -> Result<Option<Vec<KeyHit>>> {
        self.snapshot(|db| unique_keys::stored_keys(db, dataset_id, version, column, lists))
    }

    fn delete_raw_file(
        &self,
        dataset_id: i64,
        version: i64,
        raw_filename: &str,
        subject: Option<&str>,
    ) -> Result<Option<Vec<String>>> {
        self.transaction(|db| {
            lock_dataset_id(db, dataset_id, false)?;
            let n = db.execute(
                "DELETE FROM raw_files WHERE dataset_id = $1 AND version = $2 AND raw_filename = $3",
                &[&dataset_id, &version, &raw_filename],
            )?;
            if n == 0 {
                return Ok(None);
            }
            let number = history::latest_commit(db, dataset_id, version)? + 1;
            let gone = history::retire_where(
                db,
                "dataset_id = $2 AND version = $3 AND raw_filename = $4",
                &[&dataset_id, &version, &raw_filename],
                number,
            )?;
            unique_keys::drop_raw_keys(db, dataset_id, version, raw_filename)?;
            history::record(
                db,
                &history::NewCommit {
                    dataset_id,
                    version,
                    number,
                    operation: CommitOperation::Delete,
                    subject,
                    raw_filename: Some(raw_filename),
                    rows_added: 0,
                    rows_removed: gone.iter().map(|(_, rows)| rows).sum(),
                },
            )?;
            Ok(Some(gone.into_iter().map(|(path, _)| path).collect()))
        })
    }

    fn stored_files(&self) -> Result<StoredFiles> {
        self.snapshot(stored_files)
    }

    fn file_parts(&self, of: PartsOf<'_>) -> Result<Vec<(i64, FilePart)>> {
        self.with(|db| swap::file_parts(db, of))
    }

    fn swap_files(&self, swap: &FileSwap) -> Result<Option<Vec<String>>> {
        self.transaction(|db| swap::swap_files(db, swap))
    }
}
