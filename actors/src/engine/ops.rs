//! What operating the service asks of the engine: readiness, the figures metrics report, the
//! upload commits still running (graceful shutdown waits for them) and failing what a shutdown
//! left unfinished. The edge's `ops` module renders these; it never reaches the catalog itself.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;

use rusqlite::params;

use super::Engine;
use crate::catalog::now_text;
use crate::error::Result;
use crate::jobs::JobStatus;
use crate::manifest::remove_unlisted_files;

/// Upload commits handed to dataset actors: how many are pending, and what the successful ones
/// stored. Shared by every clone of the engine.
#[derive(Default)]
pub(super) struct CommitCounters {
    pending: AtomicI64,
    stored_rows: AtomicU64,
    stored_bytes: AtomicU64,
}

/// Held from the moment an upload is handed to its dataset actor until its commit ends.
pub(super) struct CommitGuard(Arc<CommitCounters>);

impl CommitCounters {
    pub(super) fn started(self: &Arc<Self>) -> CommitGuard {
        self.pending.fetch_add(1, Ordering::SeqCst);
        CommitGuard(self.clone())
    }

    pub(super) fn stored(&self, rows: u64, bytes: u64) {
        self.stored_rows.fetch_add(rows, Ordering::SeqCst);
        self.stored_bytes.fetch_add(bytes, Ordering::SeqCst);
    }
}

impl Drop for CommitGuard {
    fn drop(&mut self) {
        self.0.pending.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Totals of the upload commits since the engine opened.
#[derive(Debug, Clone, Copy, Default)]
pub struct CommitFigures {
    /// Commits handed to dataset actors and not finished yet.
    pub pending: i64,
    /// Rows of uploads stored (job SUCCESS).
    pub stored_rows: u64,
    /// Bytes of uploaded files stored (job SUCCESS), as uploaded.
    pub stored_bytes: u64,
}

/// The catalog's size, read in one go for metrics.
#[derive(Debug, Clone, Default)]
pub struct CatalogFigures {
    /// (kind, status, count) of the jobs table.
    pub jobs: Vec<(String, String, i64)>,
    /// (name, count): datasets, schema_versions, data_files, raw_files, stored_rows,
    /// stored_bytes (Parquet), subjects.
    pub counts: Vec<(&'static str, i64)>,
    /// catalog.sqlite and its WAL on disk.
    pub file_bytes: u64,
}

/// What a shutdown found unfinished and failed.
#[derive(Debug, Clone, Copy)]
pub struct Unfinished {
    pub failed_jobs: usize,
    pub removed_files: usize,
}

const COUNT_NAMES: [&str; 7] = [
    "datasets",
    "schema_versions",
    "data_files",
    "raw_files",
    "stored_rows",
    "stored_bytes",
    "subjects",
];

impl Engine {
    /// `/api/ready`: the catalog answers a query and the data folder takes a write (a probe file
    /// in staging, where uploads are written first); otherwise what failed. Blocking.
    pub fn readiness(&self) -> std::result::Result<(), String> {
        self.catalog
            .with(|c| Ok(c.query_row("SELECT count(*) FROM datasets", [], |r| r.get::<_, i64>(0))?))
            .map_err(|e| format!("the catalog does not answer: {e}"))?;
        let staging = self.storage.staging_root();
        let probe = self.storage.readiness_probe();
        std::fs::create_dir_all(&staging)
            .and_then(|()| std::fs::write(&probe, b"ready"))
            .and_then(|()| std::fs::remove_file(&probe))
            .map_err(|e| format!("the data folder is not writable: {e}"))
    }

    /// Upload commits pending now and what the finished ones stored.
    pub fn commit_figures(&self) -> CommitFigures {
        let c = &self.commits;
        CommitFigures {
            pending: c.pending.load(Ordering::SeqCst),
            stored_rows: c.stored_rows.load(Ordering::SeqCst),
            stored_bytes: c.stored_bytes.load(Ordering::SeqCst),
        }
    }

    /// Jobs by kind and status, the catalog's object counts and its size on disk. Blocking.
    pub fn catalog_figures(&self) -> Result<CatalogFigures> {
        let (jobs, counts) = self.catalog.with(|c| {
            let mut stmt =
                c.prepare("SELECT kind, status, count(*) FROM jobs GROUP BY kind, status")?;
            let jobs = stmt
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get::<_, i64>(2)?)))?
                .collect::<std::result::Result<Vec<_>, _>>()?;
            let counts = c.query_row(
                "SELECT (SELECT count(*) FROM datasets), (SELECT count(*) FROM schema_versions),
                        (SELECT count(*) FROM data_files), (SELECT count(*) FROM raw_files),
                        (SELECT coalesce(sum(rows), 0) FROM data_files),
                        (SELECT coalesce(sum(bytes), 0) FROM data_files),
                        (SELECT count(*) FROM subjects)",
                [],
                |r| {
                    let mut v = [0i64; 7];
                    for (i, slot) in v.iter_mut().enumerate() {
                        *slot = r.get(i)?;
                    }
                    Ok(v)
                },
            )?;
            Ok((jobs, counts))
        })?;
        let file_bytes = self
            .storage
            .catalog_files()
            .iter()
            .filter_map(|f| std::fs::metadata(f).ok())
            .map(|meta| meta.len())
            .sum();
        Ok(CatalogFigures {
            jobs,
            counts: COUNT_NAMES.into_iter().zip(counts).collect(),
            file_bytes,
        })
    }

    /// After a graceful shutdown's wait: under the catalog lock, jobs still IN PROGRESS become
    /// FAILED. If any was, or a commit is still pending, staging is emptied, files no manifest row
    /// lists are removed and `exit` is called, still inside the lock, so that no actor still
    /// committing reaches its transaction (`exit` is meant to end the process). Returns
    /// `Ok(None)` when nothing was left unfinished.
    pub fn fail_unfinished(&self, exit: impl FnOnce(Unfinished)) -> Result<Option<Unfinished>> {
        let pending = || self.commit_figures().pending;
        self.catalog.with(|c| {
            let failed = c.execute(
                "UPDATE jobs SET status = ?1, errors = ?2, finished_at = ?3 WHERE status = ?4",
                params![
                    JobStatus::Failed.as_str(),
                    serde_json::json!(["The service shut down before this job finished"])
                        .to_string(),
                    now_text(),
                    JobStatus::InProgress.as_str()
                ],
            )?;
            if failed == 0 && pending() <= 0 {
                return Ok(None);
            }
            // A thread of a dropped request may still be writing there; the next start retries.
            if let Err(e) = std::fs::remove_dir_all(self.storage.staging_root()) {
                tracing::warn!(error = %e, "shutdown: staging not fully removed; the next start will");
            }
            let unfinished = Unfinished {
                failed_jobs: failed,
                removed_files: remove_unlisted_files(c, &self.storage)?,
            };
            exit(unfinished);
            Ok(Some(unfinished))
        })
    }
}
