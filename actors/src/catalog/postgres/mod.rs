//! The PostgreSQL catalog (`RAPID_CATALOG_URL=postgres://...`), shared by every node of a
//! scale-out install. Same semantics and refusals as the SQLite catalog (the conformance suite
//! runs on both); what differs is that several connections and nodes write at once, so:
//! - writes to one dataset (create, schema versions, upload commits, raw file deletion, delete)
//!   take `pg_advisory_xact_lock(hash of layer/domain/dataset)` in their transaction, and check
//!   under it (READ COMMITTED: a statement after the lock sees every commit made before it);
//!   readers of a version's files for a query take the same lock shared while they lease them;
//! - reads of several tables that must agree run in one REPEATABLE READ snapshot;
//! - inserts that may collide use `ON CONFLICT DO NOTHING` instead of failing the transaction.

mod audit;
mod changes;
mod datasets;
mod erasure;
mod event_tables;
mod events;
mod history;
mod jobs;
mod manifest;
mod migrations;
mod policies;
mod pool;
mod profiles;
mod rows;
mod subjects;
mod swap;
mod unique_keys;

use tokio_postgres::Config;

use crate::catalog::interface::Catalog;
use crate::catalog::types::{CatalogFigures, COUNT_NAMES};
use crate::error::{Error, Result};
use pool::{Begin, Db, Pool};

pub(crate) struct PostgresCatalog {
    pool: Pool,
}

/// Whether a catalog URL names PostgreSQL.
pub(crate) fn is_postgres_url(url: &str) -> bool {
    url.starts_with("postgres://") || url.starts_with("postgresql://")
}

/// The URL's connection settings; the message never repeats the URL (it may hold a password).
fn parse(url: &str) -> Result<Config> {
    if !is_postgres_url(url) {
        return Err(Error::invalid(
            "the catalog URL must start with postgres:// or postgresql://",
        ));
    }
    url.parse::<Config>()
        .map_err(|e| Error::invalid(format!("the PostgreSQL catalog URL is not valid: {e}")))
}

