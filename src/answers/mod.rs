//! The answers of the API, as the handlers construct them and as the OpenAPI document describes
//! them (`ToSchema`): one type for both, so the document cannot drift from what is sent.
//! The bodies that are the engine's own types (schemas, subjects, tokens, the dataset listing and
//! info, jobs, queries) are described where they are defined: rapid-actors derives `ToSchema` on
//! them behind its `openapi` feature, which this crate turns on. They are re-exported here so
//! that the document names every body from one module.

pub mod rules;

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

pub use rapid_actors::auth::permission::PermissionItem;
pub use rapid_actors::auth::{IssuedToken, NewClient, NewUser, SubjectView};
pub use rapid_actors::engine::{Commit, DatasetEntry, DatasetFilter, DatasetInfo};
pub use rapid_actors::jobs::JobView;
pub use rapid_actors::profile::ProfileView;
pub use rapid_actors::query::QueryRequest;
pub use rapid_actors::schema::Schema;

/// Every error: one message or a list of them (validation reports every problem at once).
#[derive(Serialize, ToSchema)]
pub struct ErrorBody {
    pub details: ErrorDetails,
    /// Only on a refused upload (422) whose rows had problems: a signed link (expiring like
    /// large-query results) to the whole report as CSV, every problem with its `row`, `column`,
    /// `rule` (type, null, check, unique, fields, encoding, file), `value` as received, `key`
    /// (the row's first unique column, else its first column) and `message`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub report_url: Option<String>,
    /// The same report as Parquet (`row` a number, `value` and `key` null when absent).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub report_parquet_url: Option<String>,
}

impl ErrorBody {
    pub fn one(message: impl Into<String>) -> ErrorBody {
        ErrorBody {
            details: ErrorDetails::One(message.into()),
            report_url: None,
            report_parquet_url: None,
        }
    }

    /// A refused upload's problems, with the links to its whole report.
    pub fn refused(messages: Vec<String>, links: &rapid_actors::ReportLinks) -> ErrorBody {
        ErrorBody {
            report_url: Some(links.csv.clone()),
            report_parquet_url: Some(links.parquet.clone()),
            ..ErrorBody::many(messages)
        }
    }

    pub fn many(messages: Vec<String>) -> ErrorBody {
        ErrorBody {
            details: ErrorDetails::Many(messages),
            report_url: None,
            report_parquet_url: None,
        }
    }
}

#[derive(Serialize, ToSchema)]
#[serde(untagged)]
pub enum ErrorDetails {
    One(String),
    Many(Vec<String>),
}

/// A confirmation: what was done, in words.
#[derive(Serialize, ToSchema)]
pub struct Confirmation {
    pub details: String,
}

impl Confirmation {
    pub fn new(details: impl Into<String>) -> Confirmation {
        Confirmation {
            details: details.into(),
        }
    }
}

/// A deletion confirmation under both keys (docs/SPEC.md names it `message`, rAPId `details`).
#[derive(Serialize, ToSchema)]
pub struct DeletedSubject {
    pub details: String,
    pub message: String,
}

impl DeletedSubject {
    pub fn new(message: String) -> DeletedSubject {
        DeletedSubject {
            details: message.clone(),
            message,
        }
    }
}

#[derive(Serialize, ToSchema)]
pub struct Status {
    #[schema(example = "deployed")]
    pub status: String,
    pub version: String,
    #[schema(example = "/api")]
    pub root_path: String,
}

impl Status {
    /// This build's status.
    pub fn deployed() -> Status {
        Status {
            status: "deployed".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            root_path: "/api".into(),
        }
    }
}

#[derive(Serialize, ToSchema)]
pub struct SubjectPermissions {
    pub subject_id: String,
    pub permissions: Vec<String>,
}

#[derive(Serialize, ToSchema)]
pub struct SchemaStored {
    pub details: String,
    pub version: i64,
}

#[derive(Serialize, ToSchema)]
pub struct UploadAccepted {
    pub details: UploadDetails,
}

#[derive(Serialize, ToSchema)]
pub struct UploadDetails {
    pub original_filename: String,
    pub raw_filename: String,
    pub dataset_version: i64,
    #[schema(example = "Data processing")]
    pub status: String,
    pub job_id: String,
    /// `on_error=quarantine` only: the rows being stored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rows_accepted: Option<u64>,
    /// `on_error=quarantine` only: the rows kept apart.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rows_rejected: Option<u64>,
    /// `on_error=quarantine` with rows kept apart: every problem as CSV (row, column, rule,
    /// value, key, message), a signed link.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report_url: Option<String>,
    /// `on_error=quarantine` with rows kept apart: those rows as received, with `_row` and
    /// `_problems` (CSV), a signed link.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quarantine_url: Option<String>,
}

/// `on_error` of an upload: what rows that break the schema do.
#[derive(Debug, Clone, Copy, Default, serde::Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum OnErrorMode {
    #[default]
    Reject,
    Quarantine,
}

impl From<OnErrorMode> for rapid_actors::ingest::OnError {
    fn from(mode: OnErrorMode) -> Self {
        match mode {
            OnErrorMode::Reject => rapid_actors::ingest::OnError::Reject,
            OnErrorMode::Quarantine => rapid_actors::ingest::OnError::Quarantine,
        }
    }
}

impl From<rapid_actors::engine::UploadAccepted> for UploadAccepted {
    fn from(a: rapid_actors::engine::UploadAccepted) -> UploadAccepted {
        UploadAccepted {
            details: UploadDetails {
                original_filename: a.original_filename,
                raw_filename: a.raw_filename,
                dataset_version: a.dataset_version,
                status: a.status.to_string(),
                job_id: a.job_id,
                rows_accepted: a.quarantine.as_ref().map(|q| q.rows_accepted),
                rows_rejected: a.quarantine.as_ref().map(|q| q.rows_rejected),
                report_url: a.quarantine.as_ref().and_then(|q| q.report_url.clone()),
                quarantine_url: a.quarantine.and_then(|q| q.quarantine_url),
            },
        }
    }
}

// A job started: a large query's or a compaction's.
#[derive(Serialize, ToSchema)]
pub struct QueryJobAccepted {
    pub details: QueryJobDetails,
}

#[derive(Serialize, ToSchema)]
pub struct QueryJobDetails {
    pub job_id: String,
}

impl QueryJobAccepted {
    pub fn new(job_id: String) -> QueryJobAccepted {
        QueryJobAccepted {
            details: QueryJobDetails { job_id },
        }
    }
}

/// A rollback made: the new commit, whose files are those of `to_commit`.
#[derive(Serialize, ToSchema)]
pub struct RolledBack {
    pub details: RolledBackDetails,
}

#[derive(Serialize, ToSchema)]
pub struct RolledBackDetails {
    /// The new commit (a ROLLBACK in the history).
    pub commit: i64,
    /// The commit whose files it lists again.
    pub to_commit: i64,
}

/// A multipart form with the data file as its `file` part (CSV or Parquet).
#[derive(ToSchema)]
pub struct FileUpload {
    #[schema(format = Binary, content_media_type = "application/octet-stream")]
    pub file: String,
}

/// Rows by index (`"0"`, `"1"`, ...), each a column-to-value object; `{}` when empty.
#[derive(ToSchema)]
pub struct QueryRows(pub BTreeMap<String, BTreeMap<String, Value>>);
