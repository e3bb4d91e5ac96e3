//! Connections that only read, beside the writer: the unique index's checks before an upload's
//! answer decode blocks of keys for milliseconds, and on the writer's lock they made every
//! other catalog call wait, commits included (issue 52: 8 keyed uploaders). WAL mode lets a
//! reader keep its snapshot while the writer commits; a read transaction begun after a commit
//! returned sees it.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use rusqlite::Connection;

use crate::error::{Error, Result};

/// As many readers as checks usually run at once on a small machine; more wait their turn.
const READERS: usize = 2;

pub(super) struct Readers {
    conns: Vec<Mutex<Connection>>,
    next: AtomicUsize,
}

impl Readers {
    /// Opens the readers on the catalog `file` (already migrated, in WAL mode).
    pub(super) fn open(file: &Path) -> Result<Readers> {
        let conns = (0..READERS)
            .map(|_| {
                let conn = Connection::open(file)?;
                conn.pragma_update(None, "query_only", true)?;
                // A check reads a grown index's blocks once (tens of MB for 10M keys): mapped,
                // they are read from the OS's cache in place rather than copied into a
                // per-connection cache that starts cold.
                conn.pragma_update(None, "mmap_size", 1i64 << 30)?;
                conn.busy_timeout(std::time::Duration::from_secs(5))?;
                Ok(Mutex::new(conn))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Readers {
            conns,
            next: AtomicUsize::new(0),
        })
    }

    /// Runs `f` in one read transaction (one snapshot) on a free reader, or waits for one.
    pub(super) fn read<R>(
        &self,
        f: impl FnOnce(&rusqlite::Transaction<'_>) -> Result<R>,
    ) -> Result<R> {
        let free = self.conns.iter().find_map(|c| c.try_lock().ok());
        let mut conn = match free {
            Some(conn) => conn,
            None => {
                let turn = self.next.fetch_add(1, Ordering::Relaxed) % self.conns.len();
                self.conns[turn]
                    .lock()
                    .map_err(|_| Error::internal("catalog reader poisoned by an earlier panic"))?
            }
        };
        let tx = conn.transaction()?;
        let out = f(&tx)?;
        tx.commit()?;
        Ok(out)
    }
}
