//! The schema as it travels over the wire (docs/SPEC.md 2.1, docs/API.md "Schemas").
//!
//! These types accept what clients send and nothing is checked here beyond JSON shapes: fields
//! whose bad values deserve a precise message (`sensitivity`, `data_type`, `update_behaviour`,
//! `partition_index`, check parameters) are kept loose (strings, `i64`, raw JSON) so that
//! [`validate`](super::validate()) can report them with the rest. Unknown keys are ignored (the SDK
//! sends `metadata.is_latest_version` and `version: null`; rAPId's templates send `tags`).
//! A missing `domain`, `dataset`, `sensitivity` or owner field becomes an empty string, which
//! validation then reports in its own words.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::sensitivity::Sensitivity;

/// The layer a schema lands in when it names none.
pub const DEFAULT_LAYER: &str = "default";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Schema {
    pub metadata: Metadata,
    #[cfg_attr(feature = "openapi", schema(min_items = 1))]
    pub columns: Vec<Column>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = SchemaMetadata))]
pub struct Metadata {
    /// Absent: `default` (validation fills it in).
    #[serde(default)]
    pub layer: Option<String>,
    #[serde(default)]
    #[cfg_attr(
        feature = "openapi",
        schema(pattern = "^[a-zA-Z][_a-zA-Z0-9]*$", max_length = 128)
    )]
    pub domain: String,
    #[serde(default)]
    #[cfg_attr(
        feature = "openapi",
        schema(pattern = "^[a-zA-Z][_a-zA-Z0-9]*$", max_length = 128)
    )]
    pub dataset: String,
    /// `PUBLIC`, `PRIVATE` or `PROTECTED` (typed: `Metadata::sensitivity`).
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Sensitivity))]
    pub sensitivity: String,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(max_length = 2000))]
    pub description: Option<String>,
    /// Assigned by the service; whatever a client sends is ignored.
    #[serde(default)]
    pub version: Option<i64>,
    #[serde(default)]
    pub key_value_tags: BTreeMap<String, String>,
    #[serde(default)]
    pub key_only_tags: Vec<String>,
    #[serde(default)]
    pub owners: Option<Vec<Owner>>,
    /// `APPEND` (default) or `OVERWRITE` (typed: `Metadata::update_behaviour`).
    #[serde(default = "default_update_behaviour")]
    #[cfg_attr(feature = "openapi", schema(value_type = UpdateBehaviour))]
    pub update_behaviour: String,
    /// This dataset's own history retention; absent: the service's settings. Left out of
    /// answers when absent, so what rAPId's SDK reads is unchanged.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "history_object"
    )]
    pub history: Option<HistoryRetention>,
}

/// `metadata.history`: an object or null. serde would also read an array as the fields in
/// order, which the document does not allow.
fn history_object<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<HistoryRetention>, D::Error> {
    use serde::de::Error;
    match Option::<serde_json::Value>::deserialize(d)? {
        None => Ok(None),
        Some(v) if v.is_object() => serde_json::from_value(v)
            .map(Some)
            .map_err(D::Error::custom),
        Some(v) => Err(D::Error::custom(format!(
            "metadata.history must be an object with keep_commits and/or keep_seconds, not {v}"
        ))),
    }
}

/// How long a dataset's commits stay readable, where its schema says so (docs/guide.md,
/// History): each value absent falls back to `RAPID_HISTORY_KEEP_COMMITS` or
/// `RAPID_HISTORY_KEEP_SECONDS`. A commit is retained while it is among the newest
/// `keep_commits` of its version or younger than `keep_seconds`. Signed, so a negative value
/// gets validation's message; an unknown key is refused (a misspelt one would silently do
/// nothing).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = SchemaHistory))]
#[serde(deny_unknown_fields)]
pub struct HistoryRetention {
    /// Commits retained per schema version, newest first: 1 (only the current) to 1,000,000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 1_000_000))]
    pub keep_commits: Option<i64>,
    /// Seconds an older commit stays retained whatever the count: 0 (the count alone decides)
    /// to 3,153,600,000 (100 years).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 3_153_600_000.0))]
    pub keep_seconds: Option<i64>,
}

fn default_update_behaviour() -> String {
    UpdateBehaviour::Append.as_str().to_owned()
}

impl Metadata {
    /// The layer, or [`DEFAULT_LAYER`] when none was given.
    pub fn layer(&self) -> &str {
        self.layer.as_deref().unwrap_or(DEFAULT_LAYER)
    }

    /// The typed sensitivity, if the string is one of the three.
    pub fn sensitivity(&self) -> Option<Sensitivity> {
        Sensitivity::from_str(&self.sensitivity).ok()
    }

    /// The typed update behaviour, if the string is one of the two.
    pub fn update_behaviour(&self) -> Option<UpdateBehaviour> {
        UpdateBehaviour::from_str(&self.update_behaviour).ok()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Owner {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub email: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = SchemaColumn))]
pub struct Column {
    /// Lower-case letters, digits and underscores; not only digits, not only underscores.
    #[cfg_attr(
        feature = "openapi",
        schema(
            pattern = "^([a-z0-9_]*[a-z][a-z0-9_]*|[a-z0-9_]*[0-9][a-z0-9_]*_[a-z0-9_]*|[a-z0-9_]*_[a-z0-9_]*[0-9][a-z0-9_]*)$",
            max_length = 128
        )
    )]
    pub name: String,
    /// `int` (or `integer`), `double`, `string`, `date` or `boolean` (typed: `Column::data_type`).
    #[cfg_attr(feature = "openapi", schema(value_type = DataType))]
    pub data_type: String,
    pub allow_null: bool,
    /// Absent or null: not a partition. Signed so a negative index gets our message.
    #[serde(default)]
    pub partition_index: Option<i64>,
    /// The date format of a `date` column; null for every other type.
    #[serde(default)]
    pub format: Option<String>,
    #[serde(default)]
    pub unique: bool,
    /// Check name (chosen by the author) to check.
    #[serde(default)]
    pub checks: BTreeMap<String, CheckSpec>,
}

