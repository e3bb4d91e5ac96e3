//! The catalog: subjects, permissions, protected domains, datasets, schema versions, the
//! manifest of files and jobs. One interface ([`Catalog`], in `interface.rs`) with plain types
//! (`types.rs`); today's implementation is SQLite ([`sqlite::SqliteCatalog`]), the one place that
//! holds SQL. The engine and `rapid-rs admin` open it through [`open`] and share it as
//! [`SharedCatalog`].

#[cfg(test)]
pub(crate) mod conformance;
pub(crate) mod interface;
pub mod refusal;
pub(crate) mod sqlite;
mod types;

use std::path::Path;
use std::sync::Arc;

pub use interface::Catalog;
pub use types::*;

use crate::error::Result;

/// The catalog as every part of the engine holds it.
pub type SharedCatalog = Arc<dyn Catalog>;

/// Opens (creating if needed) the catalog of the data folder `data_dir` and brings it to the
/// newest schema.
pub fn open(data_dir: &Path) -> Result<SharedCatalog> {
    Ok(Arc::new(sqlite::SqliteCatalog::open(data_dir)?))
}

/// Opens the existing catalog of a data folder (never creating one), for `rapid-rs admin`.
pub fn open_existing(data_dir: &Path) -> Result<SharedCatalog> {
    Ok(Arc::new(sqlite::SqliteCatalog::open_existing(data_dir)?))
}

/// Now as the RFC 3339 UTC text stored in `created_at` columns.
pub fn now_text() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}
