//! The unique index in SQLite: keys of `unique` columns per version, each with its origin (the
//! raw file and partition its row came from, numbered in `key_origins`: a key row stays small).

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
        "SELECT o.partition_path FROM unique_keys k JOIN key_origins o ON o.id = k.origin
         WHERE k.dataset_id = ?1 AND k.version = ?2 AND k.column_name = ?3 AND k.key = ?4",
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

/// The number of `origin`, recorded on first use.
fn origin_id(conn: &Connection, origin: &Origin<'_>) -> Result<i64> {
    let values = params![
        origin.dataset_id,
        origin.version,
        origin.raw_filename,
        origin.partition_path
    ];
    conn.prepare_cached(
        "INSERT OR IGNORE INTO key_origins (dataset_id, version, raw_filename, partition_path)
         VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(values)?;
    Ok(conn
        .prepare_cached(
            "SELECT id FROM key_origins
             WHERE dataset_id = ?1 AND version = ?2 AND raw_filename = ?3 AND partition_path = ?4",
        )?
        .query_row(values, |r| r.get(0))?)
}

/// Records `keys`, in key order (the B-tree's order: fewer pages touched). A key already stored
/// is an error: the checks before the commit rule that out.
fn insert(conn: &Connection, origin: &Origin<'_>, keys: &ColumnKeys) -> Result<()> {
    let id = origin_id(conn, origin)?;
    let mut sorted: Vec<&Vec<u8>> = keys.keys.iter().collect();
    sorted.sort_unstable();
    let mut insert = conn.prepare_cached(
        "INSERT INTO unique_keys (dataset_id, version, column_name, key, origin)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    for key in sorted {
        insert.execute(params![
            origin.dataset_id,
            origin.version,
            keys.column,
            key,
            id
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
/// for a merged file), before the file is dropped: their origins go, and the keys with them.
pub(super) fn drop_file_keys(conn: &Connection, data_file_id: i64) -> Result<()> {
    conn.prepare_cached(
        "DELETE FROM key_origins WHERE (dataset_id, version, raw_filename, partition_path) IN (
             SELECT f.dataset_id, f.version, f.raw_filename, f.partition_path
               FROM data_files f WHERE f.id = ?1 AND f.raw_filename <> ''
             UNION ALL
             SELECT f.dataset_id, f.version, p.raw_filename, f.partition_path
               FROM data_files f JOIN data_file_parts p ON p.data_file_id = f.id WHERE f.id = ?1)",
    )?
    .execute([data_file_id])?;
    Ok(())
}

/// Drops every key of raw file `raw_filename` of the version (its origins, and the keys with them).
pub(super) fn drop_raw_keys(
    conn: &Connection,
    dataset_id: i64,
    version: i64,
    raw_filename: &str,
) -> Result<()> {
    conn.prepare_cached(
        "DELETE FROM key_origins WHERE dataset_id = ?1 AND version = ?2 AND raw_filename = ?3",
    )?
    .execute(params![dataset_id, version, raw_filename])?;
    Ok(())
}