/// Where a config points, for messages: user, host and database, no password.
fn describe(config: &Config) -> String {
    let host = match config.get_hosts().first() {
        Some(tokio_postgres::config::Host::Tcp(h)) => h.clone(),
        Some(tokio_postgres::config::Host::Unix(p)) => p.display().to_string(),
        None => "localhost".into(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    format!(
        "postgres://{}@{host}:{port}/{}",
        config.get_user().unwrap_or(""),
        config.get_dbname().unwrap_or("")
    )
}

impl PostgresCatalog {
    /// Connects to the catalog at `url` and brings it to the newest schema (creating it in an
    /// empty database).
    pub(crate) fn open(url: &str) -> Result<PostgresCatalog> {
        PostgresCatalog::open_config(parse(url)?)
    }

    /// As [`Self::open`], with the connection settings given (tests: a `search_path` per case).
    pub(crate) fn open_config(config: Config) -> Result<PostgresCatalog> {
        let at = describe(&config);
        let catalog = PostgresCatalog {
            pool: Pool::new(config)?,
        };
        catalog
            .pool
            .transaction(Begin::Write, migrations::apply)
            .map_err(|e| e.context(format!("opening the catalog {at}")))?;
        Ok(catalog)
    }

    /// The existing catalog at `url` (never creating one, no migration), for `rapid-rs admin`.
    pub(crate) fn open_existing(url: &str) -> Result<PostgresCatalog> {
        PostgresCatalog::open_existing_config(parse(url)?)
    }

    fn open_existing_config(config: Config) -> Result<PostgresCatalog> {
        let at = describe(&config);
        let catalog = PostgresCatalog {
            pool: Pool::new(config)?,
        };
        match catalog.pool.with(migrations::current)? {
            None => Err(Error::not_found(format!("no rapid-rs catalog at {at}"))),
            Some(version) => {
                migrations::check_not_newer(version)?;
                Ok(catalog)
            }
        }
    }

    fn with<R>(&self, f: impl FnOnce(&Db<'_>) -> Result<R>) -> Result<R> {
        self.pool.with(f)
    }

    fn transaction<R>(&self, f: impl FnOnce(&Db<'_>) -> Result<R>) -> Result<R> {
        self.pool.transaction(Begin::Write, f)
    }

    /// One snapshot for several reads that must agree.
    fn snapshot<R>(&self, f: impl FnOnce(&Db<'_>) -> Result<R>) -> Result<R> {
        self.pool.transaction(Begin::Snapshot, f)
    }
}

/// Serialises writers of the dataset `key` across nodes until the transaction ends.
fn lock_dataset(db: &Db<'_>, key: &crate::key::DatasetKey) -> Result<()> {
    db.execute(
        "SELECT pg_advisory_xact_lock(hashtextextended($1 || '/' || $2 || '/' || $3, 0))",
        &[&key.layer, &key.domain, &key.dataset],
    )?;
    Ok(())
}

/// As [`lock_dataset`] for the dataset with id `dataset_id` (no lock when there is none), shared
/// or exclusive. The same hash: the row holds the key's layer, domain and lower-case name.
fn lock_dataset_id(db: &Db<'_>, dataset_id: i64, shared: bool) -> Result<()> {
    let sql = if shared {
        "SELECT pg_advisory_xact_lock_shared(hashtextextended(layer || '/' || domain || '/' || dataset_key, 0))
         FROM datasets WHERE id = $1"
    } else {
        "SELECT pg_advisory_xact_lock(hashtextextended(layer || '/' || domain || '/' || dataset_key, 0))
         FROM datasets WHERE id = $1"
    };
    db.execute(sql, &[&dataset_id])?;
    Ok(())
}

impl Catalog for PostgresCatalog {
    /// Every node of a scale-out install opens this one catalog.
    fn is_shared(&self) -> bool {
        true
    }

    fn ping(&self) -> Result<()> {
        self.with(|db| {
            db.query_one("SELECT count(*) FROM datasets", &[])?;
            Ok(())
        })
    }

    fn figures(&self) -> Result<CatalogFigures> {
        self.snapshot(|db| {
            let jobs = db
                .query(
                    "SELECT kind, status, count(*) FROM jobs GROUP BY kind, status",
                    &[],
                )?
                .iter()
                .map(|r| Ok((r.try_get(0)?, r.try_get(1)?, r.try_get::<_, i64>(2)?)))
                .collect::<Result<Vec<_>>>()?;
            let row = db.query_one(
                "SELECT (SELECT count(*) FROM datasets), (SELECT count(*) FROM schema_versions),
                        (SELECT count(*) FROM data_files), (SELECT count(*) FROM raw_files),
                        (SELECT coalesce(sum(rows), 0)::BIGINT FROM data_files),
                        (SELECT coalesce(sum(bytes), 0)::BIGINT FROM data_files),
                        (SELECT count(*) FROM subjects),
                        (SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::BIGINT
                         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                         WHERE n.nspname = current_schema() AND c.relkind = 'r'),
                        (SELECT count(DISTINCT path) FROM retired_files
                         WHERE path NOT IN (SELECT path FROM data_files)),
                        (SELECT coalesce(sum(bytes), 0)::BIGINT FROM
                            (SELECT path, max(bytes) AS bytes FROM retired_files
                             WHERE path NOT IN (SELECT path FROM data_files) GROUP BY path) r)",
                &[],
            )?;
            let mut counts = [0i64; 9];
            for (i, slot) in counts.iter_mut().enumerate() {
                // Column 7 is the catalog's own size (file_bytes below).
                *slot = row.try_get(if i < 7 { i } else { i + 1 })?;
            }
            Ok(CatalogFigures {
                jobs,
                counts: COUNT_NAMES.into_iter().zip(counts).collect(),
                file_bytes: row.try_get::<_, i64>(7)?.max(0) as u64,
            })
        })
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_audit;
#[cfg(test)]
mod tests_events;
#[cfg(test)]
mod tests_locks;
