//! Commits that swap data files for others holding the same rows (compaction) or the same rows
//! less one raw file's (deleting a raw file whose rows were merged), run by the dataset's actor
//! like every other change of the dataset.

use std::collections::HashMap;
use std::path::PathBuf;

use crate::catalog::{Catalog, FileSwap, PartsOf, RetiredRewrite, SwapFile};
use crate::compaction::{rewrite_without, Merged};
use crate::error::{Error, Result};
use crate::key::DatasetRecord;
use crate::storage::{keys, StagedObject, Storage};

/// A merged file in staging, and the files of one partition it replaces.
#[derive(Debug)]
pub(crate) struct StagedMerge {
    pub staged: PathBuf,
    pub partition_path: String,
    pub replaces: Vec<i64>,
    pub merged: Merged,
}

/// Puts the merged files under their keys and swaps them for the files they replace, in one
/// catalog step; returns how many files were replaced. A conflict (another change removed one
/// of them meanwhile) records nothing and removes the placed objects. Called by the dataset's
/// actor, or by `rapid-rs admin compact` with the service stopped.
pub(crate) fn commit_merges(
    catalog: &dyn Catalog,
    storage: &Storage,
    record: &DatasetRecord,
    version: i64,
    merges: Vec<StagedMerge>,
) -> Result<usize> {
    let objects: Vec<StagedObject> = merges
        .iter()
        .map(|m| StagedObject {
            staged: m.staged.clone(),
            key: new_key(record, version, &m.partition_path),
        })
        .collect();
    let swap = FileSwap {
        dataset_id: record.id,
        version,
        removed: merges.iter().flat_map(|m| m.replaces.clone()).collect(),
        added: merges
            .iter()
            .zip(&objects)
            .map(|(m, o)| swap_file(&m.partition_path, &o.key, &m.merged))
            .collect(),
        raw_deleted: None,
        subject: None,
    };
    let replaced = swap.removed.len();
    put_and_swap(catalog, storage, &objects, &swap)?;
    Ok(replaced)
}

/// Deletes raw file `raw` when merged files hold some of its rows: each is rewritten without
/// them, and one catalog step swaps the rewrites in, drops the raw file's own data files, its
/// unique keys (they name it) and its row. `Ok(false)` when no merged file holds its rows (the caller deletes
/// it the plain way).
pub(super) fn delete_merged_rows(
    catalog: &dyn Catalog,
    storage: &Storage,
    record: &DatasetRecord,
    version: i64,
    raw: &str,
    subject: &str,
) -> Result<bool> {
    let parts = catalog.file_parts(PartsOf::Holding {
        dataset_id: record.id,
        version,
        raw_filename: raw,
    })?;
    if parts.is_empty() {
        return Ok(false);
    }
    let mut by_file: HashMap<i64, Vec<crate::catalog::FilePart>> = HashMap::new();
    for (id, part) in parts {
        by_file.entry(id).or_default().push(part);
    }
    let mut objects = Vec::new();
    let mut added = Vec::new();
    let files = catalog.data_files(record.id, version)?;
    for file in files.iter().filter(|f| by_file.contains_key(&f.id)) {
        let staged = storage
            .staging_root()
            .join(format!("rewrite-{}.parquet", uuid::Uuid::new_v4()));
        let rewritten = rewrite_without(storage, file, &by_file[&file.id], raw, &staged)?;
        if let Some(merged) = rewritten {
            let key = new_key(record, version, &file.partition_path);
            added.push(swap_file(&file.partition_path, &key, &merged));
            objects.push(StagedObject { staged, key });
        }
    }
    let swap = FileSwap {
        dataset_id: record.id,
        version,
        removed: by_file.keys().copied().collect(),
        added,
        raw_deleted: Some(raw.to_string()),
        subject: Some(subject.to_string()),
    };
    put_and_swap(catalog, storage, &objects, &swap)?;
    Ok(true)
}

/// Erasure after raw file `raw`'s DELETE commit (`?erase=true`; docs/DESIGN.md, History): each
/// retired file holding its rows is dropped (all its rows are the raw file's) or rewritten
/// without them under a new key (put durably first, as compaction's files), and one catalog
/// step lists the rewrites in place of the old files in every commit that listed them and
/// marks the DELETE commit ERASE. The old objects go once no query of this process reads them.
/// Returns how many retired files changed.
pub(super) fn erase_retired(
    catalog: &dyn Catalog,
    storage: &Storage,
    record: &DatasetRecord,
    version: i64,
    raw: &str,
) -> Result<usize> {
    let held = catalog.retired_holding(record.id, version, raw)?;
    let mut objects = Vec::new();
    let mut rewrites = Vec::with_capacity(held.len());
    let outcome = (|| {
        for h in &held {
            let mut rewrite = None;
            if !h.parts.is_empty() && h.file.raw_filename != raw {
                let staged = storage
                    .staging_root()
                    .join(format!("erase-{}.parquet", uuid::Uuid::new_v4()));
                if let Some(merged) = rewrite_without(storage, &h.file, &h.parts, raw, &staged)? {
                    let key = new_key(record, version, &h.file.partition_path);
                    rewrite = Some(swap_file(&h.file.partition_path, &key, &merged));
                    objects.push(StagedObject { staged, key });
                }
            }
            rewrites.push(RetiredRewrite {
                path: h.file.path.clone(),
                rewrite,
            });
        }
        storage.objects().put(&objects)?;
        catalog.erase_retired(record.id, version, raw, &rewrites)
    })();
    match outcome {
        Ok(unneeded) => {
            for path in &unneeded {
                storage.leases().retire(path);
            }
            Ok(rewrites.len())
        }
        Err(e) => {
            for object in &objects {
                let _ = storage.objects().delete(&object.key);
                let _ = std::fs::remove_file(&object.staged);
            }
            Err(e)
        }
    }
}

fn new_key(record: &DatasetRecord, version: i64, partition_path: &str) -> String {
    let name = format!("compacted-{}.parquet", uuid::Uuid::new_v4().simple());
    keys::data_key(&record.key, version, partition_path, &name)
}

fn swap_file(partition_path: &str, key: &str, merged: &Merged) -> SwapFile {
    SwapFile {
        partition_path: partition_path.to_string(),
        path: key.to_string(),
        rows: merged.rows,
        bytes: merged.bytes,
        stats: merged.stats.clone(),
        parts: merged.parts.clone(),
    }
}

/// Puts `objects` durably and records `swap`: the files it drops are retired in the catalog
/// (earlier commits still list them; retention deletes them later). On any failure the placed
/// objects are removed and nothing is recorded.
fn put_and_swap(
    catalog: &dyn Catalog,
    storage: &Storage,
    objects: &[StagedObject],
    swap: &FileSwap,
) -> Result<()> {
    storage.objects().put(objects)?;
    let outcome = catalog.swap_files(swap).and_then(|dropped| {
        dropped.ok_or_else(|| {
            Error::not_found(format!(
                "The file [{}] does not exist",
                swap.raw_deleted.as_deref().unwrap_or_default()
            ))
        })
    });
    match outcome {
        Ok(_dropped) => Ok(()),
        Err(e) => {
            for object in objects {
                let _ = storage.objects().delete(&object.key);
            }
            Err(e)
        }
    }
}
