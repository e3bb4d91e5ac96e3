//! Dataset info (docs/SPEC.md 2.4): the schema plus row and column counts, the last update, and the
//! range of each date column, all from one manifest snapshot.

use std::sync::Arc;

use arrow::array::{Array, AsArray};
use arrow::datatypes::Date32Type;
use datafusion::prelude::{SessionConfig, SessionContext};
use serde_json::{json, Map, Value};

use super::run::engine_error;
use super::table::ManifestTable;
use crate::catalog::Catalog;
use crate::error::{Error, Result};
use crate::ingest::date32_to_string;
use crate::key::DatasetRecord;
use crate::manifest::{snapshot, DataFile};
use crate::schema::{DataType, ValidSchema};
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

/// The schema's custom tags in one object, as docs/SPEC.md 2.4 shows them: key-only tags with `""`.
fn merged_tags(schema: &ValidSchema) -> Map<String, Value> {
    let mut tags: Map<String, Value> = schema
        .key_value_tags()
        .iter()
        .map(|(k, v)| (k.clone(), json!(v)))
        .collect();
    for k in schema.key_only_tags() {
        tags.entry(k.clone()).or_insert(json!(""));
    }
    tags
}

pub async fn dataset_info(
    catalog: &dyn Catalog,
    storage: &Storage,
    record: &DatasetRecord,
    schema: &ValidSchema,
    version: i64,
) -> Result<Value> {
    let (files, lease) = snapshot(catalog, storage, record.id, version)?;
    if files.is_empty() {
        return Err(Error::not_found(format!(
            "There is no data for dataset layer [{}], domain [{}], dataset [{}] and version [{version}]",
            record.key.layer, record.key.domain, record.key.dataset
        )));
    }
    let rows: i64 = files.iter().map(|f| f.rows).sum();
    let ranges = date_ranges(storage, schema, &files).await?;
    drop(lease);

    let mut info =
        serde_json::to_value(schema).map_err(|e| Error::internal(format!("schema: {e}")))?;
    let updated = last_updated(catalog, record.id, version)?.map(|t| display_time(&t));
    let meta = info["metadata"]
        .as_object_mut()
        .ok_or_else(|| Error::internal("schema without metadata"))?;
    meta.insert("version".into(), json!(version));
    meta.insert("number_of_rows".into(), json!(rows));
    meta.insert("number_of_columns".into(), json!(schema.columns().len()));
    meta.insert(
        "last_updated".into(),
        json!(updated.unwrap_or_else(|| "Never updated".into())),
    );
    meta.insert("tags".into(), Value::Object(merged_tags(schema)));
    if let Some(by) = last_uploaded_by(catalog, record.id, version)? {
        meta.insert("last_uploaded_by".into(), json!(by));
    }
    if let Some(columns) = info["columns"].as_array_mut() {
        for c in columns {
            let name = c["name"].as_str().unwrap_or_default().to_string();
            c["statistics"] = ranges.get(&name).cloned().unwrap_or(Value::Null);
        }
    }
    Ok(info)
}

/// The smallest and largest value of every date column over `files`, by column name.
async fn date_ranges(
    storage: &Storage,
    schema: &ValidSchema,
    files: &[DataFile],
) -> Result<Map<String, Value>> {
    let dates: Vec<String> = schema
        .columns()
        .iter()
        .filter(|c| c.data_type == DataType::Date)
        .map(|c| c.name.clone())
        .collect();
    let mut ranges: Map<String, Value> = Map::new();
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
        let batches = super::on_query_runtime(async move {
            let df = ctx.sql(&sql).await.map_err(engine_error)?;
            df.collect().await.map_err(engine_error)
        })
        .await?;
        if let Some(batch) = batches.first().filter(|b| b.num_rows() > 0) {
            for (i, d) in dates.iter().enumerate() {
                let value = |col: usize| {
                    let a = batch.column(col).as_primitive::<Date32Type>();
                    if a.is_null(0) {
                        Value::Null
                    } else {
                        Value::from(date32_to_string(a.value(0)))
                    }
                };
                ranges.insert(
                    d.clone(),
                    json!({"min": value(2 * i), "max": value(2 * i + 1)}),
                );
            }
        }
    }
    Ok(ranges)
}
