//! Metadata edited in place (`PATCH /schema/{layer}/{domain}/{dataset}?version=`): a version's
//! description, owners, tags and history retention change without a new version, so its data
//! stays where readers look. Sensitivity and columns are not metadata that can change in place
//! (a dataset's sensitivity never changes; columns need a new version).

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::model::{HistoryRetention, Owner, Schema};
use crate::error::{Error, Result};

/// The keys a patch may hold.
pub const PATCHABLE: [&str; 5] = [
    "description",
    "owners",
    "key_value_tags",
    "key_only_tags",
    "history",
];

/// What a patch changes; a key left out keeps its value. `history: null` returns the version
/// to the service's retention settings.
#[derive(Debug, Default, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MetadataPatch {
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub owners: Option<Vec<Owner>>,
    #[serde(default)]
    pub key_value_tags: Option<BTreeMap<String, String>>,
    #[serde(default)]
    pub key_only_tags: Option<Vec<String>>,
    #[serde(default, deserialize_with = "present")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<HistoryRetention>))]
    pub history: Option<Option<HistoryRetention>>,
}

/// A present key, `null` included (absent stays `None` through `default`).
fn present<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<Option<HistoryRetention>>, D::Error> {
    Option::<HistoryRetention>::deserialize(d).map(Some)
}

impl MetadataPatch {
    /// The patch in a request body: an object of [`PATCHABLE`] keys (a whole schema's
    /// `{"metadata": {...}}` is read the same way). Sensitivity, columns and other keys: 400.
    pub fn from_json(body: &Value) -> Result<MetadataPatch> {
        let Some(object) = body.as_object() else {
            return Err(Error::invalid(
                "The body must be a JSON object of metadata to change",
            ));
        };
        let object = match object.get("metadata").and_then(Value::as_object) {
            Some(inner) if object.len() == 1 => inner,
            _ => object,
        };
        refuse_fixed(object)?;
        if object.is_empty() {
            return Err(Error::invalid(format!(
                "Nothing to change: send any of {}",
                PATCHABLE.join(", ")
            )));
        }
        serde_json::from_value(Value::Object(object.clone()))
            .map_err(|e| Error::invalid(format!("Invalid metadata: {e}")))
    }

    /// `schema` with this patch's values in place of its own.
    pub fn apply(&self, mut schema: Schema) -> Schema {
        let m = &mut schema.metadata;
        if let Some(d) = &self.description {
            m.description = Some(d.clone());
        }
        if let Some(o) = &self.owners {
            m.owners = Some(o.clone());
        }
        if let Some(t) = &self.key_value_tags {
            m.key_value_tags = t.clone();
        }
        if let Some(t) = &self.key_only_tags {
            m.key_only_tags = t.clone();
        }
        if let Some(h) = self.history {
            m.history = h;
        }
        schema
    }
}

/// Refuses, with the reason, what metadata in place cannot change.
fn refuse_fixed(object: &Map<String, Value>) -> Result<()> {
    if object.contains_key("sensitivity") {
        return Err(Error::invalid(
            "You cannot change the sensitivity of a dataset: its metadata is edited in place, \
             and sensitivity is kept for the dataset's whole life",
        ));
    }
    if object.contains_key("columns") {
        return Err(Error::invalid(
            "Columns cannot be edited in place: store a new schema version (PUT /api/schema)",
        ));
    }
    let unknown: Vec<&str> = object
        .keys()
        .map(String::as_str)
        .filter(|k| !PATCHABLE.contains(k))
        .collect();
    match unknown.is_empty() {
        true => Ok(()),
        false => Err(Error::invalid(format!(
            "Metadata that cannot be edited in place: {}. Editable: {}",
            unknown.join(", "),
            PATCHABLE.join(", ")
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_the_editable_keys_are_read_and_null_history_clears() {
        let p = MetadataPatch::from_json(&json!({"description": "d", "history": null})).unwrap();
        assert_eq!(p.description.as_deref(), Some("d"));
        assert_eq!(p.history, Some(None));
        let wrapped = json!({"metadata": {"key_only_tags": ["a"]}});
        assert_eq!(
            MetadataPatch::from_json(&wrapped).unwrap().key_only_tags,
            Some(vec!["a".to_string()])
        );
        for refused in [
            json!({"sensitivity": "PUBLIC"}),
            json!({"columns": []}),
            json!({"domain": "x"}),
            json!({}),
            json!([1]),
            json!({"history": {"keep_commits": 1, "typo": 2}}),
        ] {
            assert!(MetadataPatch::from_json(&refused).is_err(), "{refused}");
        }
    }
}
