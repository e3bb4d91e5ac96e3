//! Engine side of `rapid-rs admin`: what operators do to a data folder outside the HTTP API.
//! Each command is one function here, so the CLI reaches into the engine only through them:
//! - [`keys::rotate_signing_key`], [`keys::reset_client_secret`], [`keys::admin_client_id`];
//! - [`backup::backup`] (online: SQLite's backup API, then the files the copied catalog lists)
//!   and [`backup::restore`];
//! - [`check::check`] (catalog against files, optionally repairing what is safe to repair).
//!
//! - [`clients::create_client`]: through [`crate::auth::Auth`] itself, with the service's own rules.

pub mod backup;
pub mod check;
pub mod clients;
pub mod keys;

use std::path::Path;

use rusqlite::{Connection, OpenFlags};

use crate::error::{Error, Result};

/// The catalog file of a data folder.
pub use crate::storage::CATALOG_FILE;

/// A connection to an existing catalog (never creating one), waiting for the service's writers.
pub(crate) fn open_existing(data_dir: &Path) -> Result<Connection> {
    let path = crate::storage::Storage::new(data_dir).catalog_file();
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
    Ok(conn)
}

/// A listed file: where it is (relative to the data folder) and its recorded size.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ListedFile {
    pub rel: String,
    pub bytes: u64,
    /// Rows recorded for a Parquet data file (raw files: None).
    pub rows: Option<u64>,
}

/// Every file the catalog lists (Parquet data files and raw uploads), as one consistent read.
pub fn listed_files(conn: &Connection) -> Result<Vec<ListedFile>> {
    let mut out = Vec::new();
    let mut stmt = conn.prepare("SELECT path, bytes, rows FROM data_files ORDER BY path")?;
    for row in stmt.query_map([], |r| {
        Ok(ListedFile {
            rel: r.get(0)?,
            bytes: r.get::<_, i64>(1)? as u64,
            rows: Some(r.get::<_, i64>(2)? as u64),
        })
    })? {
        out.push(row?);
    }
    let mut stmt = conn.prepare(
        "SELECT d.layer, d.domain, d.dataset_key, r.version, r.raw_filename, r.bytes
         FROM raw_files r JOIN datasets d ON d.id = r.dataset_id ORDER BY 1, 2, 3, 4, 5",
    )?;
    for row in stmt.query_map([], |r| {
        let key = crate::key::DatasetKey::new(
            &r.get::<_, String>(0)?,
            &r.get::<_, String>(1)?,
            &r.get::<_, String>(2)?,
        );
        let rel = crate::storage::keys::raw_key(&key, r.get(3)?, &r.get::<_, String>(4)?);
        Ok(ListedFile {
            rel,
            bytes: r.get::<_, i64>(5)? as u64,
            rows: None,
        })
    })? {
        out.push(row?);
    }
    Ok(out)
}
