//! Datasets and schema versions in SQLite.

use rusqlite::{params, Connection, OptionalExtension};

use super::SqliteCatalog;
use crate::catalog::interface::DatasetCatalog;
use crate::catalog::refusal::{dataset_exists, no_protected_domain};
use crate::catalog::{now_text, SchemaVersion};
use crate::error::{Error, Result};
use crate::key::{DatasetKey, DatasetRecord};
use crate::sensitivity::Sensitivity;

pub(super) fn find_dataset(conn: &Connection, key: &DatasetKey) -> Result<Option<DatasetRecord>> {
    // Cached statements: these run on every query and job poll, and preparing was most of their cost.
    let row = conn
        .prepare_cached(
            "SELECT d.id, d.dataset, d.sensitivity, max(v.version)
             FROM datasets d JOIN schema_versions v ON v.dataset_id = d.id
             WHERE d.layer = ?1 AND d.domain = ?2 AND d.dataset_key = ?3
             GROUP BY d.id",
        )?
        .query_row(params![key.layer, key.domain, key.dataset], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, i64>(3)?,
            ))
        })
        .optional()?;
    let Some((id, name, sensitivity, latest_version)) = row else {
        return Ok(None);
    };
    let sensitivity = sensitivity
        .parse()
        .map_err(|_| Error::internal(format!("dataset {id} has sensitivity [{sensitivity}]")))?;
    Ok(Some(DatasetRecord {
        id,
        key: key.clone(),
        name,
        sensitivity,
        latest_version,
    }))
}

/// The policy of the latest version `from`, if any, for the new version `to`, in the new
/// version's transaction: a policy is per version, and a version stored before its policy would be
/// read unfiltered until the policy followed (issue 55).
fn carry_policy(conn: &Connection, dataset_id: i64, from: i64, to: i64) -> Result<()> {
    if to > from {
        conn.prepare_cached(
            "INSERT INTO dataset_policies (dataset_id, version, policy_json, updated_at)
             SELECT dataset_id, ?3, policy_json, ?4 FROM dataset_policies
             WHERE dataset_id = ?1 AND version = ?2",
        )?
        .execute(params![dataset_id, from, to, now_text()])?;
    }
    Ok(())
}

/// Stores a schema version inside the transaction that creates or bumps the dataset: for a
/// PROTECTED schema it checks there that the protected domain still exists, so a domain deleted
/// after the request's own check cannot be left with a dataset in it (deleting a domain is refused
/// while a dataset uses it, in a transaction on the same catalog).
fn insert_version(conn: &Connection, dataset_id: i64, schema: &SchemaVersion) -> Result<()> {
    if let Some(domain) = &schema.protected_domain {
        let exists = conn
            .query_row(
                "SELECT 1 FROM protected_domains WHERE domain = ?1",
                [domain],
                |_| Ok(()),
            )
            .optional()?
            .is_some();
        if !exists {
            return Err(no_protected_domain(domain));
        }
    }
    conn.execute(
        "INSERT INTO schema_versions (dataset_id, version, schema_json, created_at) VALUES (?1, ?2, ?3, ?4)",
        params![dataset_id, schema.version, schema.json, now_text()],
    )?;
    Ok(())
}

impl DatasetCatalog for SqliteCatalog {
    fn find_dataset(&self, key: &DatasetKey) -> Result<Option<DatasetRecord>> {
        self.with(|c| find_dataset(c, key))
    }

    fn dataset_keys(&self) -> Result<Vec<DatasetKey>> {
        self.with(|c| {
            let mut stmt = c.prepare(
                "SELECT layer, domain, dataset_key FROM datasets ORDER BY layer, domain, dataset_key",
            )?;
            let keys = stmt
                .query_map([], |r| {
                    Ok(DatasetKey {
                        layer: r.get(0)?,
                        domain: r.get(1)?,
                        dataset: r.get(2)?,
                    })
                })?
                .collect::<Result<Vec<_>, _>>()?;
            Ok(keys)
        })
    }

