//! Each stored version as a Delta Lake table (issue 36; docs/DESIGN.md, History): its folder
//! `data/{layer}/{domain}/{dataset}/{version}` holds the Hive-partitioned Parquet files and a
//! `_delta_log/` written from the catalog's commits, so DuckDB, delta-rs, Spark and Trino read
//! the current rows and any retained commit without the service.
//!
//! The catalog is the source of truth; the log is derived from it. A log starts at catalog
//! commit `first` (1 for a version logged from its first commit; the history floor for one
//! whose earlier commits had expired when its log was first written): Delta version
//! `commit - first`. Version 0 holds protocol, metadata and the files of commit `first`; each
//! later version the files its commit added and removed. Each version is put once
//! (put-if-absent, durable), after the catalog commit; [`sync`] writes whatever the catalog has
//! and the log lacks, so a crash between the two is repaired by the next commit or start-up.

mod actions;
pub mod checkpoint;

use crate::catalog::{AsOf, Catalog, CommitChanges};
use crate::error::{Error, Result};
use crate::key::DatasetRecord;
use crate::records::load_schema;
use crate::storage::{keys, ObjectStorage, Storage};

pub use actions::{rapid_commit, version_json, Table};

/// Where a version's log stands.
struct Log {
    /// The catalog commit of Delta version 0.
    first: i64,
    /// The newest catalog commit the log has.
    last: i64,
}