impl Column {
    /// The typed data type, if the string is an accepted one.
    pub fn data_type(&self) -> Option<DataType> {
        DataType::from_str(&self.data_type).ok()
    }
}

/// A column check as written in a schema (docs/SPEC.md 2.2). An `error` text, which rAPId's templates
/// carry and rAPId ignores, is ignored here too.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CheckSpec {
    pub check_type: String,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub parameters: serde_json::Map<String, serde_json::Value>,
}

/// The data types a column may have (`integer` is accepted for `int`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(rename_all = "lowercase"))]
pub enum DataType {
    /// A 64-bit signed integer. Written `int`; `integer` is accepted as a synonym.
    Int,
    /// A 64-bit float.
    Double,
    String,
    /// A calendar date, written in the column's [`DateFormat`](super::DateFormat).
    Date,
    /// A nullable boolean.
    Boolean,
}

impl DataType {
    pub const ALL: [DataType; 5] = [
        DataType::Int,
        DataType::Double,
        DataType::String,
        DataType::Date,
        DataType::Boolean,
    ];

    /// The canonical name, the one stored and shown in responses.
    pub fn as_str(self) -> &'static str {
        match self {
            DataType::Int => "int",
            DataType::Double => "double",
            DataType::String => "string",
            DataType::Date => "date",
            DataType::Boolean => "boolean",
        }
    }

    /// `int` and `double`.
    pub fn is_numeric(self) -> bool {
        matches!(self, DataType::Int | DataType::Double)
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for DataType {
    type Err = ();

    fn from_str(s: &str) -> Result<Self, ()> {
        match s {
            "int" | "integer" => Ok(DataType::Int),
            "double" => Ok(DataType::Double),
            "string" => Ok(DataType::String),
            "date" => Ok(DataType::Date),
            "boolean" => Ok(DataType::Boolean),
            _ => Err(()),
        }
    }
}

/// What an upload does to the data already stored (docs/SPEC.md 2.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(rename_all = "UPPERCASE"))]
pub enum UpdateBehaviour {
    /// New files are added.
    Append,
    /// A new file replaces, partition by partition, the partitions it holds.
    Overwrite,
}

impl UpdateBehaviour {
    pub fn as_str(self) -> &'static str {
        match self {
            UpdateBehaviour::Append => "APPEND",
            UpdateBehaviour::Overwrite => "OVERWRITE",
        }
    }
}

impl fmt::Display for UpdateBehaviour {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for UpdateBehaviour {
    type Err = ();

    fn from_str(s: &str) -> Result<Self, ()> {
        match s {
            "APPEND" => Ok(UpdateBehaviour::Append),
            "OVERWRITE" => Ok(UpdateBehaviour::Overwrite),
            _ => Err(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> Schema {
        serde_json::from_str(json).unwrap()
    }

    const MINIMAL: &str = r#"{
        "metadata": {"domain": "d", "dataset": "s", "sensitivity": "PUBLIC",
                     "owners": [{"name": "a", "email": "a@example.com"}]},
        "columns": [{"name": "x", "data_type": "int", "allow_null": true}]
    }"#;

    #[test]
    fn optional_fields_take_their_defaults() {
        let s = parse(MINIMAL);
        assert_eq!(s.metadata.layer(), DEFAULT_LAYER);
        assert_eq!(s.metadata.update_behaviour(), Some(UpdateBehaviour::Append));
        assert!(s.metadata.key_value_tags.is_empty() && s.metadata.key_only_tags.is_empty());
        let c = &s.columns[0];
        assert_eq!(
            (
                c.partition_index,
                c.format.as_deref(),
                c.unique,
                c.checks.len()
            ),
            (None, None, false, 0)
        );
    }

    #[test]
    fn unknown_metadata_keys_are_ignored() {
        let s = parse(
            r#"{"metadata": {"domain": "d", "dataset": "s", "sensitivity": "PUBLIC",
                 "is_latest_version": true, "version": null, "tags": {"a": "b"}},
                "columns": [{"name": "x", "data_type": "int", "allow_null": true, "extra": 1}]}"#,
        );
        assert_eq!(s.metadata.version, None);
        assert_eq!(s.metadata.sensitivity(), Some(Sensitivity::Public));
    }

    #[test]
    fn integer_is_accepted_as_int() {
        assert_eq!("integer".parse(), Ok(DataType::Int));
        assert_eq!("int".parse(), Ok(DataType::Int));
        assert_eq!(DataType::Int.as_str(), "int");
    }

    #[test]
    fn unsupported_data_types_have_no_typed_form() {
        for t in ["array", "map", "struct", "INT", "timestamp", "bigint", ""] {
            assert_eq!(t.parse::<DataType>(), Err(()), "{t}");
        }
    }

    #[test]
    fn missing_required_strings_become_empty_for_validation_to_report() {
        let s = parse(r#"{"metadata": {}, "columns": []}"#);
        assert_eq!(
            (s.metadata.domain.as_str(), s.metadata.sensitivity()),
            ("", None)
        );
    }

    #[test]
    fn check_error_text_is_ignored_and_parameters_default_to_empty() {
        let c: CheckSpec =
            serde_json::from_str(r#"{"check_type": "isin", "error": "ignored"}"#).unwrap();
        assert!(c.parameters.is_empty());
    }

    #[test]
    fn a_schema_round_trips_through_json() {
        let s = parse(MINIMAL);
        let again: Schema = serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
        assert_eq!(s, again);
    }
}
