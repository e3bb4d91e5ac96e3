//! The column profile of a dataset version (`GET .../profile`): its uploads' kept profiles
//! merged, and what changed between the last two (`crate::profile`).

use super::{pick_version, Engine};
use crate::auth::pass::{DatasetPass, Read};
use crate::error::Result;
use crate::profile::{view::view, ProfileView, StoredProfile};

impl Engine {
    /// The profile of `version` (the latest when absent or 0; 404 for a version that does not
    /// exist). Uploads stored before profiles were kept are not in it (`uploads` counts those
    /// that are).
    pub fn profile(&self, pass: &DatasetPass<Read>, version: Option<i64>) -> Result<ProfileView> {
        let record = pass.record();
        let version = pick_version(version, record.latest_version);
        let schema = self.registry.schema(&record.key, Some(version))?;
        // Profiles are counted at commit over every row: refused under a policy.
        self.refuse_under_policy(pass.subject(), record, version, &schema, "profile")?;
        let kept = self.catalog.profiles(record.id, version)?;
        // Only the uploads with rows in the current commit: after a rollback, those rolled
        // back away describe no row a query reads.
        let files = self.catalog.data_files(record.id, version)?;
        let live = super::browse::live_rows(self.catalog.as_ref(), &files)?;
        let uploads: Vec<StoredProfile> = kept
            .iter()
            .filter(|(raw, _)| live.contains_key(raw))
            .filter_map(|(_, text)| StoredProfile::from_json(text))
            .collect();
        Ok(view(version, &uploads))
    }
}
