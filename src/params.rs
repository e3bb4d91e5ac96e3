//! Request parameters more than one front reads.

use serde::Deserialize;

/// `?version=`: a schema version; absent, 0 or less means the latest.
#[derive(Debug, Deserialize)]
pub struct VersionQuery {
    pub version: Option<i64>,
}

/// An upload's `?version=&on_error=reject|quarantine` (docs/API.md; absent: `reject`).
#[derive(Debug, Deserialize)]
pub struct UploadQuery {
    pub version: Option<i64>,
    #[serde(default)]
    pub on_error: crate::answers::OnErrorMode,
}
