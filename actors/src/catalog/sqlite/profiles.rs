//! Upload profiles in SQLite.

use rusqlite::params;

use super::SqliteCatalog;
use crate::catalog::interface::ProfileCatalog;
use crate::error::Result;

impl ProfileCatalog for SqliteCatalog {
    fn profiles(&self, dataset_id: i64, version: i64) -> Result<Vec<(String, String)>> {
        self.with(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT raw_filename, profile FROM upload_profiles WHERE dataset_id = ?1 AND version = ?2
                 ORDER BY seq",
            )?;
            let rows = stmt.query_map(params![dataset_id, version], |r| Ok((r.get(0)?, r.get(1)?)))?;
            Ok(rows.collect::<rusqlite::Result<Vec<(String, String)>>>()?)
        })
    }
}
