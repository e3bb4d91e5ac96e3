//! The unique index in SQLite: keys of `unique` columns per version, each with the raw file and
//! partition its row came from.

use rusqlite::{params, Connection, OptionalExtension};

use crate::catalog::{ColumnKeys, KeyHit, UploadCommit};
use crate::error::Result;

/// Whether the version's files were stored before the index existed (keys not recorded yet).
fn pending(conn: &Connection, dataset_id: i64, version: i64) -> Result<bool> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM unique_keys_pending WHERE dataset_id = ?1 AND version = ?2")?
        .query_row(params![dataset_id, version], |_| Ok(()))
        .optional()?
        .is_some())
}

/// See [`crate::catalog::interface::ManifestCatalog::stored_keys`]; inside one transaction.
pub(super) fn stored_keys(
    conn: &Connection,
    dataset_id: i64,
    version: i64,
    column: &str,
    keys: &[Vec<u8>],
) -> Result<Option<Vec<KeyHit>>> {
    if pending(conn, dataset_id, version)? {
        return Ok(None);
    }
    // One indexed point lookup per key: in-process, so cheaper than building a temporary table.
    let mut lookup = conn.prepare_cached(
        "SELECT partition_path FROM unique_keys
         WHERE dataset_id = ?1 AND version = ?2 AND column_name = ?3 AND key = ?4",
    )?;
    let mut hits = Vec::new();
    for key in keys {
        let found = lookup
            .query_row(params![dataset_id, version, column, key], |r| {
                r.get::<_, String>(0)
            })
            .optional()?;
        if let Some(partition_path) = found {
            hits.push(KeyHit {
                key: key.clone(),
                partition_path,
            });
        }
    }
    Ok(Some(hits))
}

/// Where keys came from: the version, the raw file and the partition.
struct Origin<'a> {
    dataset_id: i64,
    version: i64,
    raw_filename: &'a str,
    partition_path: &'a str,
}

/// Records `keys`, in key order (the B-tree's order: fewer pages touched). A key already stored
/// is an error: the checks before the commit rule that out.
fn insert(conn: &Connection, origin: &Origin<'_>, keys: &ColumnKeys) -> Result<()> {
    let mut sorted: Vec<&Vec<u8>> = keys.keys.iter().collect();
    sorted.sort_unstable();
    let mut insert = conn.prepare_cached(
        "INSERT INTO unique_keys (dataset_id, version, column_name, key, raw_filename, partition_path)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    for key in sorted {
        insert.execute(params![
            origin.dataset_id,
            origin.version,
            keys.column,
            key,
            origin.raw_filename,
            origin.partition_path
        ])?;
    }
    Ok(())
}

/// The commit's backfill (keys of rows stored before the index), inside its transaction and
/// before the replaced partitions' keys are dropped.
pub(super) fn record_backfill(conn: &Connection, commit: &UploadCommit) -> Result<()> {
    let Some(backfill) = &commit.backfill else {
        return Ok(());
    };
    for stored in backfill {
        let origin = Origin {
            dataset_id: commit.dataset_id,
            version: commit.version,
            raw_filename: &stored.raw_filename,
            partition_path: &stored.partition_path,
        };
        insert(conn, &origin, &stored.keys)?;
    }
    conn.execute(
        "DELETE FROM unique_keys_pending WHERE dataset_id = ?1 AND version = ?2",
        params![commit.dataset_id, commit.version],
    )?;
    Ok(())
}

/// The keys of the commit's `n`th new data file, after the replaced partitions' keys were
/// dropped: an OVERWRITE may store again the values it replaces.
pub(super) fn record_file_keys(conn: &Connection, commit: &UploadCommit, n: usize) -> Result<()> {
    let file = &commit.files[n];
    let origin = Origin {
        dataset_id: commit.dataset_id,
        version: commit.version,
        raw_filename: &commit.raw_filename,
        partition_path: &file.partition_path,
    };
    for keys in &file.unique_keys {
        insert(conn, &origin, keys)?;
    }
    Ok(())
}

/// Drops the keys of the rows data file `data_file_id` holds (by its raw file, or its parts'
/// for a merged file), before the file is dropped.
pub(super) fn drop_file_keys(conn: &Connection, data_file_id: i64) -> Result<()> {
    conn.prepare_cached(
        "DELETE FROM unique_keys WHERE (dataset_id, version, raw_filename, partition_path) IN (
             SELECT f.dataset_id, f.version, f.raw_filename, f.partition_path
               FROM data_files f WHERE f.id = ?1 AND f.raw_filename <> ''
             UNION ALL
             SELECT f.dataset_id, f.version, p.raw_filename, f.partition_path
               FROM data_files f JOIN data_file_parts p ON p.data_file_id = f.id WHERE f.id = ?1)",
    )?
    .execute([data_file_id])?;
    Ok(())
}

/// Drops every key of raw file `raw_filename` of the version.
pub(super) fn drop_raw_keys(
    conn: &Connection,
    dataset_id: i64,
    version: i64,
    raw_filename: &str,
) -> Result<()> {
    conn.prepare_cached(
        "DELETE FROM unique_keys WHERE dataset_id = ?1 AND version = ?2 AND raw_filename = ?3",
    )?
    .execute(params![dataset_id, version, raw_filename])?;
    Ok(())
}
