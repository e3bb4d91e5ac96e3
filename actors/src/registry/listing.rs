//! `POST /datasets`: the latest version of every dataset the caller may see, with its tags.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::auth::permission::{Access, Permission};
use crate::catalog::Catalog;
use crate::error::{Error, Result};
use crate::key::{DatasetKey, DatasetRecord};
use crate::query::reading::info::{display_time, last_updated};
use crate::records::load_schema;
use crate::schema::{Tags, ValidSchema};
use crate::sensitivity::Sensitivity;

#[derive(Debug, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DatasetFilter {
    #[serde(default)]
    pub sensitivity: Option<OneOrMany>,
    /// A null value means "the key is present, with any value".
    #[serde(default)]
    pub key_value_tags: BTreeMap<String, Option<String>>,
    #[serde(default)]
    pub key_only_tags: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum OneOrMany {
    #[cfg_attr(feature = "openapi", schema(value_type = Sensitivity))]
    One(String),
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<Sensitivity>))]
    Many(Vec<String>),
}

impl DatasetFilter {
    fn sensitivities(&self) -> Result<Option<Vec<Sensitivity>>> {
        let names = match &self.sensitivity {
            None => return Ok(None),
            Some(OneOrMany::One(s)) => vec![s.clone()],
            Some(OneOrMany::Many(v)) => v.clone(),
        };
        names
            .iter()
            .map(|n| {
                n.to_ascii_uppercase().parse::<Sensitivity>().map_err(|_| {
                    Error::invalid(format!(
                        "Invalid sensitivity [{n}]: use PUBLIC, PRIVATE or PROTECTED"
                    ))
                })
            })
            .collect::<Result<Vec<_>>>()
            .map(Some)
    }

    fn matches(&self, schema: &ValidSchema, allowed: &Option<Vec<Sensitivity>>) -> bool {
        if let Some(allowed) = allowed {
            if !allowed.contains(&schema.sensitivity()) {
                return false;
            }
        }
        let kv = schema.key_value_tags();
        let ko = schema.key_only_tags();
        let has_key = |k: &str| kv.contains_key(k) || ko.iter().any(|t| t == k);
        self.key_value_tags.iter().all(|(k, v)| match v {
            None => has_key(k),
            Some(v) => kv.get(k) == Some(v),
        }) && self.key_only_tags.iter().all(|k| has_key(k))
    }
}

/// Whether a subject holding `permissions` may see a dataset in listings: PUBLIC and PRIVATE
/// ones always (docs/SPEC.md: listing needs no permission), PROTECTED ones only with access to them.
fn visible(permissions: &[Permission], record: &DatasetRecord) -> bool {
    record.sensitivity != Sensitivity::Protected
        || permissions.iter().any(|p| {
            let k = &record.key;
            p.grants(Access::Read, record.sensitivity, &k.layer, &k.domain)
                || p.grants(Access::Write, record.sensitivity, &k.layer, &k.domain)
        })
}

/// A dataset in the listing (docs/SPEC.md 2.3), fields in the order the API sends them.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DatasetEntry {
    pub layer: String,
    pub domain: String,
    /// The name as first created, with its case.
    pub dataset: String,
    /// The latest version.
    pub version: i64,
    /// Custom tags (key-only ones as `""`), then `sensitivity` and `no_of_versions`.
    pub tags: Tags,
    /// With `enriched=true`.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub enrichment: Option<Enrichment>,
}

/// What `enriched=true` adds to a listing entry.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Enrichment {
    // Not required in the document: flattened into every entry, present only when enriched.
    #[cfg_attr(feature = "openapi", schema(required = false))]
    pub description: String,
    /// `YYYY-MM-DD HH:MM:SS+00:00`, or `Never updated`.
    #[cfg_attr(feature = "openapi", schema(required = false))]
    pub last_updated_date: String,
}

pub(crate) fn list_datasets(
    catalog: &dyn Catalog,
    permissions: &[Permission],
    filter: &DatasetFilter,
    enriched: bool,
) -> Result<Vec<DatasetEntry>> {
    let allowed = filter.sensitivities()?;
    let keys: Vec<DatasetKey> = catalog.dataset_keys()?;
    let mut out = Vec::new();
    for key in keys {
        let Some(record) = catalog.find_dataset(&key)? else {
            continue; // deleted since the key list was read
        };
        let schema = match load_schema(catalog, &record, None) {
            Ok(schema) => schema,
            // Deleted between the two reads.
            Err(e) if e.kind == crate::error::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        if !visible(permissions, &record) || !filter.matches(&schema, &allowed) {
            continue;
        }
        let mut tags = Tags::of(&schema);
        tags.insert("sensitivity", record.sensitivity.as_str());
        tags.insert("no_of_versions", &record.latest_version.to_string());
        let enrichment = match enriched {
            false => None,
            true => Some(Enrichment {
                description: schema.description().to_string(),
                last_updated_date: last_updated(catalog, record.id, record.latest_version)?
                    .map_or_else(|| "Never updated".into(), |t| display_time(&t)),
            }),
        };
        let entry = DatasetEntry {
            layer: record.key.layer.clone(),
            domain: record.key.domain.clone(),
            dataset: record.name.clone(),
            version: record.latest_version,
            tags,
            enrichment,
        };
        out.push(entry);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::{DatasetEntry, Enrichment, Tags};

    #[test]
    fn an_entry_is_enriched_only_when_asked() {
        let mut entry = DatasetEntry {
            layer: "default".into(),
            domain: "shop".into(),
            dataset: "Orders".into(),
            version: 2,
            tags: Tags::default(),
            enrichment: None,
        };
        assert_eq!(
            serde_json::to_string(&entry).unwrap(),
            r#"{"layer":"default","domain":"shop","dataset":"Orders","version":2,"tags":{}}"#
        );
        entry.enrichment = Some(Enrichment {
            description: "d".into(),
            last_updated_date: "Never updated".into(),
        });
        assert!(serde_json::to_string(&entry)
            .unwrap()
            .ends_with(r#""tags":{},"description":"d","last_updated_date":"Never updated"}"#));
    }
}
