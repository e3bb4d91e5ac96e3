//! Upload profiles in PostgreSQL.

use super::PostgresCatalog;
use crate::catalog::interface::ProfileCatalog;
use crate::error::Result;

impl ProfileCatalog for PostgresCatalog {
    fn profiles(&self, dataset_id: i64, version: i64) -> Result<Vec<(String, String)>> {
        self.with(|db| {
            db.query(
                "SELECT raw_filename, profile FROM upload_profiles WHERE dataset_id = $1 AND version = $2
                 ORDER BY seq",
                &[&dataset_id, &version],
            )?
            .iter()
            .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
            .collect()
        })
    }
}
