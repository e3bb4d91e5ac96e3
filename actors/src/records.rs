//! Catalog rows for datasets and their schema versions. Reads go straight to the catalog; every
//! write goes through the registry or a dataset actor.

use rusqlite::{params, Connection, OptionalExtension};

use crate::error::{Error, Result};
use crate::key::{DatasetKey, DatasetRecord};
use crate::schema::{validate_stored, Schema, ValidSchema};
use crate::sensitivity::Sensitivity;

pub fn find_dataset(conn: &Connection, key: &DatasetKey) -> Result<Option<DatasetRecord>> {
    let row = conn
        .query_row(
            "SELECT d.id, d.dataset, d.sensitivity, max(v.version)
             FROM datasets d JOIN schema_versions v ON v.dataset_id = d.id
             WHERE d.layer = ?1 AND d.domain = ?2 AND d.dataset_key = ?3
             GROUP BY d.id",
            params![key.layer, key.domain, key.dataset],
            |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, i64>(3)?,
                ))
            },
        )
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

/// The schema of `version` (the latest when `None`) of a dataset.
pub fn load_schema(
    conn: &Connection,
    record: &DatasetRecord,
    version: Option<i64>,
) -> Result<ValidSchema> {
    let version = version.unwrap_or(record.latest_version);
    let json: Option<String> = conn
        .query_row(
            "SELECT schema_json FROM schema_versions WHERE dataset_id = ?1 AND version = ?2",
            params![record.id, version],
            |r| r.get(0),
        )
        .optional()?;
    let json = json.ok_or_else(|| {
        Error::not_found(format!(
            "Could not find the schema for dataset layer [{}], domain [{}], dataset [{}] and version [{version}]",
            record.key.layer, record.key.domain, record.key.dataset
        ))
    })?;
    let schema: Schema = serde_json::from_str(&json).map_err(|e| {
        Error::internal(format!(
            "stored schema of dataset {} v{version}: {e}",
            record.id
        ))
    })?;
    validate_stored(&schema)
}

/// Stores `schema` as a version of dataset `dataset_id`. Call inside the transaction that creates
/// or bumps the dataset: for a PROTECTED schema it checks there that the protected domain still
/// exists, so a domain deleted after the request's own check cannot be left with a dataset in it
/// (deleting a domain is refused while a dataset uses it, in a transaction on the same catalog).
pub fn insert_version(conn: &Connection, dataset_id: i64, schema: &ValidSchema) -> Result<()> {
    if schema.sensitivity() == Sensitivity::Protected {
        let exists = conn
            .query_row(
                "SELECT 1 FROM protected_domains WHERE domain = ?1",
                [schema.domain()],
                |_| Ok(()),
            )
            .optional()?
            .is_some();
        if !exists {
            return Err(Error::invalid(format!(
                "The protected domain '{}' does not exist.",
                schema.domain()
            )));
        }
    }
    let version = schema
        .version()
        .ok_or_else(|| Error::internal("a schema version is stored without its number"))?;
    let json = serde_json::to_string(schema)
        .map_err(|e| Error::internal(format!("serialising a schema: {e}")))?;
    conn.execute(
        "INSERT INTO schema_versions (dataset_id, version, schema_json, created_at) VALUES (?1, ?2, ?3, ?4)",
        params![dataset_id, version, json, crate::catalog::now_text()],
    )?;
    Ok(())
}
