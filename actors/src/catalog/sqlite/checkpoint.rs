//! The WAL checkpointed from a connection of its own, off the commit path.
//!
//! SQLite's automatic checkpoint runs inside the commit that crosses its threshold (1,000 pages),
//! under the catalog's one lock: that commit copies a thousand pages into the catalog file and
//! fsyncs it while every other catalog call waits. The unique index makes this frequent on a
//! grown dataset: an append's keys land on as many B-tree pages as it has keys, so by a few hundred
//! thousand keys every other append paid a checkpoint (issue 33's growth benchmark). Here a thread
//! runs a PASSIVE checkpoint (it never waits for, nor blocks, readers and writers) a few times a
//! second, and the writer's own threshold is raised to a backstop.

use std::path::Path;
use std::sync::mpsc::{channel, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::Connection;

use crate::error::Result;

/// How often the thread checkpoints.
const EVERY: Duration = Duration::from_millis(200);

/// The writer's own automatic checkpoint, should the thread fall behind: 16,384 pages (64 MiB).
pub(super) const BACKSTOP_PAGES: i64 = 16_384;

/// The checkpointing thread; dropping it stops the thread and closes its connection (before the
/// writer's, so the writer stays the last to close and clean up the WAL as without it).
pub(super) struct Checkpointer {
    stop: Option<Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Checkpointer {
    /// Starts the thread on the catalog `file`.
    pub(super) fn start(file: &Path) -> Result<Checkpointer> {
        let conn = Connection::open(file)?;
        let (stop, stopped) = channel::<()>();
        let thread = std::thread::Builder::new()
            .name("rapid-checkpoint".into())
            .spawn(move || {
                while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(EVERY) {
                    if let Err(e) = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))
                    {
                        tracing::warn!(error = %e, "catalog checkpoint failed");
                    }
                }
            })?;
        Ok(Checkpointer {
            stop: Some(stop),
            thread: Some(thread),
        })
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
