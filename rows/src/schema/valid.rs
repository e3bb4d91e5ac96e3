//! A schema that passed every rule, in the typed form later stages use (upload validation, Parquet
//! writing, partition layout, queries). Only [`validate`](super::validate()) and its siblings build
//! one, so holding a [`ValidSchema`] is proof the rules ran.

use std::collections::BTreeMap;

use serde::{Serialize, Serializer};

use super::check::Check;
use super::date_format::DateFormat;
use super::model::{DataType, Owner, Schema, UpdateBehaviour};
use crate::sensitivity::Sensitivity;

/// A validated schema: the normalised wire form (what is stored and shown) and typed views of it.
#[derive(Debug, Clone)]
pub struct ValidSchema {
    /// Normalised: layer filled in, domain lower-cased, description present, canonical data type
    /// names, duplicate key-only tags removed, version as assigned by the service (or none yet).
    pub(super) schema: Schema,
    pub(super) sensitivity: Sensitivity,
    pub(super) update_behaviour: UpdateBehaviour,
    pub(super) columns: Vec<ValidColumn>,
    /// Indexes into `columns`, in partition order (index 0 first).
    pub(super) partitions: Vec<usize>,
}

/// A validated column.
#[derive(Debug, Clone)]
pub struct ValidColumn {
    pub name: String,
    pub data_type: DataType,
    pub allow_null: bool,
    /// Position in the partition hierarchy; `None` for a data column.
    pub partition_index: Option<usize>,
    /// Present exactly when `data_type` is [`DataType::Date`].
    pub format: Option<DateFormat>,
    /// Values must be unique across the stored dataset version (docs/API.md).
    pub unique: bool,
    /// In check-name order.
    pub checks: Vec<NamedCheck>,
}

/// A check with the name its author gave it.
#[derive(Debug, Clone)]
pub struct NamedCheck {
    pub name: String,
    pub check: Check,
}

impl ValidSchema {
    /// The normalised wire form.
    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    pub fn into_schema(self) -> Schema {
        self.schema
    }

    pub fn layer(&self) -> &str {
        self.schema.metadata.layer()
    }

    /// Lower case.
    pub fn domain(&self) -> &str {
        &self.schema.metadata.domain
    }

    /// As written (case kept).
    pub fn dataset(&self) -> &str {
        &self.schema.metadata.dataset
    }

    pub fn sensitivity(&self) -> Sensitivity {
        self.sensitivity
    }

    pub fn update_behaviour(&self) -> UpdateBehaviour {
        self.update_behaviour
    }

    pub fn description(&self) -> &str {
        self.schema.metadata.description.as_deref().unwrap_or("")
    }

    /// `None` until the service assigns one.
    pub fn version(&self) -> Option<i64> {
        self.schema.metadata.version
    }

    pub fn set_version(&mut self, version: i64) {
        self.schema.metadata.version = Some(version);
    }

    pub fn key_value_tags(&self) -> &BTreeMap<String, String> {
        &self.schema.metadata.key_value_tags
    }

    /// Without repeats, and without keys that are also key-value tags.
    pub fn key_only_tags(&self) -> &[String] {
        &self.schema.metadata.key_only_tags
    }

    /// At least one.
    pub fn owners(&self) -> &[Owner] {
        self.schema.metadata.owners.as_deref().unwrap_or(&[])
    }

    /// In schema order.
    pub fn columns(&self) -> &[ValidColumn] {
        &self.columns
    }

    pub fn column(&self, name: &str) -> Option<&ValidColumn> {
        self.columns.iter().find(|c| c.name == name)
    }

    /// The partition columns, top level (index 0) first.
    pub fn partition_columns(&self) -> impl ExactSizeIterator<Item = &ValidColumn> + '_ {
        self.partitions.iter().map(|&i| &self.columns[i])
    }

    /// The columns that are not partitions, in schema order (at least one).
    pub fn data_columns(&self) -> impl Iterator<Item = &ValidColumn> + '_ {
        self.columns.iter().filter(|c| c.partition_index.is_none())
    }
}

/// Serialises as the normalised wire form.
impl Serialize for ValidSchema {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.schema.serialize(serializer)
    }
}
