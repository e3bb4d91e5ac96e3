//! The unique index in PostgreSQL (as SQLite's `unique_keys`), with keys sent as arrays so that
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
            "SELECT k.key, f.partition_path FROM unique_keys k
             JOIN data_files f ON f.id = k.data_file_id
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

/// Records `keys` of data file `data_file_id`. A key already stored is an error: the checks
/// before the commit rule that out.
fn insert(
    db: &Db<'_>,
    dataset_id: i64,
    version: i64,
    data_file_id: i64,
    keys: &ColumnKeys,
) -> Result<()> {
    for chunk in keys.keys.chunks(CHUNK) {
        let chunk = chunk.to_vec();
        db.execute(
            "INSERT INTO unique_keys (dataset_id, version, column_name, key, data_file_id)
             SELECT $1, $2, $3, k, $4 FROM unnest($5::bytea[]) AS k",
            &[&dataset_id, &version, &keys.column, &data_file_id, &chunk],
        )?;
    }
    Ok(())
}

/// The commit's backfill, inside its transaction and before the replaced files are dropped.
pub(super) fn record_backfill(db: &Db<'_>, commit: &UploadCommit) -> Result<()> {
    let Some(backfill) = &commit.backfill else {
        return Ok(());
    };
    for stored in backfill {
        insert(
            db,
            commit.dataset_id,
            commit.version,
            stored.data_file_id,
            &stored.keys,
        )?;
    }
    db.execute(
        "DELETE FROM unique_keys_pending WHERE dataset_id = $1 AND version = $2",
        &[&commit.dataset_id, &commit.version],
    )?;
    Ok(())
}

/// The keys of the commit's `n`th new data file, after the replaced files were dropped.
pub(super) fn record_file_keys(
    db: &Db<'_>,
    commit: &UploadCommit,
    n: usize,
    data_file_id: i64,
) -> Result<()> {
    for keys in &commit.files[n].unique_keys {
        insert(db, commit.dataset_id, commit.version, data_file_id, keys)?;
    }
    Ok(())
}
