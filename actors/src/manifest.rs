//! The manifest: which raw uploads and Parquet files make up each version of a dataset.
//! A file is part of the dataset exactly when its row is here; files on disk without a row are
//! leftovers of an interrupted commit and are removed at start-up (on a shared object store, swept
//! once older than its grace period, [`crate::storage::ObjectStorage::unlisted_grace`]).

use std::collections::HashSet;
use std::time::SystemTime;

use crate::catalog::{Catalog, StoredFiles};
pub use crate::catalog::{DataFile, RawFile};
use crate::error::Result;
use crate::storage::{keys, ObjectMeta, Storage};

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

/// Removes every object under `data/` and `raw/` that `listed` (the manifest) does not list
/// (and, on the local folder, the folders left empty), and returns how many. `listed` must be
/// read before this lists the objects, so an object committed in between is young and kept.
/// On the local folder it runs at start-up, before anything else writes, and removes every
/// unlisted object. On a shared store ([`crate::storage::ObjectStorage::unlisted_grace`]) it also runs
/// periodically and removes only objects older than the grace period (younger ones may be a
/// commit in flight on another node) that no query of this process still reads.
pub fn remove_unlisted_files(listed: &StoredFiles, storage: &Storage) -> Result<usize> {
    let mut keep: HashSet<String> = HashSet::new();
    for f in &listed.data {
        keep.insert(f.path.clone());
    }
    for r in &listed.raw {
        keep.insert(keys::raw_key(&r.key, r.version, &r.raw_filename));
    }
    let objects = storage.objects();
    let now = SystemTime::now();
    let removable = |object: &ObjectMeta| match objects.unlisted_grace() {
        None => true,
        Some(grace) => {
            now.duration_since(object.modified)
                .is_ok_and(|age| age >= grace)
                && !storage.leases().held(&object.key)
        }
    };
    let mut removed = 0;
    for prefix in keys::LISTED_PREFIXES {
        for object in objects.list(prefix)? {
            if !keep.contains(&object.key) && removable(&object) {
                objects.delete(&object.key)?;
                removed += 1;
            }
        }
        objects.prune_empty(prefix)?;
    }
    Ok(removed)
}
