//! The SQLite catalog: subjects, permissions, protected domains, datasets, schema versions.
//!
//! One connection, opened once at start-up in WAL mode and shared behind a std `Mutex`: every
//! statement is short (no I/O but SQLite's own), so a blocking lock held for microseconds is cheaper
//! than an async one, and SQLite serialises writers anyway.

mod migrations;

use std::path::Path;
use std::sync::{Arc, Mutex};

use rusqlite::Connection;

use crate::error::{Error, Result};

#[derive(Clone)]
pub struct Catalog {
    conn: Arc<Mutex<Connection>>,
}

impl Catalog {
    /// Opens (creating if needed) `catalog.sqlite` in `data_dir` and brings it to the newest schema.
    pub fn open(data_dir: &Path) -> Result<Catalog> {
        let file = crate::storage::Storage::new(data_dir).catalog_file();
        let at = || format!("opening the catalog {}", file.display());
        std::fs::create_dir_all(data_dir).map_err(|e| Error::from(e).context(at()))?;
        let mut conn = Connection::open(&file).map_err(|e| Error::from(e).context(at()))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        // FULL: a commit returns once its WAL frames are fsynced, so acknowledged changes survive
        // a power cut (NORMAL may roll the last commits back). See the storage module's discipline.
        let synchronous = match crate::storage::durability() {
            crate::storage::Durability::Full => "FULL",
            crate::storage::Durability::Off => "NORMAL",
        };
        conn.pragma_update(None, "synchronous", synchronous)?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        migrations::apply(&mut conn)?;
        Ok(Catalog {
            conn: Arc::new(Mutex::new(conn)),
        })
    }

    /// Runs `f` with the connection. Keep `f` short: it holds the catalog lock.
    pub fn with<R>(&self, f: impl FnOnce(&mut Connection) -> Result<R>) -> Result<R> {
        let mut conn = self
            .conn
            .lock()
            .map_err(|_| Error::internal("catalog lock poisoned by an earlier panic"))?;
        f(&mut conn)
    }

    /// Runs `f` inside one transaction, committed only when `f` succeeds.
    pub fn transaction<R>(
        &self,
        f: impl FnOnce(&rusqlite::Transaction<'_>) -> Result<R>,
    ) -> Result<R> {
        self.with(|conn| {
            let tx = conn.transaction()?;
            let out = f(&tx)?;
            tx.commit()?;
            Ok(out)
        })
    }
}

/// Now as the RFC 3339 UTC text stored in `created_at` columns.
pub fn now_text() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reopening_keeps_rows_and_does_not_reapply_migrations() {
        let dir = tempfile::tempdir().unwrap();
        let cat = Catalog::open(dir.path()).unwrap();
        cat.with(|c| {
            c.execute(
                "INSERT INTO protected_domains (domain, created_at) VALUES ('land', 'now')",
                [],
            )?;
            Ok(())
        })
        .unwrap();
        drop(cat);
        let cat = Catalog::open(dir.path()).unwrap();
        let n: i64 = cat
            .with(|c| Ok(c.query_row("SELECT count(*) FROM protected_domains", [], |r| r.get(0))?))
            .unwrap();
        assert_eq!(n, 1);
    }

    #[test]
    fn commits_are_synced_by_default() {
        let dir = tempfile::tempdir().unwrap();
        let cat = Catalog::open(dir.path()).unwrap();
        let level: i64 = cat
            .with(|c| Ok(c.query_row("PRAGMA synchronous", [], |r| r.get(0))?))
            .unwrap();
        assert_eq!(level, 2, "synchronous=FULL");
    }

    #[test]
    fn catalog_uses_wal_journal() {
        let dir = tempfile::tempdir().unwrap();
        let cat = Catalog::open(dir.path()).unwrap();
        let mode: String = cat
            .with(|c| Ok(c.query_row("PRAGMA journal_mode", [], |r| r.get(0))?))
            .unwrap();
        assert_eq!(mode.to_lowercase(), "wal");
    }
}
