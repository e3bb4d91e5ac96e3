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
/// were written. A log that cannot be continued exactly (its newest commit is at or below the
/// history floor: the catalog no longer knows what the commits after it removed) is written
/// again from the floor, as a log is that starts after its version's early commits expired.
pub fn sync(
    catalog: &dyn Catalog,
    storage: &Storage,
    record: &DatasetRecord,
    version: i64,
) -> Result<usize> {
    let (floor, latest) = catalog.history_bounds(record.id, version)?;
    if latest == 0 {
        return Ok(0);
    }
    let objects = storage.objects().as_ref();
    let (first, from) = match read_log(objects, record, version, latest)? {
        Some(log) if log.last == latest && log.first <= latest => return Ok(0),
        Some(log) if log.last >= floor && log.first <= latest => (log.first, log.last + 1),
        Some(_) => {
            tracing::warn!(
                version,
                floor,
                "the Delta log fell behind retention: written again"
            );
            let log = keys::delta_log_key(&record.key, version, 0);
            let folder = log.rsplit_once('/').map_or(log.as_str(), |(f, _)| f);
            objects.delete_prefix(folder)?;
            (floor, floor)
        }
        None => (floor, floor),
    };
    let table = table(catalog, record, version, first)?;
    let mut written = 0;
    for commit in catalog.commit_changes(record.id, version, from, latest)? {
        let text = derive(catalog, record, version, &table, &commit, first)?;
        let key = keys::delta_log_key(&record.key, version, commit.commit - first);
        // Another node may have written it first: from the same rows, so the same version.
        if objects.put_new(&key, text.as_bytes())? {
            written += 1;
        }
    }
    Ok(written)
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

/// Where a version's log disagrees with the catalog, as `"{log file}: {what}"`: versions the
/// log lacks, and versions whose content is not what the catalog's rows give (every version the
/// catalog can still derive: those after the floor, and the first when it is the floor).
pub fn check(
    catalog: &dyn Catalog,
    storage: &Storage,
    record: &DatasetRecord,
    version: i64,
) -> Result<Vec<String>> {
    let (floor, latest) = catalog.history_bounds(record.id, version)?;
    if latest == 0 {
        return Ok(Vec::new());
    }
    let objects = storage.objects().as_ref();
    let Some(first) = first_commit(objects, record, version)? else {
        return Ok(vec![format!(
            "{}: missing (no Delta log)",
            keys::delta_log_key(&record.key, version, 0)
        )]);
    };
    let table = table(catalog, record, version, first)?;
    let mut found = Vec::new();
    let from = first.max(floor);
    for commit in catalog.commit_changes(record.id, version, from, latest)? {
        if commit.commit == floor && commit.commit != first {
            continue;
        }
        let key = keys::delta_log_key(&record.key, version, commit.commit - first);
        match objects.read_all(&key) {
            Ok(bytes) => {
                let expected = derive(catalog, record, version, &table, &commit, first)?;
                if bytes != expected.as_bytes() {
                    found.push(format!(
                        "{key}: differs from catalog commit {}",
                        commit.commit
                    ));
                }
            }
            Err(e) if crate::storage::is_missing(&e) => {
                found.push(format!("{key}: missing (catalog commit {})", commit.commit))
            }
            Err(e) => return Err(e),
        }
    }
    Ok(found)
}

/// [`check`] over every stored version of every dataset.
pub fn check_all(catalog: &dyn Catalog, storage: &Storage) -> Result<Vec<String>> {
    let mut found = Vec::new();
    for key in catalog.dataset_keys()? {
        let Some(record) = catalog.find_dataset(&key)? else {
            continue;
        };
        for version in 1..=record.latest_version {
            found.extend(check(catalog, storage, &record, version)?);
        }
    }
    Ok(found)
}
