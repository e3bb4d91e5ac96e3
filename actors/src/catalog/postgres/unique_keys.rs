//! The unique index in PostgreSQL: runs of sorted keys (`catalog::key_runs`), as SQLite's.

use std::collections::HashMap;

use super::pool::Db;
use crate::catalog::key_runs::{self, BlockRow, IndexOf, NewBlock, RunRow, RunStore};
use crate::catalog::{KeyHit, UploadCommit};
use crate::error::Result;

/// See [`crate::catalog::interface::ManifestCatalog::stored_keys`]; inside one snapshot.
pub(super) fn stored_keys(
    db: &Db<'_>,
    dataset_id: i64,
    version: i64,
    column: &str,
    lists: &[&crate::catalog::KeyList],
) -> Result<Option<Vec<KeyHit>>> {
    let pending = db.query_opt(
        "SELECT 1 FROM unique_keys_pending WHERE dataset_id = $1 AND version = $2",
        &[&dataset_id, &version],
    )?;
    if pending.is_some() {
        return Ok(None);
    }
    let index = IndexOf {
        dataset_id,
        version,
        column,
    };
    key_runs::find(&Store(db), index, lists).map(Some)
}

/// The index's rows in PostgreSQL.
struct Store<'d, 'c>(&'d Db<'c>);

impl RunStore for Store<'_, '_> {
    fn runs(&self, index: IndexOf<'_>) -> Result<Vec<RunRow>> {
        let rows = self.0.query(
            "SELECT id, level, min_key, max_key, generation FROM key_runs
             WHERE dataset_id = $1 AND version = $2 AND column_name = $3 AND finished",
            &[&index.dataset_id, &index.version, &index.column],
        )?;
        rows.iter()
            .map(|r| {
                Ok(RunRow {
                    id: r.try_get(0)?,
                    level: r.try_get(1)?,
                    min_key: r.try_get(2)?,
                    max_key: r.try_get(3)?,
                    generation: r.try_get(4)?,
                })
            })
            .collect()
    }

    fn blocks(&self, run: i64) -> Result<Vec<BlockRow>> {
        let rows = self.0.query(
            "SELECT block, min_key, max_key FROM key_run_blocks WHERE run_id = $1 ORDER BY block",
            &[&run],
        )?;
        rows.iter()
            .map(|r| {
                Ok(BlockRow {
                    block: r.try_get(0)?,
                    min_key: r.try_get(1)?,
                    max_key: r.try_get(2)?,
                })
            })
            .collect()
    }

    fn bloom(&self, run: i64, block: i64) -> Result<Vec<u8>> {
        let row = self.0.query_one(
            "SELECT bloom FROM key_run_blocks WHERE run_id = $1 AND block = $2",
            &[&run, &block],
        )?;
        Ok(row.try_get(0)?)
    }

    fn entries(&self, run: i64, block: i64) -> Result<Vec<u8>> {
        let row = self.0.query_one(
            "SELECT entries FROM key_run_blocks WHERE run_id = $1 AND block = $2",
            &[&run, &block],
        )?;
        Ok(row.try_get(0)?)
    }

    fn new_run(&self, index: IndexOf<'_>) -> Result<i64> {
        let row = self.0.query_one(
            "INSERT INTO key_runs (dataset_id, version, column_name, generation)
             SELECT $1, $2, $3, COALESCE(MAX(generation), 0) + 1 FROM schema_versions
             WHERE dataset_id = $1 AND version = $2
             RETURNING id",
            &[&index.dataset_id, &index.version, &index.column],
        )?;
        Ok(row.try_get(0)?)
    }

    fn add_block(&self, b: &NewBlock<'_>) -> Result<()> {
        self.0.execute(
            "INSERT INTO key_run_blocks (run_id, block, min_key, max_key, bloom, entries)
             VALUES ($1, $2, $3, $4, $5, $6)",
            &[
                &b.run, &b.block, &b.min_key, &b.max_key, &b.bloom, &b.entries,
            ],
        )?;
        Ok(())
    }

    fn finish_run(&self, run: i64, level: i64, count: i64, min: &[u8], max: &[u8]) -> Result<()> {
        self.0.execute(
            "UPDATE key_runs SET finished = true, level = $2, entries = $3, min_key = $4,
             max_key = $5 WHERE id = $1",
            &[&run, &level, &count, &min, &max],
        )?;
        Ok(())
    }

    fn drop_run(&self, run: i64) -> Result<()> {
        self.0
            .execute("DELETE FROM key_runs WHERE id = $1", &[&run])?;
        Ok(())
    }

    fn origin_id(
        &self,
        dataset_id: i64,
        version: i64,
        raw_filename: &str,
        partition_path: &str,
    ) -> Result<i64> {
        // The no-op update makes RETURNING answer for an origin recorded before, too.
        let row = self.0.query_one(
            "INSERT INTO key_origins (dataset_id, version, raw_filename, partition_path)
             VALUES ($1, $2, $3, $4)
             ON CONFLICT (dataset_id, version, raw_filename, partition_path)
             DO UPDATE SET raw_filename = EXCLUDED.raw_filename RETURNING id",
            &[&dataset_id, &version, &raw_filename, &partition_path],
        )?;
        Ok(row.try_get(0)?)
    }

    fn origins(&self, dataset_id: i64, version: i64) -> Result<HashMap<i64, String>> {
        let rows = self.0.query(
            "SELECT id, partition_path FROM key_origins WHERE dataset_id = $1 AND version = $2",
            &[&dataset_id, &version],
        )?;
        rows.iter()
            .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
            .collect()
    }
}

/// The commit's backfill, inside its transaction and before the replaced partitions' keys are
/// dropped; the version is indexed from then on.
pub(super) fn record_backfill(db: &Db<'_>, commit: &UploadCommit) -> Result<()> {
    if commit.backfill.is_none() {
        return Ok(());
    }
    key_runs::record_backfill(&Store(db), commit)?;
    db.execute(
        "DELETE FROM unique_keys_pending WHERE dataset_id = $1 AND version = $2",
        &[&commit.dataset_id, &commit.version],
    )?;
    Ok(())
}

/// The keys of the commit's new data files, after the replaced files' keys were dropped.
pub(super) fn record_new_keys(db: &Db<'_>, commit: &UploadCommit) -> Result<()> {
    key_runs::record_new_keys(&Store(db), commit)
}

/// Drops the whole index of a version (its origins and runs), to be rebuilt from the files.
pub(super) fn drop_version_keys(db: &Db<'_>, dataset_id: i64, version: i64) -> Result<()> {
    for sql in [
        "DELETE FROM key_origins WHERE dataset_id = $1 AND version = $2",
        "DELETE FROM key_runs WHERE dataset_id = $1 AND version = $2",
    ] {
        db.execute(sql, &[&dataset_id, &version])?;
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
