//! Work that graceful shutdown waits for: upload commits handed to dataset actors (counted by the
//! engine, which starts them; also a metric). Upload requests still being received are running
//! requests, which the HTTP server itself waits for.

use std::time::{Duration, Instant};

use rapid_actors::engine::Engine;

/// Upload commits pending now.
pub fn pending_commits(engine: &Engine) -> i64 {
    engine.commit_figures().pending
}

/// Waits until no commit is pending or `deadline` passes; true when none is pending.
pub async fn wait_for_commits(engine: &Engine, deadline: Instant) -> bool {
    loop {
        if pending_commits(engine) <= 0 {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        actix_web::rt::time::sleep(Duration::from_millis(20)).await;
    }
}
