//! The dataset page's figures in one call: a version's schema, info (rows, columns, last update,
//! date ranges), raw files with their live rows, rows per partition, column profile, and every
//! version's rows, each as the API's own use case answers it (`info`, `profile`, `schema`), so
//! the page shows what the API answers, for the version's current commit (after a rollback too).

use super::{pick_version, DatasetInfo, Engine, VersionFiles};
use crate::auth::pass::{AccessKind, DatasetPass, Read};
use crate::error::{Error, Result};
use crate::profile::ProfileView;
use crate::schema::Schema;

/// The most versions [`Overview::versions`] lists (newest first).
pub const OVERVIEW_VERSIONS: i64 = 50;

/// What the dataset page shows of one version.
pub struct Overview {
    pub version: i64,
    pub schema: Schema,
    /// `GET .../info`, or why it could not be read (the page says so in place).
    pub info: std::result::Result<DatasetInfo, Error>,
    pub files: VersionFiles,
    pub profile: ProfileView,
    /// Each version's rows in its current commit, newest first (at most [`OVERVIEW_VERSIONS`]).
    pub versions: Vec<(i64, i64)>,
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
        let files = self.version_files(pass, version)?;
        let profile = self.profile(pass, Some(version))?;
        Ok(Overview {
            version,
            schema,
            info,
            files,
            profile,
            versions,
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
