//! A dataset version's history (`GET .../history`): its commits, newest first, a page at a time
//! (`crate::history`).

use super::{pick_version, Engine};
use crate::auth::pass::AdminPass;
use crate::auth::pass::{DatasetPass, Read};
use crate::dataset::Rollback;
use crate::error::{Error, Result};
use crate::history::{Commit, HistorySettings};
use crate::key::DatasetKey;
use crate::traced::Traced;

/// The most commits one page of history holds.
pub const MAX_HISTORY_PAGE: i64 = 1000;

impl Engine {
    /// The retention of `version` (the latest when absent or 0): the service's settings with
    /// what its schema's `metadata.history` sets in their place; 404 for no such version.
    pub fn retention(
        &self,
        pass: &DatasetPass<Read>,
        version: Option<i64>,
    ) -> Result<HistorySettings> {
        let record = pass.record();
        let version = pick_version(version, record.latest_version);
        let schema = self.registry.schema(&record.key, Some(version))?;
        let own = schema.schema().metadata.history;
        Ok(self.settings.history.with(own.as_ref()))
    }

    /// Page `page` (from 1) of `per_page` commits of `version` (the latest when absent or 0),
    /// newest first; 404 for a version that does not exist, 400 for a page or size out of range.
    /// A page shorter than `per_page` is the last. 403 when a policy applies to the subject there
    /// (the commits' row counts would count hidden rows).
    pub fn history(
        &self,
        pass: &DatasetPass<Read>,
        version: Option<i64>,
        page: i64,
        per_page: i64,
    ) -> Result<Vec<Commit>> {
        if page < 1 {
            return Err(Error::invalid(format!(
                "Invalid page [{page}]: pages start at 1"
            )));
        }
        if !(1..=MAX_HISTORY_PAGE).contains(&per_page) {
            return Err(Error::invalid(format!(
                "Invalid per_page [{per_page}]: from 1 to {MAX_HISTORY_PAGE}"
            )));
        }
        let record = pass.record();
        let version = pick_version(version, record.latest_version);
        let schema = self.registry.schema(&record.key, Some(version))?;
        // Rows added and removed count hidden rows too.
        self.refuse_under_policy(pass.subject(), record, version, &schema, "history")?;
        let offset = (page - 1).saturating_mul(per_page);
        self.catalog.commits(record.id, version, offset, per_page)
    }

    /// A new commit of `version` (the latest when absent or 0) whose files are those of commit
    /// `to_commit`, made by the dataset's actor after any change already queued; answers its
    /// number. 404 for an unknown dataset, version or commit (or one past retention), 409 across
    /// a raw file deletion.
    pub async fn rollback(
        &self,
        pass: &AdminPass,
        key: &DatasetKey,
        version: Option<i64>,
        to_commit: i64,
    ) -> Result<i64> {
        let record = self.registry.find(key)?;
        let version = pick_version(version, record.latest_version);
        self.registry.schema(key, Some(version))?;
        let actor = self.registry.dataset_actor(&record.key).await?;
        let commit = actor
            .send(Traced::new(Rollback {
                version,
                to_commit,
                subject: pass.subject().id.clone(),
            }))
            .await??;
        self.compactor.committed(&record.key, version);
        Ok(commit)
    }
}
