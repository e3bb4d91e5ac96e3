//! Upload profiles in PostgreSQL.

use super::PostgresCatalog;
use crate::catalog::interface::ProfileCatalog;
use crate::error::Result;

impl ProfileCatalog for PostgresCatalog {
    fn record_profile(
        &self,
        dataset_id: i64,
        version: i64,
        raw_filename: &str,
        profile: &str,
    ) -> Result<()> {
        self.with(|db| {
            // Only while the raw file is recorded; a second profile of it changes nothing.
            db.execute(
                "INSERT INTO upload_profiles (dataset_id, version, raw_filename, profile)
                 SELECT $1, $2, $3, $4 WHERE EXISTS (
                     SELECT 1 FROM raw_files
                     WHERE dataset_id = $1 AND version = $2 AND raw_filename = $3)
                 ON CONFLICT DO NOTHING",
                &[&dataset_id, &version, &raw_filename, &profile],
            )?;
            Ok(())
        })
    }

    fn profiles(&self, dataset_id: i64, version: i64) -> Result<Vec<String>> {
        self.with(|db| {
            db.query(
                "SELECT profile FROM upload_profiles WHERE dataset_id = $1 AND version = $2
                 ORDER BY seq",
                &[&dataset_id, &version],
            )?
            .iter()
            .map(|r| Ok(r.try_get(0)?))
            .collect()
        })
    }
}
