//! The manifest: which raw uploads and Parquet files make up each version of a dataset.
//! A file is part of the dataset exactly when its row is here; files on disk without a row are
//! leftovers of an interrupted commit and are removed at start-up (on a shared object store, swept
//! once older than its grace period, [`crate::storage::ObjectStorage::unlisted_grace`]).

pub(crate) use rapid_rows::stats;

use std::collections::HashSet;
use std::time::SystemTime;

pub(crate) use crate::catalog::DataFile;
use crate::catalog::{Catalog, StoredFiles};
use crate::error::Result;
use crate::storage::{keys, ObjectMeta, Storage};

/// The files of a version as of now, leased so that none of them is deleted while the caller
/// reads them. The lease is taken before any commit replacing them can return (a commit retires
/// replaced files only after its catalog step), so none can go in between.
pub(crate) fn snapshot(
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
pub(crate) fn remove_unlisted_files(listed: &StoredFiles, storage: &Storage) -> Result<usize> {
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
            // A Delta log is derived from the catalog, not listed by it (`crate::delta_log`).
            let kept = keep.contains(&object.key) || keys::is_delta_log(&object.key);
            if !kept && removable(&object) {
                objects.delete(&object.key)?;
                removed += 1;
            }
        }
        objects.prune_empty(prefix)?;
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;
    use crate::storage::{S3Objects, StagedObject};

    const LISTED: &str = "data/l/d/s/1/listed.parquet";
    const STRAY: &str = "data/l/d/s/1/stray.parquet";

    fn listed() -> StoredFiles {
        let file = DataFile {
            id: 1,
            raw_filename: "r.csv".into(),
            partition_path: String::new(),
            path: LISTED.into(),
            rows: 1,
            bytes: 1,
            stats: None,
        };
        StoredFiles {
            data: vec![file],
            raw: Vec::new(),
        }
    }

    /// `storage` holding the listed object and a stray one, both just written.
    fn with_objects(storage: &Storage, staging: &std::path::Path) {
        for key in [LISTED, STRAY] {
            let staged = staging.join(key.replace('/', "_"));
            std::fs::write(&staged, b"x").unwrap();
            storage
                .objects()
                .put(&[StagedObject {
                    staged,
                    key: key.into(),
                }])
                .unwrap();
        }
    }

    fn keys(storage: &Storage) -> Vec<String> {
        let listed = storage.objects().list("data").unwrap();
        listed.into_iter().map(|o| o.key).collect()
    }

    #[test]
    fn the_local_folder_removes_every_unlisted_object_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let storage = Storage::new(dir.path().join("data"));
        with_objects(&storage, dir.path());
        assert_eq!(remove_unlisted_files(&listed(), &storage).unwrap(), 1);
        assert_eq!(keys(&storage), [LISTED]);
    }

    /// Against the S3 server of `RAPID_TEST_S3_URL` (skipped when unset, unless
    /// `RAPID_REQUIRE_S3=1`): a young stray object is kept, one past the grace is swept, a leased
    /// one is kept; listed objects always stay.
    #[test]
    fn a_shared_store_sweeps_unlisted_objects_only_past_the_grace() {
        let url = match std::env::var("RAPID_TEST_S3_URL") {
            Ok(url) if !url.trim().is_empty() => url.trim().trim_end_matches('/').to_string(),
            _ if std::env::var("RAPID_REQUIRE_S3").is_ok_and(|v| v == "1") => {
                panic!("RAPID_REQUIRE_S3=1 but RAPID_TEST_S3_URL is not set")
            }
            _ => return eprintln!("skipped: RAPID_TEST_S3_URL is not set"),
        };
        let url = format!("{url}/sweep-{}", uuid::Uuid::new_v4().simple());
        let dir = tempfile::tempdir().unwrap();
        let open = |grace: u64| {
            let objects = S3Objects::from_url(&url, Duration::from_secs(grace)).unwrap();
            Storage::with_objects(dir.path(), Arc::new(objects))
        };
        let patient = open(3600);
        with_objects(&patient, dir.path());
        assert_eq!(remove_unlisted_files(&listed(), &patient).unwrap(), 0);
        assert_eq!(keys(&patient), [LISTED, STRAY]);

        let eager = open(0);
        let lease = eager.leases().lease(vec![STRAY.into()]);
        assert_eq!(remove_unlisted_files(&listed(), &eager).unwrap(), 0);
        drop(lease);
        assert_eq!(remove_unlisted_files(&listed(), &eager).unwrap(), 1);
        assert_eq!(keys(&eager), [LISTED]);
        eager.objects().delete_prefix("").unwrap();
    }
}
