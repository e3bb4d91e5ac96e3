//! Upload profiles in SQLite.

use rusqlite::params;

use super::SqliteCatalog;
use crate::catalog::interface::ProfileCatalog;
use crate::error::Result;

impl ProfileCatalog for SqliteCatalog {
    fn record_profile(
        &self,
        dataset_id: i64,
        version: i64,
        raw_filename: &str,
        profile: &str,
    ) -> Result<()> {
        self.with(|c| {
            // Only while the raw file is recorded; a second profile of it changes nothing.
            c.execute(
                "INSERT INTO upload_profiles (dataset_id, version, raw_filename, profile)
                 SELECT ?1, ?2, ?3, ?4 WHERE EXISTS (
                     SELECT 1 FROM raw_files
                     WHERE dataset_id = ?1 AND version = ?2 AND raw_filename = ?3)
                 ON CONFLICT DO NOTHING",
                params![dataset_id, version, raw_filename, profile],
            )?;
            Ok(())
        })
    }

    fn profiles(&self, dataset_id: i64, version: i64) -> Result<Vec<String>> {
        self.with(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT profile FROM upload_profiles WHERE dataset_id = ?1 AND version = ?2
                 ORDER BY seq",
            )?;
            let rows = stmt.query_map(params![dataset_id, version], |r| r.get(0))?;
            Ok(rows.collect::<rusqlite::Result<Vec<String>>>()?)
        })
    }
}