/// The catalog commit of Delta version 0 of the version's table, `None` when it has no log.
fn first_commit(
    objects: &dyn ObjectStorage,
    record: &DatasetRecord,
    version: i64,
) -> Result<Option<i64>> {
    let key = keys::delta_log_key(&record.key, version, 0);
    match objects.read_all(&key) {
        Ok(bytes) => rapid_commit(&bytes)
            .map(Some)
            .ok_or_else(|| Error::internal(format!("{key} names no catalog commit"))),
        Err(e) if crate::storage::is_missing(&e) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The log as it is: its first commit and the newest it holds at or below `latest` (probed
/// from `latest` down: a log lags by a commit or two at most, unless it was cut).
fn read_log(
    objects: &dyn ObjectStorage,
    record: &DatasetRecord,
    version: i64,
    latest: i64,
) -> Result<Option<Log>> {
    let Some(first) = first_commit(objects, record, version)? else {
        return Ok(None);
    };
    let mut last = latest;
    while last > first
        && !objects.exists(&keys::delta_log_key(&record.key, version, last - first))?
    {
        last -= 1;
    }
    Ok(Some(Log { first, last }))
}

fn table(catalog: &dyn Catalog, record: &DatasetRecord, version: i64, first: i64) -> Result<Table> {
    let schema = load_schema(catalog, record, Some(version))?;
    Ok(Table::new(
        keys::table_prefix(&record.key, version),
        &record.key,
        record.id,
        version,
        first,
        &schema,
    ))
}

/// The log version of catalog commit `commit` (the first holds the state at `first`).
fn derive(
    catalog: &dyn Catalog,
    record: &DatasetRecord,
    version: i64,
    table: &Table,
    commit: &CommitChanges,
    first: i64,
) -> Result<String> {
    if commit.commit != first {
        return version_json(table, commit, None);
    }
    let files = catalog.files_at_held(record.id, version, &AsOf::Commit(first), &mut |_| {})?;
    version_json(table, commit, Some(&files.files))
}

/// Brings the version's log up to the catalog's newest commit; returns how many log versions
/// were written. A log that cannot be continued exactly is written again from the history
/// floor, as a log is that starts after its version's early commits expired: one whose newest
/// commit is at or below the floor (the catalog no longer knows what the commits after it
/// removed), or one holding a version other than the catalog's (a log of another history: a
/// catalog restored from an older copy beside newer logs).
pub fn sync(
    catalog: &dyn Catalog,
    storage: &Storage,
    record: &DatasetRecord,
    version: i64,
) -> Result<usize> {
    if let Some(written) = write_missing(catalog, storage, record, version, false)? {
        return Ok(written);
    }
    tracing::warn!(
        version,
        "the Delta log disagreed with the catalog: written again"
    );
    Ok(write_missing(catalog, storage, record, version, true)?.unwrap_or(0))
}

/// The version's log written again from the history floor, whatever it holds: after an
/// erasure, whose rewrite of retired files changes what retained versions list (the one case
/// where Delta history is rewritten, as a legal erasure must). Returns how many log versions
/// were written.
pub fn rewrite(
    catalog: &dyn Catalog,
    storage: &Storage,
    record: &DatasetRecord,
    version: i64,
) -> Result<usize> {
    Ok(write_missing(catalog, storage, record, version, true)?.unwrap_or(0))
}

/// [`sync`]'s work (`again`: the log is removed first); `None` when a log version already there
/// differs from the one the catalog gives.
fn write_missing(
    catalog: &dyn Catalog,
    storage: &Storage,
    record: &DatasetRecord,
    version: i64,
    again: bool,
) -> Result<Option<usize>> {
    let (floor, latest) = catalog.history_bounds(record.id, version)?;
    if latest == 0 {
        return Ok(Some(0));
    }
    let objects = storage.objects().as_ref();
    let log = match again {
        true => None,
        false => read_log(objects, record, version, latest)?,
    };
    let (first, from) = match log {
        Some(log) if log.first > latest => (floor, None),
        Some(log) if log.last == latest => {
            checkpoint_due(storage, record, version, latest - log.first);
            return Ok(Some(0));
        }
        Some(log) if log.last >= floor => (log.first, Some(log.last + 1)),
        Some(_) => (floor, None),
        None => (floor, None),
    };
    let from = match from {
        Some(from) => from,
        None => {
            // Nothing of it is kept (or it is absent): it starts again at the floor.
            let zero = keys::delta_log_key(&record.key, version, 0);
            objects.delete_prefix(zero.rsplit_once('/').map_or(zero.as_str(), |(f, _)| f))?;
            floor
        }
    };
    let table = table(catalog, record, version, first)?;
    let mut written = 0;
    for commit in catalog.commit_changes(record.id, version, from, latest)? {
        let text = derive(catalog, record, version, &table, &commit, first)?;
        let key = keys::delta_log_key(&record.key, version, commit.commit - first);
        if objects.put_new(&key, text.as_bytes())? {
            written += 1;
        } else if objects.read_all(&key)? != text.as_bytes() {
            return Ok(None);
        }
        // (Else another node wrote it first: from the same rows, so the same bytes.)
    }
    checkpoint_due(storage, record, version, latest - first);
    Ok(Some(written))
}

/// The folder of a version's log.
fn log_folder(record: &DatasetRecord, version: i64) -> String {
    format!(
        "{}/{}",
        keys::table_prefix(&record.key, version),
        keys::DELTA_LOG
    )
}

/// The checkpoint due at or below log version `last` (at the storage's interval) written when
/// it is missing (after the JSON versions it summarises). A failure is logged, not returned:
/// the log is complete without it (readers replay the JSON), and the next commit or start-up
/// tries again.
fn checkpoint_due(storage: &Storage, record: &DatasetRecord, version: i64, last: i64) {
    let (objects, every) = (storage.objects().as_ref(), storage.checkpoint_interval());
    if let Err(e) = checkpoint::ensure(objects, &log_folder(record, version), last, every) {
        tracing::warn!(version, error = %e.report(), "writing a Delta checkpoint");
    }
}

/// [`sync`] for every stored version of every dataset (start-up, the periodic sweep, `admin
/// check --repair`); returns how many log versions were written. A version that fails is
/// logged and the others go on; the versions that failed are returned too, so that retention
/// leaves them alone (expiring commits the log lacks would lose what it needs to catch up).
pub fn sync_all(catalog: &dyn Catalog, storage: &Storage) -> Result<(usize, Vec<(i64, i64)>)> {
    let mut written = 0;
    let mut failed = Vec::new();
    for key in catalog.dataset_keys()? {
        let Some(record) = catalog.find_dataset(&key)? else {
            continue;
        };
        for version in 1..=record.latest_version {
            match sync(catalog, storage, &record, version) {
                Ok(n) => written += n,
                Err(e) => {
                    tracing::warn!(dataset = %key.display(), version, error = %e.report(), "writing the Delta log");
                    failed.push((record.id, version));
                }
            }
        }
    }
    Ok((written, failed))
}

/// What [`check`] found.
#[derive(Debug, Default)]
pub struct Disagreements {
    /// `"{log file}: {what}"`: versions the log lacks, versions whose content is not what
    /// the catalog's rows give, checkpoints that differ from the versions they summarise, and
    /// a `_last_checkpoint` naming a missing checkpoint.
    pub drift: Vec<String>,
    /// Table roots with commits and no log at all (versions stored before logs existed, a
    /// backup, a restore not yet started): written at the next start.
    pub unwritten: Vec<String>,
}

/// Where a version's log disagrees with the catalog: every version the catalog can still
/// derive (those after the floor, and the first when it is the floor) is compared.
pub fn check(
    catalog: &dyn Catalog,
    storage: &Storage,
    record: &DatasetRecord,
    version: i64,
    found: &mut Disagreements,
) -> Result<()> {
    let (floor, latest) = catalog.history_bounds(record.id, version)?;
    if latest == 0 {
        return Ok(());
    }
    let objects = storage.objects().as_ref();
    let Some(first) = first_commit(objects, record, version)? else {
        found
            .unwritten
            .push(keys::table_prefix(&record.key, version));
        return Ok(());
    };
    let table = table(catalog, record, version, first)?;
    for commit in catalog.commit_changes(record.id, version, first.max(floor), latest)? {
        if commit.commit == floor && commit.commit != first {
            continue;
        }
        let key = keys::delta_log_key(&record.key, version, commit.commit - first);
        let what = match objects.read_all(&key) {
            Ok(bytes) => {
                let expected = derive(catalog, record, version, &table, &commit, first)?;
                (bytes != expected.as_bytes()).then_some("differs from catalog commit")
            }
            Err(e) if crate::storage::is_missing(&e) => Some("missing: catalog commit"),
            Err(e) => return Err(e),
        };
        if let Some(what) = what {
            found.drift.push(format!("{key}: {what} {}", commit.commit));
        }
    }
    checkpoint::check(objects, &log_folder(record, version), &mut found.drift)
}

/// [`check`] over every stored version of every dataset.
pub fn check_all(catalog: &dyn Catalog, storage: &Storage) -> Result<Disagreements> {
    let mut found = Disagreements::default();
    for key in catalog.dataset_keys()? {
        let Some(record) = catalog.find_dataset(&key)? else {
            continue;
        };
        for version in 1..=record.latest_version {
            check(catalog, storage, &record, version, &mut found)?;
        }
    }
    Ok(found)
}

/// `admin check --repair`: every version's log brought up to date, and one that differs from
/// the catalog written again from the floor; returns how many log versions were written.
pub fn repair_all(catalog: &dyn Catalog, storage: &Storage) -> Result<usize> {
    let mut written = 0;
    for key in catalog.dataset_keys()? {
        let Some(record) = catalog.find_dataset(&key)? else {
            continue;
        };
        for version in 1..=record.latest_version {
            let mut found = Disagreements::default();
            check(catalog, storage, &record, version, &mut found)?;
            let again = !found.drift.is_empty();
            written += write_missing(catalog, storage, &record, version, again)?.unwrap_or(0);
        }
    }
    Ok(written)
}
