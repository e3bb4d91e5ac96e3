//! The manifest: which raw uploads and Parquet files make up each version of a dataset.
//! A file is part of the dataset exactly when its row is here; files on disk without a row are
//! leftovers of an interrupted commit and are removed at start-up.

use std::collections::HashSet;
use std::path::Path;

use rusqlite::{params, Connection};
use serde::Serialize;

use crate::error::Result;
use crate::key::DatasetKey;
use crate::storage::Storage;

#[derive(Debug, Clone)]
pub struct DataFile {
    pub id: i64,
    pub raw_filename: String,
    pub partition_path: String,
    /// Relative to the data folder.
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

/// Removes every file under `data/` and `raw/` that the manifest does not list, and returns how
/// many. Run at start-up, before anything else writes.
pub fn remove_unlisted_files(conn: &Connection, storage: &Storage) -> Result<usize> {
    let mut listed: HashSet<std::path::PathBuf> = HashSet::new();
    let mut stmt = conn.prepare("SELECT path FROM data_files")?;
    for p in stmt.query_map([], |r| r.get::<_, String>(0))? {
        listed.insert(storage.absolute(&p?));
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
        Ok(storage.raw_file(&key, r.get(3)?, &r.get::<_, String>(4)?))
    })?;
    for p in rows {
        listed.insert(p?);
    }
    let mut removed = 0;
    for top in storage.listed_roots() {
        removed += sweep(&top, &listed)?;
    }
    Ok(removed)
}

fn sweep(dir: &Path, listed: &HashSet<std::path::PathBuf>) -> Result<usize> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(0);
    };
    let mut removed = 0;
    for entry in entries {
        let path = entry?.path();
        if path.is_dir() {
            removed += sweep(&path, listed)?;
            // Drop folders emptied by the sweep (or by deletions); a non-empty one stays.
            let _ = std::fs::remove_dir(&path);
        } else if !listed.contains(&path) {
            std::fs::remove_file(&path)?;
            removed += 1;
        }
    }
    Ok(removed)
}
