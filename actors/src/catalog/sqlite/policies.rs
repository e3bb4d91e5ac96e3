//! Dataset policies and subject attributes in SQLite.

use rusqlite::{params, OptionalExtension};

use super::SqliteCatalog;
use crate::catalog::interface::PolicyCatalog;
use crate::catalog::now_text;
use crate::error::Result;

/// Migration 18: a policy per schema version, attributes per subject; both go with their owner.
pub(super) const TABLES: &str = r#"
    CREATE TABLE dataset_policies (
        dataset_id  INTEGER NOT NULL,
        version     INTEGER NOT NULL,
        policy_json TEXT NOT NULL,
        updated_at  TEXT NOT NULL,
        PRIMARY KEY (dataset_id, version),
        FOREIGN KEY (dataset_id, version)
            REFERENCES schema_versions (dataset_id, version) ON DELETE CASCADE
    );
    CREATE TABLE subject_attributes (
        subject_id TEXT PRIMARY KEY REFERENCES subjects (subject_id) ON DELETE CASCADE,
        attributes TEXT NOT NULL
    );
"#;

impl PolicyCatalog for SqliteCatalog {
    fn policy(&self, dataset_id: i64, version: i64) -> Result<Option<String>> {
        self.with(|c| {
            Ok(c.prepare_cached(
                "SELECT policy_json FROM dataset_policies WHERE dataset_id = ?1 AND version = ?2",
            )?
            .query_row(params![dataset_id, version], |r| r.get(0))
            .optional()?)
        })
    }

    fn put_policy(&self, dataset_id: i64, version: i64, json: &str) -> Result<bool> {
        self.with(|c| {
            let n = c.execute(
                "INSERT INTO dataset_policies (dataset_id, version, policy_json, updated_at)
                 SELECT dataset_id, version, ?3, ?4 FROM schema_versions
                 WHERE dataset_id = ?1 AND version = ?2
                 ON CONFLICT (dataset_id, version)
                 DO UPDATE SET policy_json = excluded.policy_json, updated_at = excluded.updated_at",
                params![dataset_id, version, json, now_text()],
            )?;
            Ok(n > 0)
        })
    }

    fn delete_policy(&self, dataset_id: i64, version: i64) -> Result<bool> {
        self.with(|c| {
            let n = c.execute(
                "DELETE FROM dataset_policies WHERE dataset_id = ?1 AND version = ?2",
                params![dataset_id, version],
            )?;
            Ok(n > 0)
        })
    }

    fn subject_attributes(&self, subject_id: &str) -> Result<Option<String>> {
        self.with(|c| {
            Ok(
                c.prepare_cached(
                    "SELECT attributes FROM subject_attributes WHERE subject_id = ?1",
                )?
                .query_row([subject_id], |r| r.get(0))
                .optional()?,
            )
        })
    }

    fn put_subject_attributes(&self, subject_id: &str, json: &str) -> Result<bool> {
        self.with(|c| {
            let n = c.execute(
                "INSERT INTO subject_attributes (subject_id, attributes)
                 SELECT subject_id, ?2 FROM subjects WHERE subject_id = ?1
                 ON CONFLICT (subject_id) DO UPDATE SET attributes = excluded.attributes",
                params![subject_id, json],
            )?;
            Ok(n > 0)
        })
    }
}
