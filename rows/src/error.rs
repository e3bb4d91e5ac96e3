//! The one engine error. Every module's failure ends up as an [`Error`] with a [`ErrorKind`] from a
//! closed set; the HTTP edge maps each kind to a status code in one exhaustive match, so adding a
//! kind is a compile error there until someone decides its status.

use std::fmt;
use std::sync::Arc;

/// What went wrong, at the granularity a client can act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The request is malformed or breaks a rule (bad name, invalid schema, unknown permission).
    Invalid,
    /// No credentials, or credentials that are wrong, expired, tampered or revoked.
    Unauthenticated,
    /// Valid credentials whose subject lacks the permission.
    Forbidden,
    /// The named thing (dataset, version, subject, job, file) does not exist.
    NotFound,
    /// The thing to be created exists already.
    Conflict,
    /// The request body is larger than the configured limit.
    TooLarge,
    /// Uploaded data fails validation against its schema.
    Unprocessable,
    /// A fault of ours (disk, database, a bug). The message is logged, not shown.
    Internal,
    /// The service is at capacity for this kind of work; the client should retry shortly.
    Busy,
    /// Too many failed sign-ins for this account or address: refused before any check, until
    /// `retry_after_seconds` have passed (429 with `Retry-After`).
    Throttled { retry_after_seconds: u64 },
}

/// The message of an error: one sentence, or every problem found (validation collects them all).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Details {
    One(String),
    Many(Vec<String>),
}

/// The error itself: kind and details are what the client is told; `context` and `source` are
/// for the log only (they never reach an HTTP answer), so a failure keeps its path, dataset or
/// row and the io or SQLite error it came from.
#[derive(Debug, Clone)]
pub struct Error {
    pub kind: ErrorKind,
    pub details: Details,
    /// Where it happened, innermost first ("reading /data/x.parquet", "dataset a/b/c").
    pub context: Vec<String>,
    /// The lower-level error it was converted from.
    pub source: Option<Arc<dyn std::error::Error + Send + Sync>>,
    /// A refused upload's report: its rows with problems, and links to the whole report behind
    /// the first messages (`report_url` and `report_parquet_url` in the answer's body).
    /// Boxed: most errors have none, and every `Result` carries the field.
    pub report: Option<Box<UploadReport>>,
}

/// What a refused upload's validation found, beyond its first messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UploadReport {
    /// Rows with at least one problem (at least these: rows past the report's limits are
    /// counted by problem, not by row).
    pub rows_rejected: u64,
    /// Set once the engine has kept the report files with the job.
    pub links: Option<ReportLinks>,
}

/// Signed links to a refused upload's whole report, as CSV and as Parquet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportLinks {
    pub csv: String,
    pub parquet: String,
}

/// Two errors are the same answer when kind and details match; context and source are log-only.
impl PartialEq for Error {
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind && self.details == other.details
    }
}
impl Eq for Error {}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error {
            kind,
            details: Details::One(message.into()),
            context: Vec::new(),
            source: None,
            report: None,
        }
    }

    pub fn many(kind: ErrorKind, messages: Vec<String>) -> Self {
        Error {
            kind,
            details: Details::Many(messages),
            context: Vec::new(),
            source: None,
            report: None,
        }
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Invalid, message)
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::NotFound, message)
    }

    pub fn conflict(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Conflict, message)
    }

    pub fn unauthenticated(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Unauthenticated, message)
    }

    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Forbidden, message)
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Internal, message)
    }

    pub fn busy(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Busy, message)
    }

    /// The same error with the same answer, saying where it happened (for the log).
    pub fn context(mut self, context: impl Into<String>) -> Self {
        self.context.push(context.into());
        self
    }

    /// The same error with the same answer, kind changed (e.g. not found answered as invalid).
    pub fn with_kind(mut self, kind: ErrorKind) -> Self {
        self.kind = kind;
        self
    }

    fn caused_by(mut self, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.source = Some(Arc::new(source));
        self
    }

    /// Everything known, for the log: the message, each context, then the chain of sources.
    pub fn report(&self) -> String {
        let mut out = self.to_string();
        for c in &self.context {
            out.push_str(&format!("; while {c}"));
        }
        let mut source: Option<&(dyn std::error::Error + 'static)> = self
            .source
            .as_deref()
            .map(|s| s as &(dyn std::error::Error + 'static));
        while let Some(s) = source {
            out.push_str(&format!("; caused by: {s}"));
            source = s.source();
        }
        out
    }

    pub fn throttled(retry_after_seconds: u64, message: impl Into<String>) -> Self {
        Self::new(
            ErrorKind::Throttled {
                retry_after_seconds,
            },
            message,
        )
    }
}

/// What a caught panic said: `panic!` and `assert!` carry a `&str` or a `String`.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> Option<&str> {
    let text = payload.downcast_ref::<&str>().copied();
    text.or_else(|| payload.downcast_ref::<String>().map(String::as_str))
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.details {
            Details::One(m) => write!(f, "{:?}: {m}", self.kind),
            Details::Many(ms) => write!(f, "{:?}: {}", self.kind, ms.join("; ")),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|s| s as &(dyn std::error::Error + 'static))
    }
}

impl From<rusqlite::Error> for Error {
    fn from(e: rusqlite::Error) -> Self {
        Error::internal(format!("catalog: {e}")).caused_by(e)
    }
}

impl From<tokio_postgres::Error> for Error {
    fn from(e: tokio_postgres::Error) -> Self {
        Error::internal(format!("catalog: {e}")).caused_by(e)
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::internal(format!("io: {e}")).caused_by(e)
    }
}

impl From<actix::MailboxError> for Error {
    fn from(e: actix::MailboxError) -> Self {
        Error::internal(format!("actor mailbox: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_and_source_reach_the_log_not_the_answer() {
        let io = std::io::Error::new(std::io::ErrorKind::PermissionDenied, "denied");
        let e = Error::from(io).context("creating /data/staging/x/raw");
        assert_eq!(e.kind, ErrorKind::Internal);
        // The answer is the same as without context.
        assert_eq!(e, Error::internal("io: denied"));
        let report = e.report();
        assert!(
            report.contains("while creating /data/staging/x/raw"),
            "{report}"
        );
        assert!(report.contains("caused by: denied"), "{report}");
        assert!(std::error::Error::source(&e).is_some());
        let shown = e.with_kind(ErrorKind::Invalid);
        assert_eq!(shown.kind, ErrorKind::Invalid);
        assert_eq!(shown.context.len(), 1);
    }

    #[test]
    fn a_panics_message_is_read_whether_literal_or_formatted() {
        let caught = |f: fn()| std::panic::catch_unwind(f).unwrap_err();
        assert_eq!(panic_message(&*caught(|| panic!("plain"))), Some("plain"));
        let n = 7;
        let formatted = std::panic::catch_unwind(move || panic!("n is {n}")).unwrap_err();
        assert_eq!(panic_message(&*formatted), Some("n is 7"));
        assert_eq!(
            panic_message(&*caught(|| std::panic::panic_any(3_u8))),
            None
        );
    }
}
