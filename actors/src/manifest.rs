//! The manifest: which raw uploads and Parquet files make up each version of a dataset.
//! A file is part of the dataset exactly when its row is here; files on disk without a row are
//! leftovers of an interrupted commit and are removed at start-up.

use std::collections::HashSet;

use rusqlite::{params, Connection};
use serde::Serialize;

use crate::error::Result;
use crate::key::DatasetKey;
use crate::storage::{keys, Storage};

#[derive(Debug, Clone)]
pub struct DataFile {
    pub id: i64,
    pub raw_filename: String,
    pub partition_path: String,
    /// The object key (relative to the data folder on the local folder).
    pub path: String,
    pub rows: i64,
    pub bytes: i64,
}

#[derive(Debug, Clone, Serialize)]
pub struct RawFile {
    pub raw_filename: String,
    pub original_filename: String,
    pub rows: i64,
    pub bytes: i64,
    pub uploaded_at: String,
}

pub fn data_files(conn: &Connection, dataset_id: i64, version: i64) -> Result<Vec<DataFile>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, raw_filename, partition_path, path, rows, bytes FROM data_files
         WHERE dataset_id = ?1 AND version = ?2 ORDER BY id",
    )?;
    let files = stmt
        .query_map(params![dataset_id, version], |r| {
            Ok(DataFile {
                id: r.get(0)?,
                raw_filename: r.get(1)?,
                partition_path: r.get(2)?,
                path: r.get(3)?,
                rows: r.get(4)?,
                bytes: r.get(5)?,
            })
        })?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(files)
}

/// The files of a version as of now, leased so that none of them is deleted while the caller
/// reads them. Read and lease happen under one catalog lock: a commit retires replaced files only
/// after its transaction, so none can go in between.
pub fn snapshot(
    catalog: &crate::catalog::Catalog,
    storage: &crate::storage::Storage,
    dataset_id: i64,
    version: i64,
) -> Result<(Vec<DataFile>, crate::storage::LeaseGuard)> {
    catalog.with(|c| {
        let files = data_files(c, dataset_id, version)?;
        let lease = storage
            .leases()
            .lease(files.iter().map(|f| f.path.clone()).collect());
        Ok((files, lease))
    })
}

pub fn raw_files(conn: &Connection, dataset_id: i64, version: i64) -> Result<Vec<RawFile>> {
    let mut stmt = conn.prepare_cached(
        "SELECT raw_filename, original_filename, rows, bytes, uploaded_at FROM raw_files
         WHERE dataset_id = ?1 AND version = ?2 ORDER BY uploaded_at, raw_filename",
    )?;
    let files = stmt
        .query_map(params![dataset_id, version], |r| {
            Ok(RawFile {
                raw_filename: r.get(0)?,
                original_filename: r.get(1)?,
                rows: r.get(2)?,
                bytes: r.get(3)?,
                uploaded_at: r.get(4)?,
            })
        })?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(files)
}

/// Removes every object under `data/` and `raw/` that the manifest does not list (and, on the
/// local folder, the folders left empty), and returns how many. Run at start-up, before
/// anything else writes.
pub fn remove_unlisted_files(conn: &Connection, storage: &Storage) -> Result<usize> {
    let mut listed: HashSet<String> = HashSet::new();
    let mut stmt = conn.prepare("SELECT path FROM data_files")?;
    for p in stmt.query_map([], |r| r.get::<_, String>(0))? {
        listed.insert(p?);
    }
    let mut stmt = conn.prepare(
        "SELECT d.layer, d.domain, d.dataset_key, r.version, r.raw_filename
         FROM raw_files r JOIN datasets d ON d.id = r.dataset_id",
    )?;
    let rows = stmt.query_map([], |r| {
        let key = DatasetKey::new(
            &r.get::<_, String>(0)?,
            &r.get::<_, String>(1)?,
            &r.get::<_, String>(2)?,
        );
        Ok(keys::raw_key(&key, r.get(3)?, &r.get::<_, String>(4)?))
    })?;
    for p in rows {
        listed.insert(p?);
    }
    let objects = storage.objects();
    let mut removed = 0;
    for prefix in keys::LISTED_PREFIXES {
        for object in objects.list(prefix)? {
            if !listed.contains(&object.key) {
                objects.delete(&object.key)?;
                removed += 1;
            }
        }
        objects.prune_empty(prefix)?;
    }
    Ok(removed)
}
