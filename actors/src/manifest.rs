//! The manifest: which raw uploads and Parquet files make up each version of a dataset.
//! A file is part of the dataset exactly when its row is here; files on disk without a row are
//! leftovers of an interrupted commit and are removed at start-up.

use std::collections::HashSet;
use std::path::Path;

use crate::catalog::{Catalog, StoredFiles};
pub use crate::catalog::{DataFile, RawFile};
use crate::error::Result;
use crate::storage::Storage;

/// The files of a version as of now, leased so that none of them is deleted while the caller
/// reads them. The lease is taken before any commit replacing them can return (a commit retires
/// replaced files only after its catalog step), so none can go in between.
pub fn snapshot(
    catalog: &dyn Catalog,
    storage: &crate::storage::Storage,
    dataset_id: i64,
    version: i64,
) -> Result<(Vec<DataFile>, crate::storage::LeaseGuard)> {
    let mut lease = None;
    let files = catalog.data_files_held(dataset_id, version, &mut |files| {
        lease = Some(
            storage
                .leases()
                .lease(files.iter().map(|f| f.path.clone()).collect()),
        );
    })?;
    let lease = lease.unwrap_or_else(|| storage.leases().lease(Vec::new()));
    Ok((files, lease))
}

/// Removes every file under `data/` and `raw/` that `listed` (the manifest) does not list, and
/// returns how many. Run at start-up, before anything else writes.
pub fn remove_unlisted_files(listed: &StoredFiles, storage: &Storage) -> Result<usize> {
    let mut keep: HashSet<std::path::PathBuf> = HashSet::new();
    for f in &listed.data {
        keep.insert(storage.absolute(&f.path));
    }
    for r in &listed.raw {
        keep.insert(storage.raw_file(&r.key, r.version, &r.raw_filename));
    }
    let mut removed = 0;
    for top in storage.listed_roots() {
        removed += sweep(&top, &keep)?;
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
