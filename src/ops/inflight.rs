//! Work that graceful shutdown waits for: upload commits handed to dataset actors (their
//! mailboxes' depth, also a metric). Upload requests still being received are running requests,
//! which the HTTP server itself waits for.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant};

static COMMITS: AtomicI64 = AtomicI64::new(0);

/// Held from the moment an upload is handed to its dataset actor until its commit ends.
pub struct CommitGuard(());

/// Counts one upload commit as pending until the guard drops.
pub fn commit_started() -> CommitGuard {
    COMMITS.fetch_add(1, Ordering::SeqCst);
    CommitGuard(())
}

impl Drop for CommitGuard {
    fn drop(&mut self) {
        COMMITS.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Upload commits pending now.
pub fn pending_commits() -> i64 {
    COMMITS.load(Ordering::SeqCst)
}

/// Waits until no commit is pending or `deadline` passes; true when none is pending.
pub async fn wait_for_commits(deadline: Instant) -> bool {
    loop {
        if pending_commits() <= 0 {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        actix_web::rt::time::sleep(Duration::from_millis(20)).await;
    }
}
