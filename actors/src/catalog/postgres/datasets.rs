//! Datasets and schema versions in PostgreSQL.

use super::pool::Db;
use super::{lock_dataset, lock_dataset_id, PostgresCatalog};
use crate::catalog::interface::DatasetCatalog;
use crate::catalog::refusal::{dataset_exists, no_protected_domain};
use crate::catalog::{now_text, SchemaVersion};
use crate::error::{Error, Result};
use crate::key::{DatasetKey, DatasetRecord};
use crate::sensitivity::Sensitivity;

fn find_dataset(db: &Db<'_>, key: &DatasetKey) -> Result<Option<DatasetRecord>> {
    let Some(row) = db.query_opt(
        "SELECT d.id, d.dataset, d.sensitivity, max(v.version)
         FROM datasets d JOIN schema_versions v ON v.dataset_id = d.id
         WHERE d.layer = $1 AND d.domain = $2 AND d.dataset_key = $3
         GROUP BY d.id",
        &[&key.layer, &key.domain, &key.dataset],
    )?
    else {
        return Ok(None);
    };
    let id: i64 = row.try_get(0)?;
    let sensitivity: String = row.try_get(2)?;
    let sensitivity = sensitivity
        .parse()
        .map_err(|_| Error::internal(format!("dataset {id} has sensitivity [{sensitivity}]")))?;
    Ok(Some(DatasetRecord {
        id,
        key: key.clone(),
        name: row.try_get(1)?,
        sensitivity,
        latest_version: row.try_get(3)?,
    }))
}

/// Stores a schema version inside the transaction that creates or bumps the dataset. For a
/// PROTECTED schema its domain must exist, and stays locked (FOR SHARE) until the commit: deleting
/// the domain locks it FOR UPDATE before it looks for datasets in it, so one of the two waits and
/// then sees the other's outcome.
/// As SQLite's: the latest version's policy copied to the new version in its transaction.
fn carry_policy(db: &Db<'_>, dataset_id: i64, from: i64, to: i64) -> Result<()> {
    if to > from {
        db.execute(
            "INSERT INTO dataset_policies (dataset_id, version, policy_json, updated_at)
             SELECT dataset_id, $3, policy_json, $4 FROM dataset_policies
             WHERE dataset_id = $1 AND version = $2",
            &[&dataset_id, &from, &to, &now_text()],
        )?;
    }
    Ok(())
}

fn insert_version(db: &Db<'_>, dataset_id: i64, schema: &SchemaVersion) -> Result<()> {
    if let Some(domain) = &schema.protected_domain {
        let exists = db.query_opt(
            "SELECT 1 FROM protected_domains WHERE domain = $1 FOR SHARE",
            &[domain],
        )?;
        if exists.is_none() {
            return Err(no_protected_domain(domain));
        }
    }
    db.execute(
        "INSERT INTO schema_versions (dataset_id, version, schema_json, created_at)
         VALUES ($1, $2, $3, $4)",
        &[&dataset_id, &schema.version, &schema.json, &now_text()],
    )?;
    Ok(())
}

impl DatasetCatalog for PostgresCatalog {
    fn find_dataset(&self, key: &DatasetKey) -> Result<Option<DatasetRecord>> {
        self.with(|db| find_dataset(db, key))
    }

    fn dataset_keys(&self) -> Result<Vec<DatasetKey>> {
        self.with(|db| {
            db.query(
                "SELECT layer, domain, dataset_key FROM datasets ORDER BY layer, domain, dataset_key",
                &[],
            )?
            .iter()
            .map(|r| {
                Ok(DatasetKey {
                    layer: r.try_get(0)?,
                    domain: r.try_get(1)?,
                    dataset: r.try_get(2)?,
                })
            })
            .collect()
        })
    }

    fn create_dataset(
        &self,
        key: &DatasetKey,
        name: &str,
        sensitivity: Sensitivity,
        schema: &SchemaVersion,
    ) -> Result<DatasetRecord> {
        self.transaction(|db| {
            lock_dataset(db, key)?;
            if find_dataset(db, key)?.is_some() {
                return Err(dataset_exists(key));
            }
            let row = db.query_one(
                "INSERT INTO datasets (layer, domain, dataset, dataset_key, sensitivity, created_at)
                 VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
                &[
                    &key.layer,
                    &key.domain,
                    &name,
                    &key.dataset,
                    &sensitivity.as_str(),
                    &now_text(),
                ],
            )?;
            let id: i64 = row.try_get(0)?;
            insert_version(db, id, schema)?;
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
        self.transaction(|db| {
            lock_dataset(db, key)?;
            let current = find_dataset(db, key)?.ok_or_else(|| key.not_found())?;
            let schema = next(&current)?;
            insert_version(db, current.id, &schema)?;
            carry_policy(db, current.id, current.latest_version, schema.version)?;
            Ok(DatasetRecord {
                latest_version: current.latest_version.max(schema.version),
                ..current
            })
        })
    }

    fn schema_json(&self, dataset_id: i64, version: i64) -> Result<Option<String>> {
        self.with(|db| {
            db.query_opt(
                "SELECT schema_json FROM schema_versions WHERE dataset_id = $1 AND version = $2",
                &[&dataset_id, &version],
            )?
            .map(|r| r.try_get(0))
            .transpose()
            .map_err(Error::from)
        })
    }

    fn replace_schema_json(
        &self,
        dataset_id: i64,
        version: i64,
        was: &str,
        json: &str,
    ) -> Result<bool> {
        self.with(|db| {
            let changed = db.execute(
                "UPDATE schema_versions SET schema_json = $4 \
                 WHERE dataset_id = $1 AND version = $2 AND schema_json = $3",
                &[&dataset_id, &version, &was, &json],
            )?;
            Ok(changed == 1)
        })
    }

    fn delete_dataset(&self, dataset_id: i64) -> Result<()> {
        self.transaction(|db| {
            lock_dataset_id(db, dataset_id, false)?;
            db.execute("DELETE FROM datasets WHERE id = $1", &[&dataset_id])?;
            Ok(())
        })
    }

    fn last_updated(&self, dataset_id: i64, version: i64) -> Result<Option<String>> {
        // As SQLite's: the newest upload or later rollback or deletion.
        self.with(|db| {
            let row = db.query_one(
                "SELECT max(t) FROM (
                    SELECT max(uploaded_at) AS t FROM raw_files
                    WHERE dataset_id = $1 AND version = $2
                    UNION ALL
                    SELECT max(committed_at) FROM commits WHERE dataset_id = $1 AND version = $2
                        AND operation IN ('ROLLBACK', 'DELETE', 'ERASE')) AS changes",
                &[&dataset_id, &version],
            )?;
            Ok(row.try_get(0)?)
        })
    }

    fn last_uploaded_by(&self, dataset_id: i64, version: i64) -> Result<Option<String>> {
        self.with(|db| {
            let row = db.query_opt(
                "SELECT coalesce(r.uploaded_by, s.name) FROM raw_files r
                 LEFT JOIN jobs j ON j.job_id = r.job_id
                 LEFT JOIN subjects s ON s.subject_id = j.subject_id
                 WHERE r.dataset_id = $1 AND r.version = $2
                 ORDER BY r.uploaded_at DESC, r.seq DESC LIMIT 1",
                &[&dataset_id, &version],
            )?;
            Ok(row
                .map(|r| r.try_get::<_, Option<String>>(0))
                .transpose()?
                .flatten())
        })
    }
}
