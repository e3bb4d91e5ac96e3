//! The shared names of the engine: how a dataset is keyed and its catalog record. Every layer
//! uses these, so they sit at the bottom and import nothing but errors and sensitivity.

use crate::error::Error;
use crate::sensitivity::Sensitivity;

/// How a dataset is named in paths: layer and domain lower-case, dataset compared lower-case.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DatasetKey {
    pub layer: String,
    pub domain: String,
    /// The lower-cased dataset name: what names collide on and what storage paths use.
    pub dataset: String,
}

impl DatasetKey {
    pub fn new(layer: &str, domain: &str, dataset: &str) -> DatasetKey {
        DatasetKey {
            layer: layer.to_ascii_lowercase(),
            domain: domain.to_ascii_lowercase(),
            dataset: dataset.to_ascii_lowercase(),
        }
    }

    /// "layer/domain/dataset", for messages and logs.
    pub fn display(&self) -> String {
        format!("{}/{}/{}", self.layer, self.domain, self.dataset)
    }

    pub fn not_found(&self) -> Error {
        Error::not_found(format!(
            "Could not find the schema for dataset layer [{}], domain [{}] and dataset [{}]",
            self.layer, self.domain, self.dataset
        ))
    }
}

/// A dataset as the catalog holds it. Only the engine builds one (its fields are crate-private),
/// so a record outside the engine is always one the catalog returned: a dataset pass (see
/// `auth::pass`) cannot be made for an invented dataset.
#[derive(Debug, Clone)]
pub struct DatasetRecord {
    pub id: i64,
    pub key: DatasetKey,
    /// The name as first created, with its case.
    pub name: String,
    pub sensitivity: Sensitivity,
    pub latest_version: i64,
}

impl DatasetRecord {
    pub fn id(&self) -> i64 {
        self.id
    }
    pub fn key(&self) -> &DatasetKey {
        &self.key
    }
    /// The name as first created, with its case.
    pub fn name(&self) -> &str {
        &self.name
    }
    pub fn sensitivity(&self) -> Sensitivity {
        self.sensitivity
    }
    pub fn latest_version(&self) -> i64 {
        self.latest_version
    }
}
