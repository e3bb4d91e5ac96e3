//! The catalog: subjects, permissions, protected domains, datasets, schema versions, the
//! manifest of files and jobs. One interface ([`Catalog`], in `interface.rs`) with plain types
//! (`types.rs`) and two implementations, the only places that hold SQL: SQLite in the data folder
//! ([`sqlite::SqliteCatalog`], the default) and PostgreSQL ([`postgres::PostgresCatalog`], when
//! the catalog URL is `postgres://...`, shared by several nodes). The engine and `rapid-rs admin`
//! open it through [`open`] and share it as [`SharedCatalog`].

#[cfg(test)]
pub(crate) mod conformance;
mod events;
pub(crate) mod interface;
mod key_runs;
pub(crate) mod postgres;
pub(crate) mod refusal;
pub(crate) mod sqlite;
mod types;

use std::path::Path;
use std::sync::Arc;

pub(crate) use events::{DeliveryRow, DeliveryState, EventRow, EventsCatalog, WebhookRow};
pub(crate) use interface::Catalog;
pub(crate) use rapid_rows::key_list::KeyList;
pub use types::*;

use crate::error::Result;
use crate::storage::Durability;

/// The catalog as every part of the engine holds it.
pub(crate) type SharedCatalog = Arc<dyn Catalog>;

/// The catalog URL that selects PostgreSQL, if any: `None` or empty means SQLite in the data folder.
fn postgres_url(url: Option<&str>) -> Option<&str> {
    url.map(str::trim).filter(|u| !u.is_empty())
}

/// Opens (creating if needed) the catalog and brings it to the newest schema: the SQLite file of
/// the data folder `data_dir` when `url` is unset or empty (its commits synced as `durability`
/// says), else the PostgreSQL catalog at `url` (whose own settings decide).
pub(crate) fn open(
    data_dir: &Path,
    url: Option<&str>,
    durability: Durability,
) -> Result<SharedCatalog> {
    match postgres_url(url) {
        None => Ok(Arc::new(sqlite::SqliteCatalog::open_with(
            data_dir, durability,
        )?)),
        Some(url) => Ok(Arc::new(postgres::PostgresCatalog::open(url)?)),
    }
}

/// The audit log's store of a data folder: its own SQLite file beside a SQLite catalog (synced
/// as `durability` says), the catalog's database with a PostgreSQL one (see `crate::audit`).
pub(crate) fn open_audit(
    data_dir: &Path,
    url: Option<&str>,
    durability: Durability,
) -> Result<Arc<dyn crate::audit::AuditStore>> {
    match postgres_url(url) {
        None => Ok(Arc::new(crate::audit::store::SqliteAudit::open(
            &data_dir.join(crate::audit::store::AUDIT_FILE),
            durability,
        )?)),
        Some(url) => Ok(Arc::new(postgres::PostgresCatalog::open(url)?)),
    }
}

/// Opens the existing catalog (never creating one), for `rapid-rs admin`.
pub(crate) fn open_existing(data_dir: &Path, url: Option<&str>) -> Result<SharedCatalog> {
    match postgres_url(url) {
        None => Ok(Arc::new(sqlite::SqliteCatalog::open_existing(data_dir)?)),
        Some(url) => Ok(Arc::new(postgres::PostgresCatalog::open_existing(url)?)),
    }
}

/// Now as the RFC 3339 UTC text stored in `created_at` columns.
pub(crate) fn now_text() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// The time `ago` before now, as [`now_text`] writes it (texts compare as the times do).
pub(crate) fn time_text_before(ago: std::time::Duration) -> String {
    let ago = chrono::Duration::from_std(ago).unwrap_or(chrono::Duration::MAX);
    let then = chrono::Utc::now()
        .checked_sub_signed(ago)
        .unwrap_or(chrono::DateTime::<chrono::Utc>::MIN_UTC);
    then.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}
