//! The SQLite catalog: `catalog.sqlite` in the data folder.
//!
//! One connection, opened once at start-up in WAL mode and shared behind a std `Mutex`: every
//! statement is short (no I/O but SQLite's own), so a blocking lock held for microseconds is cheaper
//! than an async one, and SQLite serialises writers anyway. Each interface method is one lock
//! hold, and one transaction when it writes more than one row.

mod changes;
mod checkpoint;
mod datasets;
mod erasure;
mod event_tables;
mod events;
mod history;
mod history_catalog;
mod jobs;
mod manifest;
mod migrations;
mod policies;
mod profiles;
mod readers;
mod rollback;
mod rows;
mod subjects;
mod swap;
mod unique_keys;

use std::path::Path;
use std::sync::{Arc, Mutex};

use rusqlite::{Connection, OpenFlags};

use crate::catalog::interface::Catalog;
use crate::catalog::types::{CatalogFigures, COUNT_NAMES};
use crate::error::{Error, Result};

/// The catalog file of a data folder.
pub(crate) use crate::storage::CATALOG_FILE;

#[derive(Clone)]
pub(crate) struct SqliteCatalog {
    /// Declared before `conn`: dropped (its thread stopped) before the writer closes.
    checkpointer: Option<Arc<checkpoint::Checkpointer>>,
    /// Connections for the unique index's checks, off the writer's lock (none for `admin`).
    readers: Option<Arc<readers::Readers>>,
    conn: Arc<Mutex<Connection>>,
    /// The catalog file, for its size on disk.
    file: std::path::PathBuf,
    /// Only tests set it: two handles on one file then stand in for two nodes on one catalog.
    shared: bool,
}

impl SqliteCatalog {
    /// Opens (creating if needed) `catalog.sqlite` in `data_dir` and brings it to the newest
    /// schema, fully durable (tests; the engine opens it with its own setting).
    #[cfg(test)]
    pub(crate) fn open(data_dir: &Path) -> Result<SqliteCatalog> {
        SqliteCatalog::open_with(data_dir, crate::storage::Durability::Full)
    }

    /// Opens (creating if needed) `catalog.sqlite` in `data_dir` and brings it to the newest
    /// schema, its commits synced as `durability` says.
    pub(crate) fn open_with(
        data_dir: &Path,
        durability: crate::storage::Durability,
    ) -> Result<SqliteCatalog> {
        let file = crate::storage::Storage::new(data_dir).catalog_file();
        let at = || format!("opening the catalog {}", file.display());
        std::fs::create_dir_all(data_dir).map_err(|e| Error::from(e).context(at()))?;
        let mut conn = Connection::open(&file).map_err(|e| Error::from(e).context(at()))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        // FULL: a commit returns once its WAL frames are fsynced, so acknowledged changes survive
        // a power cut (NORMAL may roll the last commits back). See the storage module's discipline.
        conn.pragma_update(None, "synchronous", durability.sqlite_synchronous())?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        // The unique index's lookups and inserts touch pages all over its B-tree (keys arrive in
        // any order): a 64 MiB page cache (default 2 MiB) keeps them in memory, not in syscalls.
        conn.pragma_update(None, "cache_size", -65536)?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        migrations::apply(&mut conn)?;
        // Checkpoints run beside the writer (checkpoint.rs); its own is only a backstop, and the
        // WAL file is cut back once a checkpoint has emptied it.
        conn.pragma_update(None, "wal_autocheckpoint", checkpoint::BACKSTOP_PAGES)?;
        conn.pragma_update(None, "journal_size_limit", 64 * 1024 * 1024)?;
        let checkpointer = checkpoint::Checkpointer::start(&file)?;
        let readers = readers::Readers::open(&file)?;
        let mut catalog = SqliteCatalog::wrap(conn, file);
        catalog.checkpointer = Some(Arc::new(checkpointer));
        catalog.readers = Some(Arc::new(readers));
        Ok(catalog)
    }

