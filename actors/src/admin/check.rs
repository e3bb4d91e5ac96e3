//! `check`: the catalog against the files. Reported drift:
//! - `missing`: a file the catalog lists is not there (data lost: restore a backup, or delete
//!   that file or dataset through the API);
//! - `damaged`: a listed file whose size differs from the recorded one, or a Parquet file whose
//!   footer cannot be read or counts other rows than recorded;
//! - `unlisted`: a file under `data/` or `raw/` no catalog row lists (left by an interrupted
//!   commit; harmless, and removed by `--repair` or the next start);
//! - `delta`: where a version's Delta Lake log disagrees with the catalog's commits (a log
//!   version missing, or not what the catalog's rows give: `crate::delta_log::check`); the log
//!   is derived from the catalog, so `--repair` writes what is missing and writes a differing
//!   log again (the next start writes what is missing). A version with no log at all (stored
//!   before logs existed; a backup folder) is listed under `delta_unwritten`, not as drift.
//!
//! While the service runs, a commit can make a file briefly unlisted (moved into place, not yet
//! recorded) or unlisted-then-gone (replaced): the check then looks twice, a second apart, and
//! reports only what it saw both times.

use std::collections::BTreeSet;
use std::path::Path;

use parquet::file::reader::{FileReader, SerializedFileReader};
use serde::Serialize;

use super::listed_files;
use crate::error::Result;
use crate::storage::{keys, ObjectReader, Storage};

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CheckReport {
    /// Files the catalog lists.
    pub listed: usize,
    pub missing: BTreeSet<String>,
    pub damaged: BTreeSet<String>,
    pub unlisted: BTreeSet<String>,
    /// Delta log disagreements, `"{log file}: {what}"`.
    pub delta: BTreeSet<String>,
    /// Versions with commits and no Delta log yet (stored before logs existed; a backup):
    /// written at the next start or by `--repair`; not drift.
    pub delta_unwritten: BTreeSet<String>,
    /// Unlisted files removed by `--repair`.
    pub removed: usize,
    /// Delta log versions written by `--repair`.
    pub logged: usize,
}

impl CheckReport {
    pub fn clean(&self) -> bool {
        self.missing.is_empty()
            && self.damaged.is_empty()
            && self.unlisted.is_empty()
            && self.delta.is_empty()
    }
}

/// Checks once (`online: false`, the service stopped) or twice keeping what both saw (online).
/// `repair` (only with the service stopped) removes unlisted files and empty folders.
/// `catalog_url`: the catalog's PostgreSQL URL, if it is not the data folder's SQLite file.
pub fn check(
    data_dir: &Path,
    catalog_url: Option<&str>,
    online: bool,
    repair: bool,
) -> Result<CheckReport> {
    let mut report = look(data_dir, catalog_url)?;
    if online {
        std::thread::sleep(std::time::Duration::from_secs(1));
        let again = look(data_dir, catalog_url)?;
        report.missing = report
            .missing
            .intersection(&again.missing)
            .cloned()
            .collect();
        report.damaged = report
            .damaged
            .intersection(&again.damaged)
            .cloned()
            .collect();
        report.unlisted = report
            .unlisted
            .intersection(&again.unlisted)
            .cloned()
            .collect();
        report.delta = report.delta.intersection(&again.delta).cloned().collect();
        report.listed = again.listed;
    }
    if repair && !(report.delta.is_empty() && report.delta_unwritten.is_empty()) {
        let catalog = crate::catalog::open_existing(data_dir, catalog_url)?;
        report.logged = crate::delta_log::repair_all(catalog.as_ref(), &Storage::new(data_dir))?;
        let found = crate::delta_log::check_all(catalog.as_ref(), &Storage::new(data_dir))?;
        report.delta = found.drift.into_iter().collect();
        report.delta_unwritten = found.unwritten.into_iter().collect();
    }
    if repair && !report.unlisted.is_empty() {
        let catalog = crate::catalog::open_existing(data_dir, catalog_url)?;
        report.removed = crate::manifest::remove_unlisted_files(
            &catalog.stored_files()?,
            &Storage::new(data_dir),
        )?;
        report.unlisted.clear();
    }
    Ok(report)
}

/// Writes the Delta log versions the catalog has and the logs lack (after a restore: backups
/// hold the catalog and the files it lists; the logs are derived from them). Returns how many.
pub fn write_delta_logs(data_dir: &Path, catalog_url: Option<&str>) -> Result<usize> {
    let catalog = crate::catalog::open_existing(data_dir, catalog_url)?;
    Ok(crate::delta_log::sync_all(catalog.as_ref(), &Storage::new(data_dir))?.0)
}

fn look(data_dir: &Path, catalog_url: Option<&str>) -> Result<CheckReport> {
    // One catalog read: the list is one committed state.
    let catalog = crate::catalog::open_existing(data_dir, catalog_url)?;
    let listed = listed_files(catalog.as_ref())?;
    let mut report = CheckReport {
        listed: listed.len(),
        ..CheckReport::default()
    };
    let objects = Storage::new(data_dir).objects().clone();
    for file in &listed {
        let Ok(size) = objects.size(&file.rel) else {
            report.missing.insert(file.rel.clone());
            continue;
        };
        let size_ok = size == file.bytes;
        let rows_ok = match file.rows {
            None => true,
            Some(rows) => ObjectReader::new(objects.clone(), &file.rel)
                .ok()
                .and_then(|r| SerializedFileReader::new(r).ok())
                .is_some_and(|r| r.metadata().file_metadata().num_rows() as u64 == rows),
        };
        if !(size_ok && rows_ok) {
            report.damaged.insert(file.rel.clone());
        }
    }
    let names: BTreeSet<&str> = listed.iter().map(|f| f.rel.as_str()).collect();
    for prefix in keys::LISTED_PREFIXES {
        for object in objects.list(prefix)? {
            if !names.contains(object.key.as_str()) && !keys::is_delta_log(&object.key) {
                report.unlisted.insert(object.key);
            }
        }
    }
    let found = crate::delta_log::check_all(catalog.as_ref(), &Storage::new(data_dir))?;
    report.delta = found.drift.into_iter().collect();
    report.delta_unwritten = found.unwritten.into_iter().collect();
    Ok(report)
}
