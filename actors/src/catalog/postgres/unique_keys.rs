//! The unique index in PostgreSQL (as SQLite's `unique_keys`, with `key_origins`), with keys sent as arrays so that
//! an upload costs a few round trips, not one per value.

use super::pool::Db;
use crate::catalog::{ColumnKeys, KeyHit, UploadCommit};
use crate::error::Result;

/// Keys per statement: bounded messages whatever the upload's size.
const CHUNK: usize = 10_000;

/// See [`crate::catalog::interface::ManifestCatalog::stored_keys`]; inside one snapshot.
pub(super) fn stored_keys(
    db: &Db<'_>,
    dataset_id: i64,
    version: i64,
    column: &str,
    keys: &[Vec<u8>],
) -> Result<Option<Vec<KeyHit>>> {
    let pending = db.query_opt(
        "SELECT 1 FROM unique_keys_pending WHERE dataset_id = $1 AND version = $2",
        &[&dataset_id, &version],
    )?;
    if pending.is_some() {
        return Ok(None);
    }
    let mut hits = Vec::new();
    for chunk in keys.chunks(CHUNK) {
        let chunk = chunk.to_vec();
        for row in db.query(
            "SELECT k.key, o.partition_path FROM unique_keys k JOIN key_origins o ON o.id = k.origin
             WHERE k.dataset_id = $1 AND k.version = $2 AND k.column_name = $3
               AND k.key = ANY($4)",
            &[&dataset_id, &version, &column, &chunk],
        )? {
            hits.push(KeyHit {
                key: row.try_get(0)?,
                partition_path: row.try_get(1)?,
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
fn origin_id(db: &Db<'_>, origin: &Origin<'_>) -> Result<i64> {
    // The no-op update makes RETURNING answer for an origin recorded before, too.
    let row = db.query_one(
        "INSERT INTO key_origins (dataset_id, version, raw_filename, partition_path)
         VALUES ($1, $2, $3, $4)
         ON CONFLICT (dataset_id, version, raw_filename, partition_path)
         DO UPDATE SET raw_filename = EXCLUDED.raw_filename RETURNING id",
        &[
            &origin.dataset_id,
            &origin.version,
            &origin.raw_filename,
            &origin.partition_path,
        ],
    )?;
    Ok(row.try_get(0)?)
}

/// Records `keys`. A key already stored is an error: the checks before the commit rule that out.
fn insert(db: &Db<'_>, origin: &Origin<'_>, keys: &ColumnKeys) -> Result<()> {
    let id = origin_id(db, origin)?;
    for chunk in keys.keys.chunks(CHUNK) {
        let chunk = chunk.to_vec();
        db.execute(
            "INSERT INTO unique_keys (dataset_id, version, column_name, key, origin)
             SELECT $1, $2, $3, k, $4 FROM unnest($5::bytea[]) AS k",
            &[
                &origin.dataset_id,
                &origin.version,
                &keys.column,
                &id,
                &chunk,
            ],
        )?;
    }
    Ok(())
}

/// The commit's backfill, inside its transaction and before the replaced partitions' keys are
/// dropped.
pub(super) fn record_backfill(db: &Db<'_>, commit: &UploadCommit) -> Result<()> {
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
        insert(db, &origin, &stored.keys)?;
    }
    db.execute(
        "DELETE FROM unique_keys_pending WHERE dataset_id = $1 AND version = $2",
        &[&commit.dataset_id, &commit.version],
    )?;
    Ok(())
}

/// The keys of the commit's `n`th new data file, after the replaced partitions' keys were dropped.
pub(super) fn record_file_keys(db: &Db<'_>, commit: &UploadCommit, n: usize) -> Result<()> {
    let file = &commit.files[n];
    let origin = Origin {
        dataset_id: commit.dataset_id,
        version: commit.version,
        raw_filename: &commit.raw_filename,
        partition_path: &file.partition_path,
    };
    for keys in &file.unique_keys {
        insert(db, &origin, keys)?;
    }
    Ok(())
}

/// Drops the keys of the rows data file `data_file_id` holds (by its raw file, or its parts'
/// for a merged file), before the file is dropped: their origins go, and the keys with them.
pub(super) fn drop_file_keys(db: &Db<'_>, data_file_id: i64) -> Result<()> {
    db.execute(
        "DELETE FROM key_origins WHERE (dataset_id, version, raw_filename, partition_path) IN (
             SELECT f.dataset_id, f.version, f.raw_filename, f.partition_path
               FROM data_files f WHERE f.id = $1 AND f.raw_filename <> ''
             UNION ALL
             SELECT f.dataset_id, f.version, p.raw_filename, f.partition_path
               FROM data_files f JOIN data_file_parts p ON p.data_file_id = f.id WHERE f.id = $1)",
        &[&data_file_id],
    )?;
    Ok(())
}

/// Drops every key of raw file `raw_filename` of the version (its origins, and the keys with them).
pub(super) fn drop_raw_keys(
    db: &Db<'_>,
    dataset_id: i64,
    version: i64,
    raw_filename: &str,
) -> Result<()> {
    db.execute(
        "DELETE FROM key_origins WHERE dataset_id = $1 AND version = $2 AND raw_filename = $3",
        &[&dataset_id, &version, &raw_filename],
    )?;
    Ok(())
}
