//! A schema's tags as the listing and the info show them: custom tags, key-only ones as `""`,
//! in the order they were first set.

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

/// Tags in the order they were first set, sent as one object.
#[derive(Debug, Clone, Default)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(value_type = std::collections::BTreeMap<String, String>))]
pub struct Tags(Vec<(String, String)>);

impl Tags {
    /// Every tag, in order, as (key, value).
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Sets `key`, in its first place if it was set before.
    pub fn insert(&mut self, key: &str, value: &str) {
        match self.0.iter_mut().find(|(k, _)| k == key) {
            Some(slot) => slot.1 = value.to_string(),
            None => self.0.push((key.to_string(), value.to_string())),
        }
    }

    pub fn insert_absent(&mut self, key: &str, value: &str) {
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

impl Tags {
    /// The schema's custom tags: key-value ones, then key-only ones not already set, as `""`.
    pub fn of(schema: &super::ValidSchema) -> Tags {
        let mut tags = Tags::default();
        for (k, v) in schema.key_value_tags() {
            tags.insert(k, v);
        }
        for k in schema.key_only_tags() {
            tags.insert_absent(k, "");
        }
        tags
    }
}

#[cfg(test)]
mod tests {
    use super::Tags;

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
}