    fn create_dataset(
        &self,
        key: &DatasetKey,
        name: &str,
        sensitivity: Sensitivity,
        schema: &SchemaVersion,
    ) -> Result<DatasetRecord> {
        self.transaction(|tx| {
            if find_dataset(tx, key)?.is_some() {
                return Err(dataset_exists(key));
            }
            let id: i64 = tx.query_row(
                "UPDATE id_sequences
                 SET last = max(last, (SELECT coalesce(max(id), 0) FROM datasets)) + 1
                 WHERE name = 'datasets' RETURNING last",
                [],
                |r| r.get(0),
            )?;
            tx.execute(
                "INSERT INTO datasets (id, layer, domain, dataset, dataset_key, sensitivity, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    id,
                    key.layer,
                    key.domain,
                    name,
                    key.dataset,
                    sensitivity.as_str(),
                    now_text()
                ],
            )?;
            insert_version(tx, id, schema)?;
            Ok(DatasetRecord {
                id,
                key: key.clone(),
                name: name.to_string(),
                sensitivity,
                latest_version: schema.version,
            })
        })
    }

    fn add_schema_version(
        &self,
        key: &DatasetKey,
        next: &mut dyn FnMut(&DatasetRecord) -> Result<SchemaVersion>,
    ) -> Result<DatasetRecord> {
        self.transaction(|tx| {
            let current = find_dataset(tx, key)?.ok_or_else(|| key.not_found())?;
            let schema = next(&current)?;
            insert_version(tx, current.id, &schema)?;
            carry_policy(tx, current.id, current.latest_version, schema.version)?;
            Ok(DatasetRecord {
                latest_version: current.latest_version.max(schema.version),
                ..current
            })
        })
    }

    fn schema_json(&self, dataset_id: i64, version: i64) -> Result<Option<String>> {
        self.with(|c| {
            Ok(c.prepare_cached(
                "SELECT schema_json FROM schema_versions WHERE dataset_id = ?1 AND version = ?2",
            )?
            .query_row(params![dataset_id, version], |r| r.get(0))
            .optional()?)
        })
    }

    fn replace_schema_json(
        &self,
        dataset_id: i64,
        version: i64,
        was: &str,
        json: &str,
    ) -> Result<bool> {
        self.with(|c| {
            let changed = c.execute(
                "UPDATE schema_versions SET schema_json = ?4 \
                 WHERE dataset_id = ?1 AND version = ?2 AND schema_json = ?3",
                params![dataset_id, version, was, json],
            )?;
            Ok(changed == 1)
        })
    }

    fn delete_dataset(&self, dataset_id: i64) -> Result<()> {
        self.with(|c| {
            c.execute("DELETE FROM datasets WHERE id = ?1", [dataset_id])?;
            Ok(())
        })
    }

    fn last_updated(&self, dataset_id: i64, version: i64) -> Result<Option<String>> {
        // The newest upload, or a later commit that changed the rows otherwise (a rollback, a
        // raw file deleted); compaction changes no row.
        const LAST_UPDATED: &str = "SELECT max(t) FROM (
            SELECT max(uploaded_at) AS t FROM raw_files WHERE dataset_id = ?1 AND version = ?2
            UNION ALL
            SELECT max(committed_at) FROM commits WHERE dataset_id = ?1 AND version = ?2
                AND operation IN ('ROLLBACK', 'DELETE', 'ERASE'))";
        self.with(|c| {
            Ok(
                c.query_row(LAST_UPDATED, params![dataset_id, version], |r| {
                    r.get::<_, Option<String>>(0)
                })?,
            )
        })
    }

    fn last_uploaded_by(&self, dataset_id: i64, version: i64) -> Result<Option<String>> {
        self.with(|c| {
            let by = c
                .query_row(
                    "SELECT coalesce(r.uploaded_by, s.name) FROM raw_files r
                     LEFT JOIN jobs j ON j.job_id = r.job_id
                     LEFT JOIN subjects s ON s.subject_id = j.subject_id
                     WHERE r.dataset_id = ?1 AND r.version = ?2
                     ORDER BY r.uploaded_at DESC, r.rowid DESC LIMIT 1",
                    params![dataset_id, version],
                    |r| r.get::<_, Option<String>>(0),
                )
                .optional()?;
            Ok(by.flatten())
        })
    }
}
