//! `POST /datasets`: the latest version of every dataset the caller may see, with its tags.

use std::collections::BTreeMap;

use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};

use crate::auth::permission::{Access, Permission};
use crate::catalog::Catalog;
use crate::error::{Error, Result};
use crate::key::{DatasetKey, DatasetRecord};
use crate::query::info::{display_time, last_updated};
use crate::records::load_schema;
use crate::schema::ValidSchema;
use crate::sensitivity::Sensitivity;

#[derive(Debug, Default, Deserialize)]
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
pub enum OneOrMany {
    One(String),
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
pub struct Enrichment {
    pub description: String,
    /// `YYYY-MM-DD HH:MM:SS+00:00`, or `Never updated`.
    pub last_updated_date: String,
}

/// Tags in the order they were first set, sent as one object.
#[derive(Debug, Clone, Default)]
pub struct Tags(Vec<(String, String)>);

impl Tags {
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Sets `key`, in its first place if it was set before.
    fn insert(&mut self, key: &str, value: &str) {
        match self.0.iter_mut().find(|(k, _)| k == key) {
            Some(slot) => slot.1 = value.to_string(),
            None => self.0.push((key.to_string(), value.to_string())),
        }
    }

    fn insert_absent(&mut self, key: &str, value: &str) {
        if self.get(key).is_none() {
            self.0.push((key.to_string(), value.to_string()));
        }
    }
}

impl Serialize for Tags {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

pub fn list_datasets(
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
        let mut tags = Tags::default();
        for (k, v) in schema.key_value_tags() {
            tags.insert(k, v);
        }
        for k in schema.key_only_tags() {
            tags.insert_absent(k, "");
        }
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
    fn tags_keep_their_first_place_and_serialise_as_one_object() {
        let mut tags = Tags::default();
        tags.insert("sensitivity", "custom");
        tags.insert("team", "sales");
        tags.insert_absent("team", "");
        tags.insert_absent("draft", "");
        tags.insert("sensitivity", "PUBLIC");
        assert_eq!(tags.get("team"), Some("sales"));
        assert_eq!(
            serde_json::to_string(&tags).unwrap(),
            r#"{"sensitivity":"PUBLIC","team":"sales","draft":""}"#
        );
    }

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
