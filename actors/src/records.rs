//! Datasets and their schema versions as the engine reads them: records and typed schemas from
//! the catalog's rows. Reads go straight to the catalog; every write goes through the registry
//! or a dataset actor.

use crate::catalog::{Catalog, SchemaVersion};
use crate::error::{Error, Result};
use crate::key::DatasetRecord;
use crate::schema::{validate_stored, Schema, ValidSchema};
use crate::sensitivity::Sensitivity;

/// The schema of `version` (the latest when `None`) of a dataset.
pub(crate) fn load_schema(
    catalog: &dyn Catalog,
    record: &DatasetRecord,
    version: Option<i64>,
) -> Result<ValidSchema> {
    let version = version.unwrap_or(record.latest_version);
    let json = catalog.schema_json(record.id, version)?.ok_or_else(|| {
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

/// `schema` (with its version number set) as the catalog stores it. A PROTECTED schema names its
/// protected domain, which the catalog checks still exists in the step that stores it.
pub(crate) fn stored_version(schema: &ValidSchema) -> Result<SchemaVersion> {
    let version = schema
        .version()
        .ok_or_else(|| Error::internal("a schema version is stored without its number"))?;
    let json = serde_json::to_string(schema)
        .map_err(|e| Error::internal(format!("serialising a schema: {e}")))?;
    Ok(SchemaVersion {
        version,
        json,
        protected_domain: (schema.sensitivity() == Sensitivity::Protected)
            .then(|| schema.domain().to_string()),
    })
}
