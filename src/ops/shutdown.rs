//! Graceful shutdown on SIGTERM or SIGINT:
//! 1. stop accepting connections; requests already running (uploads being received among them)
//!    get up to `RAPID_SHUTDOWN_TIMEOUT_SECONDS` to finish (actix-server drops the rest);
//! 2. upload commits already handed to dataset actors get what is left of that time;
//! 3. whatever is still unfinished fails cleanly, under the catalog lock: jobs IN PROGRESS become
//!    FAILED, staging is emptied and files no manifest row lists are removed. The process then
//!    exits without releasing that lock, so no commit can record anything afterwards: the store
//!    holds every finished upload and nothing of the others.

use std::time::{Duration, Instant};

use actix_web::dev::ServerHandle;
use rapid_actors::catalog::now_text;
use rapid_actors::dataset::manifest::remove_unlisted_files;
use rapid_actors::jobs::{FAILED, IN_PROGRESS};
use rusqlite::params;

use crate::state::AppState;

/// Steps 1 and 2.
pub async fn drain(handle: ServerHandle, timeout: Duration) {
    let deadline = Instant::now() + timeout;
    tracing::info!(
        timeout_seconds = timeout.as_secs(),
        "shutdown signal received: no new connections; finishing running requests"
    );
    handle.stop(true).await;
    if !super::inflight::wait_for_commits(deadline).await {
        tracing::warn!(
            pending = super::inflight::pending_commits(),
            "shutdown timeout: upload commits still pending are failed"
        );
    }
}

/// Step 3, once the server has stopped. Returns only when nothing was left unfinished; otherwise
/// the process exits inside the catalog lock, so no actor still committing reaches its
/// transaction (it may have moved files into place already: those are removed here).
pub fn fail_unfinished(state: &AppState) {
    let storage = state.registry.storage().clone();
    let outcome = state.registry.catalog().with(|c| {
        let failed = c.execute(
            "UPDATE jobs SET status = ?1, errors = ?2, finished_at = ?3 WHERE status = ?4",
            params![
                FAILED,
                serde_json::json!(["The service shut down before this job finished"]).to_string(),
                now_text(),
                IN_PROGRESS
            ],
        )?;
        if failed == 0 && super::inflight::pending_commits() <= 0 {
            return Ok(());
        }
        // A thread of a dropped request may still be writing there; the next start retries.
        if let Err(e) = std::fs::remove_dir_all(storage.staging_root()) {
            tracing::warn!(error = %e, "shutdown: staging not fully removed; the next start will");
        }
        let removed = remove_unlisted_files(c, storage.root())?;
        tracing::warn!(
            failed_jobs = failed,
            removed_files = removed,
            "shutdown complete: unfinished jobs failed, their files removed"
        );
        std::process::exit(0)
    });
    match outcome {
        Ok(()) => tracing::info!("shutdown complete: nothing was left unfinished"),
        Err(e) => {
            tracing::error!(error = %e, "shutdown: failing unfinished jobs did not complete; the next start will");
            std::process::exit(1)
        }
    }
}