    /// The existing catalog of a data folder (never creating one, no migration), waiting for the
    /// service's writers: what `rapid-rs admin` works on, also beside a running service.
    pub(crate) fn open_existing(data_dir: &Path) -> Result<SqliteCatalog> {
        let path = data_dir.join(CATALOG_FILE);
        if !path.is_file() {
            return Err(Error::not_found(format!(
                "no catalog at {}: is this a rapid-rs data folder?",
                path.display()
            )));
        }
        let conn = Connection::open_with_flags(
            &path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.busy_timeout(std::time::Duration::from_secs(30))?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        Ok(SqliteCatalog::wrap(conn, path))
    }

    fn wrap(conn: Connection, file: std::path::PathBuf) -> SqliteCatalog {
        SqliteCatalog {
            checkpointer: None,
            readers: None,
            conn: Arc::new(Mutex::new(conn)),
            file,
            shared: false,
        }
    }

    /// This handle as one of several nodes' on a shared catalog (tests of cross-node behaviour).
    #[cfg(test)]
    pub(crate) fn shared_like_a_node(mut self) -> SqliteCatalog {
        self.shared = true;
        self
    }

    /// Runs `f` with the connection. Keep `f` short: it holds the catalog lock.
    fn with<R>(&self, f: impl FnOnce(&mut Connection) -> Result<R>) -> Result<R> {
        let mut conn = self
            .conn
            .lock()
            .map_err(|_| Error::internal("catalog lock poisoned by an earlier panic"))?;
        f(&mut conn)
    }

    /// Runs `f` in one read transaction off the writer's lock (on the writer when there are no
    /// readers). `f` must not write.
    fn read<R>(&self, f: impl FnOnce(&rusqlite::Transaction<'_>) -> Result<R>) -> Result<R> {
        match &self.readers {
            Some(readers) => readers.read(f),
            None => self.transaction(f),
        }
    }

    /// Runs `f` inside one transaction, committed only when `f` succeeds.
    fn transaction<R>(&self, f: impl FnOnce(&rusqlite::Transaction<'_>) -> Result<R>) -> Result<R> {
        self.with(|conn| {
            let tx = conn.transaction()?;
            let out = f(&tx)?;
            tx.commit()?;
            Ok(out)
        })
    }

    /// Writes one consistent copy of the whole catalog to the file `dest` (SQLite's online
    /// backup API: one read transaction; the service's writers are not blocked), as a plain
    /// file with no WAL beside it, synced.
    pub(crate) fn copy_to(&self, dest: &Path) -> Result<()> {
        crate::storage::remove_file_if_exists(dest)?;
        let mut copy = Connection::open(dest)?;
        self.with(|source| {
            let backup = rusqlite::backup::Backup::new(source, &mut copy)?;
            backup.step(-1)?;
            Ok(())
        })?;
        copy.pragma_update(None, "journal_mode", "DELETE")?;
        drop(copy);
        std::fs::File::open(dest)?.sync_all()?;
        Ok(())
    }
}

impl Catalog for SqliteCatalog {
    fn is_shared(&self) -> bool {
        self.shared
    }

    fn ping(&self) -> Result<()> {
        self.with(|c| {
            c.query_row("SELECT count(*) FROM datasets", [], |r| r.get::<_, i64>(0))?;
            Ok(())
        })
    }

    fn figures(&self) -> Result<CatalogFigures> {
        let (jobs, counts) = self.with(|c| {
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
                        (SELECT count(*) FROM subjects),
                        (SELECT count(DISTINCT path) FROM retired_files
                         WHERE path NOT IN (SELECT path FROM data_files)),
                        (SELECT coalesce(sum(bytes), 0) FROM
                            (SELECT path, max(bytes) AS bytes FROM retired_files
                             WHERE path NOT IN (SELECT path FROM data_files) GROUP BY path))",
                [],
                |r| {
                    let mut v = [0i64; 9];
                    for (i, slot) in v.iter_mut().enumerate() {
                        *slot = r.get(i)?;
                    }
                    Ok(v)
                },
            )?;
            Ok((jobs, counts))
        })?;
        let mut wal = self.file.clone().into_os_string();
        wal.push("-wal");
        let file_bytes = [self.file.clone(), wal.into()]
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
}

/// Whether `e` is a unique (or primary key) constraint failure.
fn is_unique_violation(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(f, _)
        if f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
            || f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY)
}

/// Runs an insert; `Ok(false)` when it broke a unique constraint (nothing inserted).
fn insert_if_free(result: rusqlite::Result<usize>) -> Result<bool> {
    match result {
        Ok(_) => Ok(true),
        Err(e) if is_unique_violation(&e) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests;
