//! The one writer of the log: requests hand their rows over and wait; the writer takes every row
//! waiting (up to a batch), appends them in one transaction (one fsync for all), then answers each.
//! Under load many requests share one fsync; alone, a request waits for one small transaction.
//! It also removes rows past the retention, at most once an hour.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, oneshot};

use super::{AuditEntry, AuditFilter, AuditRecord, AuditStore};
use crate::error::{Error, Result};

/// Rows waiting at most (requests beyond it wait to hand theirs over: memory stays bounded).
const QUEUE: usize = 4_096;
/// Rows appended in one transaction at most.
const BATCH: usize = 512;
const PRUNE_EVERY: Duration = Duration::from_secs(3_600);

struct Waiting {
    entry: AuditEntry,
    written: oneshot::Sender<Result<()>>,
}

/// The log's handle: cheap to clone; the writer stops when the last handle is gone.
#[derive(Clone)]
pub struct AuditLog {
    rows: mpsc::Sender<Waiting>,
    store: Arc<dyn AuditStore>,
}

impl AuditLog {
    /// Starts the writer over `store`; rows older than `retention` are removed (`None`: kept).
    pub fn start(store: Arc<dyn AuditStore>, retention: Option<Duration>) -> Result<AuditLog> {
        let (rows, waiting) = mpsc::channel(QUEUE);
        let writer_store = store.clone();
        std::thread::Builder::new()
            .name("audit-writer".into())
            .spawn(move || write_rows(writer_store, waiting, retention))
            .map_err(|e| Error::internal(format!("starting the audit writer: {e}")))?;
        Ok(AuditLog { rows, store })
    }

    /// Writes `entry`; returns once it is durable. An error means the row is not written, and
    /// the front must not answer as if it were.
    pub async fn record(&self, entry: AuditEntry) -> Result<()> {
        let (written, done) = oneshot::channel();
        self.rows
            .send(Waiting { entry, written })
            .await
            .map_err(|_| stopped())?;
        done.await.map_err(|_| stopped())?
    }

    /// [`AuditLog::record`] from a thread that is not async (the blocking fronts).
    pub fn record_blocking(&self, entry: AuditEntry) -> Result<()> {
        let (written, done) = oneshot::channel();
        self.rows
            .blocking_send(Waiting { entry, written })
            .map_err(|_| stopped())?;
        done.blocking_recv().map_err(|_| stopped())?
    }

    /// The rows `filter` selects, oldest first (a blocking read of the store).
    pub fn page(&self, filter: &AuditFilter) -> Result<Vec<AuditRecord>> {
        self.store.page(filter)
    }

    pub fn store(&self) -> &Arc<dyn AuditStore> {
        &self.store
    }
}

fn stopped() -> Error {
    Error::internal("the audit log's writer has stopped: the request's audit row was not written")
}

fn write_rows(
    store: Arc<dyn AuditStore>,
    mut waiting: mpsc::Receiver<Waiting>,
    retention: Option<Duration>,
) {
    let mut pruned_at: Option<Instant> = None;
    while let Some(first) = waiting.blocking_recv() {
        let mut batch = vec![first];
        while batch.len() < BATCH {
            match waiting.try_recv() {
                Ok(next) => batch.push(next),
                Err(_) => break,
            }
        }
        let entries: Vec<AuditEntry> = batch.iter().map(|w| w.entry.clone()).collect();
        let outcome = store.append(&entries);
        if let Err(e) = &outcome {
            tracing::error!(error = %e.report(), rows = entries.len(), "audit rows not written");
        }
        for w in batch {
            let answer = match &outcome {
                Ok(()) => Ok(()),
                Err(e) => Err(Error::internal(format!(
                    "the request's audit row could not be written: {}",
                    e.report()
                ))),
            };
            let _ = w.written.send(answer);
        }
        if let Some(keep) = retention {
            if pruned_at.is_none_or(|at| at.elapsed() >= PRUNE_EVERY) {
                pruned_at = Some(Instant::now());
                match store.prune_before(&super::time_text_before(keep)) {
                    Ok(0) => {}
                    Ok(n) => tracing::info!(rows = n, "removed audit rows past their retention"),
                    Err(e) => tracing::warn!(error = %e.report(), "audit retention not applied"),
                }
            }
        }
    }
}
