//! Dataset info (docs/SPEC.md 2.4): the schema plus row and column counts, the last update, and the
//! range of each date column, all from one manifest snapshot.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow::array::{Array, AsArray};
use arrow::datatypes::Date32Type;
use datafusion::prelude::{SessionConfig, SessionContext};
use serde::Serialize;

use super::run::engine_error;
use super::table::ManifestTable;
use crate::catalog::Catalog;
use crate::error::{Error, Result};
use crate::ingest::date32_to_string;
use crate::key::DatasetRecord;
use crate::manifest::{snapshot, DataFile};
use crate::query::QueryPools;
use crate::schema::{Column, DataType, Metadata, Tags, ValidSchema};
use crate::storage::Storage;

/// `2024-01-31 10:00:00+00:00`, from the catalog's RFC 3339 text.
pub fn display_time(rfc3339: &str) -> String {
    chrono::DateTime::parse_from_rfc3339(rfc3339)
        .map(|t| {
            t.with_timezone(&chrono::Utc)
                .format("%Y-%m-%d %H:%M:%S+00:00")
                .to_string()
        })
        .unwrap_or_else(|_| rfc3339.to_string())
}

/// When the version last received data, if ever.
pub fn last_updated(
    catalog: &dyn Catalog,
    dataset_id: i64,
    version: i64,
) -> Result<Option<String>> {
    catalog.last_updated(dataset_id, version)
}

/// The name of the subject behind the newest raw file of the version, if any. Files recorded
/// before uploaders were (catalog migration 3) fall back to the name of their job's subject.
pub fn last_uploaded_by(
    catalog: &dyn Catalog,
    dataset_id: i64,
    version: i64,
) -> Result<Option<String>> {
    catalog.last_uploaded_by(dataset_id, version)
}

/// A version's schema with figures about its data (docs/SPEC.md 2.4), fields in the order the
/// API sends them.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DatasetInfo {
    pub metadata: InfoMetadata,
    pub columns: Vec<InfoColumn>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct InfoMetadata {
    /// The schema's metadata, its `version` the one described.
    #[serde(flatten)]
    pub schema: Metadata,
    pub number_of_rows: i64,
    pub number_of_columns: usize,
    /// `YYYY-MM-DD HH:MM:SS+00:00`, or `Never updated`.
    pub last_updated: String,
    /// Custom tags, key-only ones as `""`.
    pub tags: Tags,
    /// The subject behind the newest raw file, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_uploaded_by: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct InfoColumn {
    #[serde(flatten)]
    pub column: Column,
    /// Date columns: their smallest and largest value; null for the others.
    pub statistics: Option<DateRange>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DateRange {
    pub min: Option<String>,
    pub max: Option<String>,
}

pub async fn dataset_info(
    pools: &QueryPools,
    catalog: &dyn Catalog,
    storage: &Storage,
    record: &DatasetRecord,
    schema: &ValidSchema,
    version: i64,
) -> Result<DatasetInfo> {
    let (files, lease) = snapshot(catalog, storage, record.id, version)?;
    if files.is_empty() {
        return Err(Error::not_found(format!(
            "There is no data for dataset layer [{}], domain [{}], dataset [{}] and version [{version}]",
            record.key.layer, record.key.domain, record.key.dataset
        )));
    }
    let rows: i64 = files.iter().map(|f| f.rows).sum();
    let ranges = date_ranges(pools, storage, schema, &files).await?;
    drop(lease);

    let wire = schema.schema();
    let updated = last_updated(catalog, record.id, version)?.map(|t| display_time(&t));
    let metadata = InfoMetadata {
        schema: Metadata {
            version: Some(version),
            ..wire.metadata.clone()
        },
        number_of_rows: rows,
        number_of_columns: schema.columns().len(),
        last_updated: updated.unwrap_or_else(|| "Never updated".into()),
        tags: Tags::of(schema),
        last_uploaded_by: last_uploaded_by(catalog, record.id, version)?,
    };
    let columns = wire
        .columns
        .iter()
        .map(|c| InfoColumn {
            column: c.clone(),
            statistics: ranges.get(&c.name).cloned(),
        })
        .collect();
    Ok(DatasetInfo { metadata, columns })
}

/// The smallest and largest value of every date column over `files`, by column name.
async fn date_ranges(
    pools: &QueryPools,
    storage: &Storage,
    schema: &ValidSchema,
    files: &[DataFile],
) -> Result<BTreeMap<String, DateRange>> {
    let dates: Vec<String> = schema
        .columns()
        .iter()
        .filter(|c| c.data_type == DataType::Date)
        .map(|c| c.name.clone())
        .collect();
    let mut ranges = BTreeMap::new();
    if dates.is_empty() {
        return Ok(ranges);
    }
    {
        let table = ManifestTable::new(storage, schema, files)?;
        let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(2));
        ctx.register_table("dataset", Arc::new(table))
            .map_err(engine_error)?;
        let select: Vec<String> = dates
            .iter()
            .map(|d| format!("min(\"{d}\") AS \"min_{d}\", max(\"{d}\") AS \"max_{d}\""))
            .collect();
        let sql = format!("SELECT {} FROM dataset", select.join(", "));
        let batches = pools
            .spawn(async move {
                let df = ctx.sql(&sql).await.map_err(engine_error)?;
                df.collect().await.map_err(engine_error)
            })
            .await?;
        if let Some(batch) = batches.first().filter(|b| b.num_rows() > 0) {
            for (i, d) in dates.iter().enumerate() {
                let value = |col: usize| {
                    let a = batch.column(col).as_primitive::<Date32Type>();
                    (!a.is_null(0)).then(|| date32_to_string(a.value(0)))
                };
                ranges.insert(
                    d.clone(),
                    DateRange {
                        min: value(2 * i),
                        max: value(2 * i + 1),
                    },
                );
            }
        }
    }
    Ok(ranges)
}
