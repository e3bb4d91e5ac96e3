//! `rapid-rs admin compact`: every dataset's small files merged now, with the service stopped
//! (the running service compacts on its own, and on `POST .../compact`). The same plan, merge
//! and commit as the service's compactor, without its actors: stopped, nothing else writes.

use std::path::Path;

use serde::Serialize;

use crate::compaction::{input_parts, merge, plan, CompactionSettings, Trigger};
use crate::dataset::{commit_merges, StagedMerge};
use crate::error::Result;
use crate::key::DatasetKey;
use crate::manifest::snapshot;
use crate::storage::Storage;

/// What one `compact` run did.
#[derive(Debug, Default, Serialize)]
pub struct CompactReport {
    /// Dataset versions that had files to merge.
    pub versions: usize,
    pub files_replaced: usize,
    pub files_written: usize,
}

/// Merges the small files of the latest version of every dataset (or of `only`) of a local
/// data folder.
pub fn compact(
    data_dir: &Path,
    catalog_url: Option<&str>,
    only: Option<&DatasetKey>,
    settings: &CompactionSettings,
) -> Result<CompactReport> {
    let catalog = crate::catalog::open_existing(data_dir, catalog_url)?;
    let storage = Storage::new(data_dir);
    std::fs::create_dir_all(storage.staging_root())?;
    let keys = match only {
        Some(key) => vec![key.clone()],
        None => catalog.dataset_keys()?,
    };
    let mut report = CompactReport::default();
    for key in keys {
        let record = catalog.find_dataset(&key)?.ok_or_else(|| key.not_found())?;
        let version = record.latest_version;
        let (files, _lease) = snapshot(catalog.as_ref(), &storage, record.id, version)?;
        let groups = plan(&files, settings, Trigger::Settled);
        if groups.is_empty() {
            continue;
        }
        report.versions += 1;
        let parts = input_parts(catalog.as_ref(), &groups)?;
        for group in groups {
            let staged = storage
                .staging_root()
                .join(format!("compact-{}.parquet", uuid::Uuid::new_v4().simple()));
            let merged = merge(&storage, &group.files, &parts, &staged, &mut |_| {})?;
            let staged_merge = StagedMerge {
                staged: staged.clone(),
                partition_path: group.partition_path,
                replaces: group.files.iter().map(|f| f.id).collect(),
                merged,
            };
            let outcome = commit_merges(
                catalog.as_ref(),
                &storage,
                &record,
                version,
                vec![staged_merge],
            );
            let _ = std::fs::remove_file(&staged);
            report.files_replaced += outcome?;
            report.files_written += 1;
        }
    }
    Ok(report)
}
