//! The unique index in SQLite: runs of sorted keys (`catalog::key_runs`) in `key_runs` and
//! `key_run_blocks`, each key with its origin (the raw file and partition its row came from,
//! numbered in `key_origins`).

use std::collections::HashMap;

use rusqlite::{params, Connection, OptionalExtension};

use crate::catalog::key_runs::{self, BlockRow, IndexOf, NewBlock, RunRow, RunStore};
use crate::catalog::{KeyHit, UploadCommit};
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
    lists: &[&crate::catalog::KeyList],
) -> Result<Option<Vec<KeyHit>>> {
    if pending(conn, dataset_id, version)? {
        return Ok(None);
    }
    let index = IndexOf {
        dataset_id,
        version,
        column,
    };
    key_runs::find(&Store(conn), index, lists).map(Some)
}

/// The index's rows in SQLite.
struct Store<'c>(&'c Connection);

impl RunStore for Store<'_> {
    fn runs(&self, index: IndexOf<'_>) -> Result<Vec<RunRow>> {
        let mut stmt = self.0.prepare_cached(
            "SELECT id, level, min_key, max_key, generation FROM key_runs
             WHERE dataset_id = ?1 AND version = ?2 AND column_name = ?3 AND finished = 1",
        )?;
        let rows = stmt.query_map(
            params![index.dataset_id, index.version, index.column],
            |r| {
                Ok(RunRow {
                    id: r.get(0)?,
                    level: r.get(1)?,
                    min_key: r.get(2)?,
                    max_key: r.get(3)?,
                    generation: r.get(4)?,
                })
            },
        )?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    fn blocks(&self, run: i64) -> Result<Vec<BlockRow>> {
        let mut stmt = self.0.prepare_cached(
            "SELECT block, min_key, max_key FROM key_run_blocks WHERE run_id = ?1 ORDER BY block",
        )?;
        let rows = stmt.query_map([run], |r| {
            Ok(BlockRow {
                block: r.get(0)?,
                min_key: r.get(1)?,
                max_key: r.get(2)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    fn bloom(&self, run: i64, block: i64) -> Result<Vec<u8>> {
        Ok(self
            .0
            .prepare_cached("SELECT bloom FROM key_run_blocks WHERE run_id = ?1 AND block = ?2")?
            .query_row([run, block], |r| r.get(0))?)
    }

    fn entries(&self, run: i64, block: i64) -> Result<Vec<u8>> {
        Ok(self
            .0
            .prepare_cached("SELECT entries FROM key_run_blocks WHERE run_id = ?1 AND block = ?2")?
            .query_row([run, block], |r| r.get(0))?)
    }

    fn new_run(&self, index: IndexOf<'_>) -> Result<i64> {
        self.0
            .prepare_cached(
                "INSERT INTO key_runs (dataset_id, version, column_name, generation)
                 SELECT ?1, ?2, ?3, COALESCE(MAX(generation), 0) + 1 FROM schema_versions
                 WHERE dataset_id = ?1 AND version = ?2",
            )?
            .execute(params![index.dataset_id, index.version, index.column])?;
        Ok(self.0.last_insert_rowid())
    }

    fn add_block(&self, b: &NewBlock<'_>) -> Result<()> {
        self.0
            .prepare_cached(
                "INSERT INTO key_run_blocks (run_id, block, min_key, max_key, bloom, entries)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?
            .execute(params![
                b.run, b.block, b.min_key, b.max_key, b.bloom, b.entries
            ])?;
        Ok(())
    }

    fn finish_run(&self, run: i64, level: i64, count: i64, min: &[u8], max: &[u8]) -> Result<()> {
        self.0
            .prepare_cached(
                "UPDATE key_runs SET finished = 1, level = ?2, entries = ?3, min_key = ?4,
                 max_key = ?5 WHERE id = ?1",
            )?
            .execute(params![run, level, count, min, max])?;
        Ok(())
    }

    fn drop_run(&self, run: i64) -> Result<()> {
        self.0
            .prepare_cached("DELETE FROM key_runs WHERE id = ?1")?
            .execute([run])?;
        Ok(())
    }

    fn origin_id(
        &self,
        dataset_id: i64,
        version: i64,
        raw_filename: &str,
        partition_path: &str,
    ) -> Result<i64> {
        let values = params![dataset_id, version, raw_filename, partition_path];
        self.0
            .prepare_cached(
                "INSERT OR IGNORE INTO key_origins (dataset_id, version, raw_filename, partition_path)
                 VALUES (?1, ?2, ?3, ?4)",
            )?
            .execute(values)?;
        Ok(self
            .0
            .prepare_cached(
                "SELECT id FROM key_origins WHERE dataset_id = ?1 AND version = ?2
                 AND raw_filename = ?3 AND partition_path = ?4",
            )?
            .query_row(values, |r| r.get(0))?)
    }

    fn origins(&self, dataset_id: i64, version: i64) -> Result<HashMap<i64, String>> {
        let mut stmt = self.0.prepare_cached(
            "SELECT id, partition_path FROM key_origins WHERE dataset_id = ?1 AND version = ?2",
        )?;
        let rows = stmt.query_map([dataset_id, version], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

/// The commit's backfill (keys of rows stored before the index), inside its transaction and
/// before the replaced partitions' keys are dropped; the version is indexed from then on.
pub(super) fn record_backfill(conn: &Connection, commit: &UploadCommit) -> Result<()> {
    if commit.backfill.is_none() {
        return Ok(());
    }
    key_runs::record_backfill(&Store(conn), commit)?;
    conn.execute(
        "DELETE FROM unique_keys_pending WHERE dataset_id = ?1 AND version = ?2",
        params![commit.dataset_id, commit.version],
    )?;
    Ok(())
}

/// The keys of the commit's new data files, after the replaced files' keys were dropped.
pub(super) fn record_new_keys(conn: &Connection, commit: &UploadCommit) -> Result<()> {
    key_runs::record_new_keys(&Store(conn), commit)
}

/// Drops the whole index of a version (its origins and runs), to be rebuilt from the files.
pub(super) fn drop_version_keys(conn: &Connection, dataset_id: i64, version: i64) -> Result<()> {
    for table in ["key_origins", "key_runs"] {
        conn.execute(
            &format!("DELETE FROM {table} WHERE dataset_id = ?1 AND version = ?2"),
            params![dataset_id, version],
        )?;
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
