//! What operating the service asks of the engine: readiness, the figures metrics report, the
//! upload commits still running (graceful shutdown waits for them) and failing what a shutdown
//! left unfinished. The edge's `ops` module renders these; it never reaches the catalog itself.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;

use super::Engine;
use crate::error::Result;
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

pub use crate::catalog::CatalogFigures;

/// What a shutdown found unfinished and failed.
#[derive(Debug, Clone, Copy)]
pub struct Unfinished {
    pub failed_jobs: usize,
    pub removed_files: usize,
}

impl Engine {
    /// `/api/ready`: the catalog answers a query and the data folder takes a write (a probe file
    /// in staging, where uploads are written first); otherwise what failed. Blocking.
    pub fn readiness(&self) -> std::result::Result<(), String> {
        self.catalog
            .ping()
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

    /// The compactor's totals since the engine opened.
    pub fn compaction_figures(&self) -> &super::CompactionFigures {
        &self.compactor.figures
    }

    /// Jobs by kind and status, the catalog's object counts and its size on disk. Blocking.
    pub fn catalog_figures(&self) -> Result<CatalogFigures> {
        self.catalog.figures()
    }

    /// After a graceful shutdown's wait: in one catalog step, jobs still IN PROGRESS become
    /// FAILED. If any was, or a commit is still pending, staging is emptied, files no manifest row
    /// lists are removed and `exit` is called, before any other catalog write commits, so that no actor still
    /// committing reaches its transaction (`exit` is meant to end the process). Returns
    /// `Ok(None)` when nothing was left unfinished.
    pub fn fail_unfinished(&self, exit: impl FnOnce(Unfinished)) -> Result<Option<Unfinished>> {
        let mut exit = Some(exit);
        let mut exit_once = |u: Unfinished| {
            if let Some(exit) = exit.take() {
                exit(u)
            }
        };
        let pending = || self.commit_figures().pending;
        let errors = ["The service shut down before this job finished".to_string()];
        let mut unfinished = None;
        self.catalog
            .fail_in_progress_jobs(self.jobs.node_id(), &errors, &mut |failed, listed| {
                if failed == 0 && pending() <= 0 {
                    return Ok(());
                }
                // With a shared catalog, other nodes' staging and unlisted files may be in this
                // folder too: left alone (see `recover`).
                let shared = self.settings.shared_catalog;
                // A thread of a dropped request may still be writing there; the next start retries.
                if !shared {
                    if let Err(e) = std::fs::remove_dir_all(self.storage.staging_root()) {
                        tracing::warn!(error = %e, "shutdown: staging not fully removed; the next start will");
                    }
                }
                let removed_files = match shared {
                    true => 0,
                    false => remove_unlisted_files(&listed()?, &self.storage)?,
                };
                let found = Unfinished {
                    failed_jobs: failed,
                    removed_files,
                };
                unfinished = Some(found);
                exit_once(found);
                Ok(())
            })?;
        Ok(unfinished)
    }
}
