//! The audit log's use cases: fronts record a row per request; administrators read them.

use std::sync::Arc;

use super::Engine;
use crate::audit::{AuditFilter, AuditLog, AuditRecord, MAX_AUDIT_PAGE};
use crate::auth::pass::{self, AuditReaderPass};
use crate::auth::Subject;
use crate::error::Result;

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
}
