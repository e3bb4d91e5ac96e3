//! Engine side of `rapid-rs admin`: what operators do to a data folder outside the HTTP API.
//! Each command is one function here, so the CLI reaches into the engine only through them:
//! - [`keys::rotate_signing_key`], [`keys::reset_client_secret`], [`keys::admin_client_id`];
//! - [`backup::backup`] (online: SQLite's backup API, then the files the copied catalog lists)
//!   and [`backup::restore`];
//! - [`check::check`] (catalog against files, optionally repairing what is safe to repair);
//! - [`compact::compact`] (small data files merged, as the service's compactor does).
//!
//! - [`clients::create_client`]: through [`crate::auth::Auth`] itself, with the service's own rules.

pub mod audit;
pub mod backup;
pub mod check;
pub mod clients;
pub mod compact;
pub mod keys;

use crate::catalog::{Catalog, StoredFiles};
use crate::error::Result;

/// The catalog file of a data folder.
pub use crate::storage::CATALOG_FILE;

/// A listed file: where it is (relative to the data folder) and its recorded size.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ListedFile {
    pub rel: String,
    pub bytes: u64,
    /// Rows recorded for a Parquet data file (raw files: None).
    pub rows: Option<u64>,
}

/// Every file the catalog lists (Parquet data files and raw uploads), as one consistent read.
pub fn listed_files(catalog: &dyn Catalog) -> Result<Vec<ListedFile>> {
    Ok(listed_of(&catalog.stored_files()?))
}

/// The files of one manifest read, relative to the data folder.
fn listed_of(stored: &StoredFiles) -> Vec<ListedFile> {
    let data = stored.data.iter().map(|f| ListedFile {
        rel: f.path.clone(),
        bytes: f.bytes as u64,
        rows: Some(f.rows as u64),
    });
    let raw = stored.raw.iter().map(|r| ListedFile {
        rel: crate::storage::keys::raw_key(&r.key, r.version, &r.raw_filename),
        bytes: r.bytes as u64,
        rows: None,
    });
    data.chain(raw).collect()
}
