//! Request parameters more than one front reads.

use serde::Deserialize;

/// `?version=`: a schema version; absent, 0 or less means the latest.
#[derive(Debug, Deserialize)]
pub struct VersionQuery {
    pub version: Option<i64>,
}
