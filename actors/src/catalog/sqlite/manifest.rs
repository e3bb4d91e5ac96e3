//! The manifest in SQLite: raw files and data files per dataset version, and the upload commit.

use rusqlite::{params, Connection, OptionalExtension, Transaction};

use super::history::{self, data_files};
use super::rows::data_file;
use super::{swap, unique_keys, SqliteCatalog};
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
pub(super) fn generation(conn: &Connection, dataset_id: i64, version: i64) -> Result<i64> {
    Ok(conn
        .prepare_cached(
            "SELECT generation FROM schema_versions WHERE dataset_id = ?1 AND version = ?2",
        )?
        .query_row(params![dataset_id, version], |r| r.get(0))
        .optional()?
        .unwrap_or(0))
}

/// Every listed file; call inside a transaction (or the lock) for one committed state.
pub(super) fn stored_files(conn: &Connection) -> Result<StoredFiles> {
    let mut stmt = conn.prepare(
        "SELECT id, raw_filename, partition_path, path, rows, bytes, stats FROM data_files
         UNION ALL
         SELECT id, raw_filename, partition_path, path, rows, bytes, stats FROM retired_files
         ORDER BY 4",
    )?;
    let mut data: Vec<DataFile> = stmt
        .query_map([], data_file)?
        .collect::<Result<Vec<_>, _>>()?;
    let mut stmt = conn.prepare(
        "SELECT d.layer, d.domain, d.dataset_key, r.version, r.raw_filename, r.bytes
         FROM raw_files r JOIN datasets d ON d.id = r.dataset_id ORDER BY 1, 2, 3, 4, 5",
    )?;
    // A file a rollback listed again is both live and retired: one object.
    data.dedup_by(|a, b| a.path == b.path);
    let raw = stmt
        .query_map([], |r| {
            Ok(ListedRawFile {
                key: DatasetKey {
                    layer: r.get(0)?,
                    domain: r.get(1)?,
                    dataset: r.get(2)?,
                },
                version: r.get(3)?,
                raw_filename: r.get(4)?,
                bytes: r.get(5)?,
            })
        })?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(StoredFiles { data, raw })
}

/// The commit's rows, inside its transaction: the raw file, the data files, the replaced files
/// retired, the commit numbered, the upload's profile, the job SUCCESS.
fn record_commit(tx: &Transaction<'_>, commit: &UploadCommit) -> Result<()> {
    let now = now_text();
    let number = history::latest_commit(tx, commit.dataset_id, commit.version)? + 1;
    tx.execute(
        "INSERT INTO raw_files (dataset_id, version, raw_filename, original_filename, rows, bytes, job_id, uploaded_at, uploaded_by)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        params![
            commit.dataset_id,
            commit.version,
            commit.raw_filename,
            commit.original_filename,
            commit.rows,
            commit.raw_bytes,
            commit.job_id,
            now,
            commit.uploaded_by
        ],
    )?;
    if let Some(profile) = &commit.profile {
        tx.execute(
            "INSERT INTO upload_profiles (dataset_id, version, raw_filename, profile)
             VALUES (?1, ?2, ?3, ?4)",
            params![
                commit.dataset_id,
                commit.version,
                commit.raw_filename,
                profile
            ],
        )?;
    }
    unique_keys::record_backfill(tx, commit)?;
    let mut insert = tx.prepare_cached(
        "INSERT INTO data_files (dataset_id, version, raw_filename, partition_path, path, rows, bytes, created_at, stats, added_commit)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )?;
    for file in &commit.files {
        insert.execute(params![
            commit.dataset_id,
            commit.version,
            commit.raw_filename,
            file.partition_path,
            file.path,
            file.rows,
            file.bytes,
            now,
            file.stats,
            number
        ])?;
    }
    // The replaced files' keys go first, before the new keys are recorded.
    let mut rows_removed = 0;
    for id in &commit.replaced {
        unique_keys::drop_file_keys(tx, *id)?;
        let gone = history::retire_where(tx, "id = ?1", &[id], number)?;
        rows_removed += gone.iter().map(|(_, rows)| rows).sum::<i64>();
    }
    unique_keys::record_new_keys(tx, commit)?;
    history::record_upload(tx, commit, number, rows_removed)?;
    let succeeded = tx.execute(
        "UPDATE jobs SET status = ?1, step = ?2, finished_at = ?3 WHERE job_id = ?4 AND status = ?5",
        params![
            JobStatus::Success.as_str(),
            JobStep::Done.as_str(),
            now_text(),
            commit.job_id,
            JobStatus::InProgress.as_str()
        ],
    )?;
    if succeeded == 0 {
        return Err(job_not_running(&commit.job_id));
    }
    Ok(())
}

