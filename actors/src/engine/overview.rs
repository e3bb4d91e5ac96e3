//! The dataset page's figures in one call: a version's schema, info (rows, columns, last update,
//! date ranges), raw files with their live rows, rows per partition, column profile, and every
//! version's rows, each as the API's own use case answers it (`info`, `profile`, `schema`), so
//! the page shows what the API answers, for the version's current commit (after a rollback too).

use super::{pick_version, DatasetInfo, Engine, VersionFiles};
use crate::auth::pass::{AccessKind, DatasetPass, Read};
use crate::error::{Error, Result};
use crate::profile::ProfileView;
use crate::query::policy::Policy;
use crate::schema::Schema;

/// The most versions [`Overview::versions`] lists (newest first).
pub const OVERVIEW_VERSIONS: i64 = 50;

/// What the dataset page shows of one version.
pub struct Overview {
    pub version: i64,
    pub schema: Schema,
    /// `GET .../info`, or why it could not be read (the page says so in place).
    pub info: std::result::Result<DatasetInfo, Error>,
    /// Empty when a policy applies to the subject (its row counts count hidden rows).
    pub files: VersionFiles,
    /// `None` when a policy applies to the subject (it is over every row).
    pub profile: Option<ProfileView>,
    /// Each version's rows in its current commit, newest first (at most [`OVERVIEW_VERSIONS`]).
    pub versions: Vec<(i64, i64)>,
    pub policy: PolicyNotice,
}

/// What the dataset page says of the version's policy.
#[derive(Debug, Clone, PartialEq)]
pub enum PolicyNotice {
    /// The version has no policy, or none of it applies to a subject who is no DATA_ADMIN.
    None,
    /// For a DATA_ADMIN: the policy as stored, and the names of what of it applies to them.
    Rules {
        policy: Policy,
        applies: Vec<String>,
    },
    /// For a reader the policy applies to: the names of its row filters and each masked column
    /// with its mask; never a filter's text (it may name other subjects' attributes or values).
    AppliesToYou {
        filters: Vec<String>,
        masks: Vec<(String, String)>,
    },
}

impl Engine {
    /// The dataset page's figures of `version` (absent or 0: the newest version holding rows,
    /// the latest when none does, see [`Engine::page_version`]; 404 for a version that does not
    /// exist).
    pub async fn overview(
        &self,
        pass: &DatasetPass<Read>,
        version: Option<i64>,
    ) -> Result<Overview> {
        let versions = self.rows_per_version(pass)?;
        let version = page_version(version, pass.record().latest_version, &versions);
        let schema = self.schema(pass, Some(version))?.into_schema();
        let info = self.info(pass, Some(version)).await;
        let policy = self.policy_notice(pass, version)?;
        // Under a policy the files' rows and the profile count hidden rows: not shown.
        let (files, profile) = match self.counts_hidden(pass, version)? {
            true => (VersionFiles::default(), None),
            false => (
                self.counted_files(pass, version)?,
                Some(self.profile(pass, Some(version))?),
            ),
        };
        Ok(Overview {
            version,
            schema,
            info,
            files,
            profile,
            versions,
            policy,
        })
    }

    /// The version's policy as the dataset page shows it to the pass's subject.
    fn policy_notice(&self, pass: &DatasetPass<Read>, version: i64) -> Result<PolicyNotice> {
        let record = pass.record();
        let Some(json) = self.catalog.policy(record.id, version)? else {
            return Ok(PolicyNotice::None);
        };
        let schema = self.registry.schema(&record.key, Some(version))?;
        let applying = self.policy_for(pass.subject(), record, version, &schema)?;
        if crate::auth::pass::admin_pass(pass.subject().clone()).is_ok() {
            let policy: Policy = serde_json::from_str(&json)
                .map_err(|e| Error::internal(format!("stored policy: {e}")))?;
            let applies = applying.names;
            return Ok(PolicyNotice::Rules { policy, applies });
        }
        if applying.is_none() {
            return Ok(PolicyNotice::None);
        }
        let filters = applying.names.into_iter();
        let mut masks: Vec<(String, String)> = applying
            .masks
            .iter()
            .map(|(column, mask)| (column.clone(), mask.name().to_string()))
            .collect();
        masks.sort();
        Ok(PolicyNotice::AppliesToYou {
            filters: filters.filter(|n| !n.starts_with("mask:")).collect(),
            masks,
        })
    }

    /// Each version's rows in its current commit, newest first (at most [`OVERVIEW_VERSIONS`]).
    pub fn rows_per_version<A: AccessKind>(
        &self,
        pass: &DatasetPass<A>,
    ) -> Result<Vec<(i64, i64)>> {
        let latest = pass.record().latest_version;
        let mut out = vec![];
        for v in (1..=latest).rev().take(OVERVIEW_VERSIONS as usize) {
            // A version whose rows a policy filters for this subject is not counted.
            if let Some(rows) = self.rows_of_version(pass, v)? {
                out.push((v, rows));
            }
        }
        Ok(out)
    }

    /// The rows of one version's current commit, as [`Engine::rows_per_version`] counts them;
    /// `None` when a policy filters the version's rows for this subject (the total would count
    /// hidden rows). A listing of many datasets asks this once each.
    pub fn rows_of_version<A: AccessKind>(
        &self,
        pass: &DatasetPass<A>,
        version: i64,
    ) -> Result<Option<i64>> {
        if self.counts_hidden(pass, version)? {
            return Ok(None);
        }
        Ok(Some(self.counted_files(pass, version)?.live.values().sum()))
    }

    /// The version a page reads when none is asked: the newest one holding rows (a new schema
    /// version starts empty: its data is still in the one before), the latest when none does.
    pub fn page_version<A: AccessKind>(
        &self,
        pass: &DatasetPass<A>,
        asked: Option<i64>,
    ) -> Result<i64> {
        let versions = self.rows_per_version(pass)?;
        Ok(page_version(asked, pass.record().latest_version, &versions))
    }

    /// When `version` holds no rows while another version does: the newest such version and
    /// its rows (a page says where the data is).
    pub fn rows_elsewhere<A: AccessKind>(
        &self,
        pass: &DatasetPass<A>,
        version: i64,
    ) -> Result<Option<(i64, i64)>> {
        let versions = self.rows_per_version(pass)?;
        let here = versions
            .iter()
            .find(|(v, _)| *v == version)
            .map_or(0, |x| x.1);
        Ok(match here {
            0 => versions.iter().find(|(_, r)| *r > 0).copied(),
            _ => None,
        })
    }
}

/// `asked` (absent or 0: the newest of `versions`, newest first, with rows; else `latest`).
fn page_version(asked: Option<i64>, latest: i64, versions: &[(i64, i64)]) -> i64 {
    match asked.filter(|v| *v != 0) {
        Some(_) => pick_version(asked, latest),
        None => versions
            .iter()
            .find(|(_, r)| *r > 0)
            .map_or(latest, |(v, _)| *v),
    }
}
