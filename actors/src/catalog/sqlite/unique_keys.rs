//! The unique index in SQLite: keys of `unique` columns per version, each with its data file.

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
        "SELECT f.partition_path FROM unique_keys k JOIN data_files f ON f.id = k.data_file_id
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

/// Records `keys` of data file `data_file_id`, in key order (the B-tree's order: fewer pages
/// touched). A key already stored is an error: the checks before the commit rule that out.
fn insert(
    conn: &Connection,
    dataset_id: i64,
    version: i64,
    data_file_id: i64,
    keys: &ColumnKeys,
) -> Result<()> {
    let mut sorted: Vec<&Vec<u8>> = keys.keys.iter().collect();
    sorted.sort_unstable();
    let mut insert = conn.prepare_cached(
        "INSERT INTO unique_keys (dataset_id, version, column_name, key, data_file_id)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    for key in sorted {
        insert.execute(params![dataset_id, version, keys.column, key, data_file_id])?;
    }
    Ok(())
}

/// The commit's backfill (keys of files stored before the index), inside its transaction and
/// before the replaced files are dropped (their keys go with them).
pub(super) fn record_backfill(conn: &Connection, commit: &UploadCommit) -> Result<()> {
    let Some(backfill) = &commit.backfill else {
        return Ok(());
    };
    for stored in backfill {
        insert(
            conn,
            commit.dataset_id,
            commit.version,
            stored.data_file_id,
            &stored.keys,
        )?;
    }
    conn.execute(
        "DELETE FROM unique_keys_pending WHERE dataset_id = ?1 AND version = ?2",
        params![commit.dataset_id, commit.version],
    )?;
    Ok(())
}

/// The keys of the commit's new data file `data_file_id` (its `n`th), after the replaced files
/// were dropped: an OVERWRITE may store again the values it replaces.
pub(super) fn record_file_keys(
    conn: &Connection,
    commit: &UploadCommit,
    n: usize,
    data_file_id: i64,
) -> Result<()> {
    for keys in &commit.files[n].unique_keys {
        insert(conn, commit.dataset_id, commit.version, data_file_id, keys)?;
    }
    Ok(())
}
