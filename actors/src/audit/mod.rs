//! The audit log (docs/DESIGN.md, "Audit log"): one append-only row per request that reads,
//! writes or changes access, on every front. Fronts build an [`AuditEntry`] when a request ends
//! (the engine fills what only it knows, the dataset, commit, columns and policies read, into the
//! request's [`Note`]) and wait on [`AuditLog::record`] before answering: rows are written by one
//! writer in batches (many requests share one transaction and one fsync), so an answered request
//! always has its row while the request itself does no catalog work. Each row carries the SHA-256
//! of the row before it and of itself: `rapid-rs admin audit verify` finds any row changed,
//! removed or inserted after the fact.

mod chain;
mod note;
pub mod pending;
pub mod statement;
pub mod store;
pub mod table;
mod writer;

#[cfg(test)]
pub(crate) mod tests;

use serde::{Deserialize, Serialize};

pub use chain::{verify, Verified};
pub use note::{Note, NoteFields, Opener};
pub use store::AuditStore;
pub use writer::{AuditLog, Writers};

/// The rows of a page of `GET /api/audit` at most.
pub const MAX_AUDIT_PAGE: usize = 1_000;

/// Where a request came in.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Front {
    /// The JSON API (`/api/...`), `/api/sql` included.
    Http,
    /// `/api/sql` and `/api/sql/large`.
    Sql,
    /// The PostgreSQL listener.
    Pg,
    /// The web pages.
    Web,
    /// The MCP endpoint.
    Mcp,
    /// A background job finishing (a large query's result written).
    Job,
}

impl Front {
    pub fn as_str(self) -> &'static str {
        match self {
            Front::Http => "http",
            Front::Sql => "sql",
            Front::Pg => "pg",
            Front::Web => "web",
            Front::Mcp => "mcp",
            Front::Job => "job",
        }
    }

    pub fn parse(text: &str) -> Option<Front> {
        [
            Front::Http,
            Front::Sql,
            Front::Pg,
            Front::Web,
            Front::Mcp,
            Front::Job,
        ]
        .into_iter()
        .find(|f| f.as_str() == text)
    }
}

/// One request as the log keeps it. Field order is the hash's canonical order: do not reorder.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditEntry {
    /// RFC 3339 UTC with milliseconds, when the request ended.
    pub at: String,
    pub subject_id: Option<String>,
    pub subject_name: Option<String>,
    pub front: Front,
    /// What was asked: `METHOD /route/{template}` over HTTP and the pages, the statement's kind
    /// (`SELECT`, `SHOW`...) over SQL, the job's kind for jobs.
    pub action: String,
    pub layer: Option<String>,
    pub domain: Option<String>,
    pub dataset: Option<String>,
    pub version: Option<i64>,
    pub commit: Option<i64>,
    /// The columns read (`layer/domain/dataset.column` when a statement read several datasets).
    pub columns: Vec<String>,
    /// The names of the policies applied (row filters' names, `mask:{column}`).
    pub policies: Vec<String>,
    pub rows: Option<u64>,
    pub bytes: Option<u64>,
    /// The HTTP status answered (the PostgreSQL listener: 200, or the status its error maps to);
    /// 0 when the service stopped after a read's answer, before its outcome was stored (the row
    /// kept from what the read had noted: `rows` and `bytes` null, `duration_ms` 0).
    pub status: u16,
    pub duration_ms: u64,
    pub request_id: Option<String>,
    pub client_addr: Option<String>,
    /// The statement (SQL, or a query's filter) with every literal replaced by `?`.
    pub statement: Option<String>,
}

/// A stored row: its id (the `after` cursor), the entry, and its place in the hash chain.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AuditRecord {
    pub id: i64,
    #[serde(flatten)]
    pub entry: AuditEntry,
    #[serde(skip)]
    pub prev_hash: String,
    #[serde(skip)]
    pub hash: String,
}

/// What `GET /api/audit` narrows to; every field optional. `after` is the last id seen.
#[derive(Debug, Clone, Default)]
pub struct AuditFilter {
    pub subject_id: Option<String>,
    pub layer: Option<String>,
    pub domain: Option<String>,
    pub dataset: Option<String>,
    pub action: Option<String>,
    pub front: Option<Front>,
    /// Inclusive, RFC 3339 text compared as stored.
    pub since: Option<String>,
    /// Exclusive.
    pub until: Option<String>,
    pub after: Option<i64>,
    pub limit: usize,
}

impl AuditEntry {
    /// A row for a request of `subject` (id, name; none: refused before a subject was known) that ended
    /// now with `status`, with what the engine noted while serving it. The dataset fields are
    /// set when it read exactly one dataset.
    pub fn of(
        front: Front,
        action: String,
        subject: Option<(&str, &str)>,
        noted: NoteFields,
        status: u16,
    ) -> AuditEntry {
        let one = match noted.reads.as_slice() {
            [(key, version, commit)] => Some((key.clone(), *version, *commit)),
            _ => None,
        };
        // One dataset: its columns by their own names (SQL notes them qualified).
        let columns = match &one {
            Some((k, _, _)) => {
                let prefix = format!("{}/{}/{}.", k.layer, k.domain, k.dataset);
                let own = |c: String| c.strip_prefix(&prefix).map(str::to_string).unwrap_or(c);
                noted.columns.into_iter().map(own).collect()
            }
            None => noted.columns,
        };
        AuditEntry {
            at: now_text(),
            subject_id: subject.map(|(id, _)| id.to_string()),
            subject_name: subject.map(|(_, name)| name.to_string()),
            front,
            action: noted.action.unwrap_or(action),
            layer: one.as_ref().map(|(k, _, _)| k.layer.clone()),
            domain: one.as_ref().map(|(k, _, _)| k.domain.clone()),
            dataset: one.as_ref().map(|(k, _, _)| k.dataset.clone()),
            version: one.as_ref().map(|(_, v, _)| *v),
            commit: one.as_ref().and_then(|(_, _, c)| *c),
            columns,
            policies: noted.policies,
            rows: noted.rows,
            bytes: None,
            status: noted.status.unwrap_or(status),
            duration_ms: 0,
            request_id: None,
            client_addr: None,
            statement: noted.statement,
        }
    }
}

/// A time bound as stored (RFC 3339 UTC, milliseconds), from any RFC 3339 time or a date.
pub fn time_bound(name: &str, text: Option<String>) -> crate::error::Result<Option<String>> {
    let Some(text) = text else { return Ok(None) };
    let parsed = chrono::DateTime::parse_from_rfc3339(&text)
        .map(|t| t.with_timezone(&chrono::Utc))
        .or_else(|_| {
            chrono::NaiveDate::parse_from_str(&text, "%Y-%m-%d")
                .map(|d| d.and_hms_opt(0, 0, 0).unwrap_or_default().and_utc())
        })
        .map_err(|_| {
            crate::error::Error::invalid(format!(
                "`{name}` must be an RFC 3339 time (2026-11-29T10:00:00Z) or a date (2026-11-29)"
            ))
        })?;
    Ok(Some(
        parsed.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
    ))
}

/// Now as stored (RFC 3339 UTC with milliseconds: texts compare as the times do).
pub fn now_text() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// The time `ago` before now, as [`now_text`] writes it.
fn time_text_before(ago: std::time::Duration) -> String {
    let ago = chrono::Duration::from_std(ago).unwrap_or(chrono::Duration::MAX);
    let then = chrono::Utc::now()
        .checked_sub_signed(ago)
        .unwrap_or(chrono::DateTime::<chrono::Utc>::MIN_UTC);
    then.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}
