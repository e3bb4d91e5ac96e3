//! The audit log's use cases: fronts record a row per request; administrators read them.

use std::sync::Arc;
use std::time::Instant;

use super::Engine;
use crate::audit::{AuditEntry, AuditFilter, AuditLog, AuditRecord, Front, Note, MAX_AUDIT_PAGE};
use crate::auth::pass::{self, AuditReaderPass};
use crate::auth::Subject;
use crate::error::{Error, ErrorKind, Result};

/// What a job's audit row needs from the request that started it.
#[derive(Clone)]
pub(super) struct JobAudit {
    pub subject: Arc<Subject>,
    pub note: Note,
    pub started: Instant,
}

/// The HTTP status an engine error is answered with (src/error.rs maps it the same way).
fn status_of(kind: &ErrorKind) -> u16 {
    match kind {
        ErrorKind::Invalid => 400,
        ErrorKind::Unauthenticated => 401,
        ErrorKind::Forbidden => 403,
        ErrorKind::NotFound => 404,
        ErrorKind::Conflict => 409,
        ErrorKind::TooLarge => 413,
        ErrorKind::Unprocessable => 422,
        ErrorKind::Throttled { .. } => 429,
        ErrorKind::Busy => 503,
        ErrorKind::Internal => 500,
    }
}

impl Engine {
    /// The log every front writes its requests' rows to.
    pub fn audit(&self) -> &AuditLog {
        &self.audit
    }

    /// A pass for a USER_ADMIN or DATA_ADMIN (403 otherwise).
    pub fn audit_reader_pass(&self, subject: Arc<Subject>) -> Result<AuditReaderPass> {
        pass::audit_reader_pass(subject)
    }

    /// The rows `filter` selects, oldest first, at most [`MAX_AUDIT_PAGE`]. Blocking (a read of
    /// the store): call it off the async workers.
    pub fn audit_events(
        &self,
        _pass: &AuditReaderPass,
        mut filter: AuditFilter,
    ) -> Result<Vec<AuditRecord>> {
        filter.limit = filter.limit.clamp(1, MAX_AUDIT_PAGE);
        self.audit.page(&filter)
    }

    /// The row of a large-query job (`kind` `QUERY` or `SQL`) that ended with `outcome`: the
    /// rows it wrote, or its error. Its `request_id` is the job's id.
    pub(super) async fn record_job(
        &self,
        (kind, job_id): (&str, &str),
        job: JobAudit,
        outcome: std::result::Result<u64, &Error>,
    ) {
        if let Ok(rows) = outcome {
            job.note.rows(rows);
        }
        let status = outcome.map_or_else(|e| status_of(&e.kind), |_| 200);
        let mut entry = AuditEntry::of(
            Front::Job,
            kind.to_string(),
            Some((&job.subject.id, &job.subject.name)),
            job.note.fields(),
            status,
        );
        entry.request_id = Some(job_id.to_string());
        entry.duration_ms = job.started.elapsed().as_millis() as u64;
        // The job's outcome is recorded whatever happens here; a row that cannot be written is
        // logged (the request that started the job has its own row).
        if let Err(e) = self.audit.record(entry).await {
            tracing::error!(job_id, error = %e.report(), "a job's audit row was not written");
        }
    }
}
