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
use rapid_actors::engine::Engine;

use crate::state::AppState;

/// Steps 1 and 2.
pub async fn drain(handle: ServerHandle, engine: Engine, timeout: Duration) {
    let deadline = Instant::now() + timeout;
    tracing::info!(
        timeout_seconds = timeout.as_secs(),
        "shutdown signal received: no new connections; finishing running requests"
    );
    handle.stop(true).await;
    if !super::inflight::wait_for_commits(&engine, deadline).await {
        tracing::warn!(
            pending = super::inflight::pending_commits(&engine),
            "shutdown timeout: upload commits still pending are failed"
        );
    }
}

/// Step 3, once the server has stopped. Returns only when nothing was left unfinished; otherwise
/// the process exits inside the catalog lock, so no actor still committing reaches its
/// transaction (it may have moved files into place already: those are removed first).
pub fn fail_unfinished(state: &AppState) {
    let outcome = state.engine.fail_unfinished(|unfinished| {
        tracing::warn!(
            failed_jobs = unfinished.failed_jobs,
            removed_files = unfinished.removed_files,
            "shutdown complete: unfinished jobs failed, their files removed"
        );
        std::process::exit(0)
    });
    match outcome {
        Ok(_) => tracing::info!("shutdown complete: nothing was left unfinished"),
        Err(e) => {
            tracing::error!(error = %e, "shutdown: failing unfinished jobs did not complete; the next start will");
            std::process::exit(1)
        }
    }
}
