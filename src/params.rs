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

/// A query's `?version=&as_of_commit=N` or `?version=&as_of=<RFC 3339 time>` (docs/API.md,
/// history): which schema version, and which commit of it, to read (absent: the newest).
#[derive(Debug, Deserialize)]
pub struct QueryAt {
    pub version: Option<i64>,
    pub as_of_commit: Option<i64>,
    pub as_of: Option<String>,
}

impl QueryAt {
    pub fn at(&self) -> Result<rapid_actors::history::AsOf, rapid_actors::Error> {
        rapid_actors::history::as_of(self.as_of_commit, self.as_of.as_deref())
    }
}

/// `GET .../history?version=&page=&per_page=`: pages from 1, 100 commits a page by default.
#[derive(Debug, Deserialize)]
pub struct HistoryQuery {
    pub version: Option<i64>,
    #[serde(default = "first_page")]
    pub page: i64,
    #[serde(default = "default_per_page")]
    pub per_page: i64,
}

fn first_page() -> i64 {
    1
}

fn default_per_page() -> i64 {
    100
}

/// `POST .../rollback?version=&to_commit=N`.
#[derive(Debug, Deserialize)]
pub struct RollbackQuery {
    pub version: Option<i64>,
    pub to_commit: i64,
}

/// A raw file deletion's `?erase=true` (absent or `false`: the rows stay in earlier commits).
#[derive(Debug, Deserialize)]
pub struct EraseQuery {
    #[serde(default)]
    pub erase: bool,
}

/// The header naming the commit a query read.
pub const COMMIT_HEADER: &str = "X-Rapid-Commit";
