//! The listener's running totals, read by the service's metrics at each scrape (one listener
//! per process, so they are process-wide).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

#[derive(Debug)]
pub struct WireFigures {
    /// Connections open now (accepted and not yet closed).
    pub open: AtomicU64,
    /// Connections closed at once because [`crate::MAX_CONNECTIONS`] were open.
    pub refused_full: AtomicU64,
    /// Connections refused (53300) because their address had its share open.
    pub refused_per_address: AtomicU64,
    /// Connections closed for not signing in within `RAPID_PG_STARTUP_SECONDS`.
    pub no_sign_in: AtomicU64,
    /// Statements answered, and those answered with an error (refusals included).
    pub statements: AtomicU64,
    pub statement_errors: AtomicU64,
}

pub static FIGURES: WireFigures = WireFigures {
    open: AtomicU64::new(0),
    refused_full: AtomicU64::new(0),
    refused_per_address: AtomicU64::new(0),
    no_sign_in: AtomicU64::new(0),
    statements: AtomicU64::new(0),
    statement_errors: AtomicU64::new(0),
};

impl WireFigures {
    pub(crate) fn statement<T, E>(&self, answer: &Result<T, E>) {
        self.statements.fetch_add(1, Relaxed);
        if answer.is_err() {
            self.statement_errors.fetch_add(1, Relaxed);
        }
    }
}

/// Counts a connection open until dropped.
pub(crate) struct OpenConnection;

impl OpenConnection {
    pub(crate) fn new() -> OpenConnection {
        FIGURES.open.fetch_add(1, Relaxed);
        OpenConnection
    }
}

impl Drop for OpenConnection {
    fn drop(&mut self) {
        FIGURES.open.fetch_sub(1, Relaxed);
    }
}
