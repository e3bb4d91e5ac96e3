//! Commits as versions (issue 36; docs/guide.md, History): every change of a version's files is a
//! numbered commit kept by the catalog in the change's own transaction. Files a commit replaces
//! are retired, not deleted, while a retained commit lists them; this module holds the retention
//! rule, the as-of read of a commit's files and the sweep that deletes what retention gave up.

use std::time::Duration;

use crate::catalog::{time_text_before, Catalog, DataFile, Retention};
pub use crate::catalog::{AsOf, Commit, FilesAt};
use crate::error::{Error, Result};
use crate::schema::HistoryRetention;
use crate::storage::{LeaseGuard, Storage};

/// How long commits stay readable (`RAPID_HISTORY_KEEP_COMMITS`, `RAPID_HISTORY_KEEP_SECONDS`):
/// a commit is retained while it is among the newest `keep_commits` of its version *or* younger
/// than `keep_for`. The newest commit is always retained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HistorySettings {
    pub keep_commits: u64,
    pub keep_for: Duration,
}

impl Default for HistorySettings {
    fn default() -> HistorySettings {
        HistorySettings {
            keep_commits: 100,
            keep_for: Duration::from_secs(24 * 3600),
        }
    }
}

impl HistorySettings {
    /// These settings with a dataset's own values (its schema's `metadata.history`) in place
    /// of those it sets.
    pub fn with(&self, own: Option<&HistoryRetention>) -> HistorySettings {
        let own = own.copied().unwrap_or_default();
        HistorySettings {
            keep_commits: own
                .keep_commits
                .map_or(self.keep_commits, |n| n.max(1) as u64),
            keep_for: own
                .keep_seconds
                .map_or(self.keep_for, |s| Duration::from_secs(s.max(0) as u64)),
        }
    }

    /// The retention of one schema version: these settings with what its stored schema sets.
    pub fn of_version(
        &self,
        catalog: &dyn Catalog,
        dataset_id: i64,
        version: i64,
    ) -> Result<HistorySettings> {
        /// Only the part read here, so a stored schema is not parsed whole.
        #[derive(serde::Deserialize)]
        struct Stored {
            #[serde(default)]
            metadata: StoredMetadata,
        }
        #[derive(Default, serde::Deserialize)]
        struct StoredMetadata {
            #[serde(default)]
            history: Option<HistoryRetention>,
        }
        let Some(json) = catalog.schema_json(dataset_id, version)? else {
            return Ok(*self);
        };
        let stored: Stored = serde_json::from_str(&json).map_err(|e| {
            Error::internal(format!(
                "the stored schema of dataset {dataset_id} version {version}: {e}"
            ))
        })?;
        Ok(self.with(stored.metadata.history.as_ref()))
    }

    /// The rule as the catalog applies it now.
    fn retention(&self) -> Retention {
        Retention {
            keep_commits: i64::try_from(self.keep_commits.max(1)).unwrap_or(i64::MAX),
            keep_since: time_text_before(self.keep_for),
        }
    }
}

/// The files of commit `at` of a version, leased so that none is deleted while the caller reads
/// them (the lease is taken before any commit or expiry that gives them up can return), with the
/// number of the commit read.
pub fn snapshot_at(
    catalog: &dyn Catalog,
    storage: &Storage,
    dataset_id: i64,
    version: i64,
    at: &AsOf,
) -> Result<(FilesAt, LeaseGuard)> {
    let mut lease = None;
    let files = catalog.files_at_held(dataset_id, version, at, &mut |files: &[DataFile]| {
        lease = Some(
            storage
                .leases()
                .lease(files.iter().map(|f| f.path.clone()).collect()),
        );
    })?;
    let lease = lease.unwrap_or_else(|| storage.leases().lease(Vec::new()));
    Ok((files, lease))
}

/// Applies retention to one version (`settings`, or what its schema's `metadata.history` sets
/// in their place): the retired files no retained commit lists leave the catalog and are
/// deleted once no query of this process reads them. Returns how many.
pub fn expire(
    catalog: &dyn Catalog,
    storage: &Storage,
    dataset_id: i64,
    version: i64,
    settings: &HistorySettings,
) -> Result<usize> {
    let settings = settings.of_version(catalog, dataset_id, version)?;
    let paths = catalog.expire_commits(dataset_id, version, &settings.retention())?;
    for path in &paths {
        storage.leases().retire(path);
    }
    Ok(paths.len())
}

/// [`expire`] over every version that keeps retired files (commits age out without new ones),
/// but those in `lagging` (whose Delta log could not be brought up to date: expiring would drop
/// the rows its missing versions are derived from); returns how many files were given up. A
/// version that fails is logged and the rest go on.
pub fn expire_all(
    catalog: &dyn Catalog,
    storage: &Storage,
    settings: &HistorySettings,
    lagging: &[(i64, i64)],
) -> Result<usize> {
    let mut removed = 0;
    for (dataset_id, version) in catalog.versions_with_retired_files()? {
        if lagging.contains(&(dataset_id, version)) {
            continue;
        }
        match expire(catalog, storage, dataset_id, version, settings) {
            Ok(n) => removed += n,
            Err(e) => {
                tracing::warn!(dataset_id, version, error = %e.report(), "expiring old commits")
            }
        }
    }
    Ok(removed)
}

/// `?as_of_commit=` or `?as_of=` (RFC 3339) as a read point; both at once is a 400.
pub fn as_of(commit: Option<i64>, time: Option<&str>) -> Result<AsOf> {
    match (commit, time) {
        (None, None) => Ok(AsOf::Latest),
        (Some(_), Some(_)) => Err(Error::invalid(
            "Give as_of_commit or as_of, not both".to_string(),
        )),
        (Some(n), None) => Ok(AsOf::Commit(n)),
        (None, Some(text)) => {
            let time = chrono::DateTime::parse_from_rfc3339(text.trim()).map_err(|e| {
                Error::invalid(format!(
                    "Invalid as_of [{text}]: an RFC 3339 time is expected, e.g. \
                     2026-01-31T12:00:00Z ({e})"
                ))
            })?;
            // Written as the catalog writes commit times, so texts compare as the times do;
            // cut to the millisecond (commit times are), never rounded up past a commit.
            Ok(AsOf::Time(
                time.with_timezone(&chrono::Utc)
                    .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dataset_s_own_values_replace_the_settings_they_name() {
        let global = HistorySettings::default();
        assert_eq!(global.with(None), global);
        let own = HistoryRetention {
            keep_commits: Some(2),
            keep_seconds: None,
        };
        let mine = global.with(Some(&own));
        assert_eq!((mine.keep_commits, mine.keep_for), (2, global.keep_for));
        let own = HistoryRetention {
            keep_commits: None,
            keep_seconds: Some(0),
        };
        let mine = global.with(Some(&own));
        assert_eq!((mine.keep_commits, mine.keep_for), (100, Duration::ZERO));
    }

    #[test]
    fn as_of_reads_a_commit_or_a_time_in_utc() {
        assert_eq!(as_of(None, None).unwrap(), AsOf::Latest);
        assert_eq!(as_of(Some(3), None).unwrap(), AsOf::Commit(3));
        assert_eq!(
            as_of(None, Some("2026-01-31T13:00:00.1239+01:00")).unwrap(),
            AsOf::Time("2026-01-31T12:00:00.123Z".into())
        );
        assert!(as_of(None, Some("yesterday")).is_err());
        assert!(as_of(Some(1), Some("2026-01-31T12:00:00Z")).is_err());
    }
}