impl ManifestCatalog for SqliteCatalog {
    fn data_files(&self, dataset_id: i64, version: i64) -> Result<Vec<DataFile>> {
        self.with(|c| data_files(c, dataset_id, version))
    }

    fn manifest_generation(&self, dataset_id: i64, version: i64) -> Result<i64> {
        self.with(|c| generation(c, dataset_id, version))
    }

    fn data_files_in(
        &self,
        dataset_id: i64,
        version: i64,
        partition_paths: &[String],
    ) -> Result<Vec<DataFile>> {
        self.transaction(|tx| {
            let mut stmt = tx.prepare_cached(
                "SELECT id, raw_filename, partition_path, path, rows, bytes, stats FROM data_files
                 WHERE dataset_id = ?1 AND version = ?2 AND partition_path = ?3",
            )?;
            let mut files = Vec::new();
            for partition in partition_paths {
                for file in stmt.query_map(params![dataset_id, version, partition], data_file)? {
                    files.push(file?);
                }
            }
            files.sort_by_key(|f| f.id);
            Ok(files)
        })
    }

    fn data_files_held(
        &self,
        dataset_id: i64,
        version: i64,
        hold: &mut dyn FnMut(&[DataFile]),
    ) -> Result<Vec<DataFile>> {
        // Under the lock: a commit retires the files it replaced only after its transaction.
        self.with(|c| {
            let files = data_files(c, dataset_id, version)?;
            hold(&files);
            Ok(files)
        })
    }

    fn raw_files(&self, dataset_id: i64, version: i64) -> Result<Vec<RawFile>> {
        self.with(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT raw_filename, original_filename, rows, bytes, uploaded_at FROM raw_files
                 WHERE dataset_id = ?1 AND version = ?2 ORDER BY uploaded_at, raw_filename",
            )?;
            let files = stmt
                .query_map(params![dataset_id, version], |r| {
                    Ok(RawFile {
                        raw_filename: r.get(0)?,
                        original_filename: r.get(1)?,
                        rows: r.get(2)?,
                        bytes: r.get(3)?,
                        uploaded_at: r.get(4)?,
                    })
                })?
                .collect::<Result<Vec<_>, _>>()?;
            Ok(files)
        })
    }

    fn commit_upload(&self, commit: &UploadCommit) -> Result<()> {
        self.transaction(|tx| {
            if let Some(based_on) = commit.based_on {
                if generation(tx, commit.dataset_id, commit.version)? != based_on {
                    return Err(commit_conflict(commit.dataset_id, commit.version));
                }
            }
            record_commit(tx, commit)
        })
    }

    fn stored_keys(
        &self,
        dataset_id: i64,
        version: i64,
        column: &str,
        lists: &[&crate::catalog::KeyList],
    ) -> Result<Option<Vec<KeyHit>>> {
        self.read(|tx| unique_keys::stored_keys(tx, dataset_id, version, column, lists))
    }

    fn delete_raw_file(
        &self,
        dataset_id: i64,
        version: i64,
        raw_filename: &str,
        subject: Option<&str>,
    ) -> Result<Option<Vec<String>>> {
        self.transaction(|tx| {
            let n = tx.execute(
                "DELETE FROM raw_files WHERE dataset_id = ?1 AND version = ?2 AND raw_filename = ?3",
                params![dataset_id, version, raw_filename],
            )?;
            if n == 0 {
                return Ok(None);
            }
            let number = history::latest_commit(tx, dataset_id, version)? + 1;
            let gone = history::retire_where(
                tx,
                "dataset_id = ?1 AND version = ?2 AND raw_filename = ?3",
                &[&dataset_id, &version, &raw_filename],
                number,
            )?;
            unique_keys::drop_raw_keys(tx, dataset_id, version, raw_filename)?;
            history::record(
                tx,
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
        self.transaction(|tx| stored_files(tx))
    }

    fn file_parts(&self, of: PartsOf<'_>) -> Result<Vec<(i64, FilePart)>> {
        self.with(|c| swap::file_parts(c, of))
    }

    fn swap_files(&self, swap: &FileSwap) -> Result<Option<Vec<String>>> {
        self.transaction(|tx| swap::swap_files(tx, swap))
    }
}
