//! The one writer of the log: requests hand their rows over; the writer takes every row waiting
//! (up to a batch), appends them in one transaction (one fsync for all), then answers each.
//! Under load many requests share one fsync. A request that read through the engine opened its
//! row while its query ran (`super::pending`): its full row is handed over without waiting, the
//! opening being durable already, and committed without a sync of its own (the next opening's
//! sync covers it, or a sync once the writer has been idle 50 ms). It also removes rows past the
//! retention and turns openings a crash left into rows, at most once an hour.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, oneshot};

use super::pending::{Batch, Opened, Opening, Row};
use super::{AuditEntry, AuditFilter, AuditRecord, AuditStore};
use crate::error::{Error, Result};

/// Rows waiting at most (requests beyond it wait to hand theirs over: memory stays bounded).
const QUEUE: usize = 4_096;
/// Rows appended in one transaction at most.
const BATCH: usize = 512;
const PRUNE_EVERY: Duration = Duration::from_secs(3_600);
/// An opening this old without its row is taken for a crashed node's: a node sharing a PostgreSQL
/// catalog cannot tell another node's live request from a dead one's, so it waits this long.
const ABANDONED_AFTER: Duration = Duration::from_secs(3_600);

enum Message {
    Open(Opened, oneshot::Sender<Result<()>>),
    Row(Row, Option<oneshot::Sender<Result<()>>>),
    /// Answered once everything handed over before it is stored.
    Flush(oneshot::Sender<Result<()>>),
}

/// Whether the store's openings can all be taken as a crash's at start (one process holds the
/// data folder: SQLite) or only those old enough (several nodes share a PostgreSQL catalog).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writers {
    One,
    Several,
}

/// The log's handle: cheap to clone; the writer stops when the last handle is gone.
#[derive(Clone)]
pub struct AuditLog {
    rows: mpsc::Sender<Message>,
    store: Arc<dyn AuditStore>,
}

impl AuditLog {
    /// Starts the writer over `store`, after turning a crash's openings into rows; rows older
    /// than `retention` are removed (`None`: kept).
    pub fn start(
        store: Arc<dyn AuditStore>,
        retention: Option<Duration>,
        writers: Writers,
    ) -> Result<AuditLog> {
        let before = match writers {
            Writers::One => None,
            Writers::Several => Some(super::time_text_before(ABANDONED_AFTER)),
        };
        recover(store.as_ref(), before.as_deref())?;
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
        self.finish(entry, None).await
    }

    /// Writes a request's `entry`, which replaces its `opening` (when the engine opened one):
    /// once the opening is durable the row is handed over without waiting for its own fsync
    /// (an answer is never without a durable trace); otherwise as [`AuditLog::record`].
    pub async fn finish(&self, entry: AuditEntry, opening: Option<Opening>) -> Result<()> {
        let (closes, opened) = match opening {
            Some(Opening { key, written }) => {
                let opened = match written {
                    Some(written) => matches!(written.await, Ok(Ok(()))),
                    None => false,
                };
                (Some(key), opened)
            }
            None => (None, false),
        };
        let row = Row {
            entry,
            closes,
            only_if_open: false,
        };
        if opened {
            return self
                .rows
                .send(Message::Row(row, None))
                .await
                .map_err(|_| stopped());
        }
        let (written, done) = oneshot::channel();
        self.rows
            .send(Message::Row(row, Some(written)))
            .await
            .map_err(|_| stopped())?;
        done.await.map_err(|_| stopped())?
    }

    /// Hands a request's row as known now to the writer, without waiting (a full queue: `None`,
    /// the request's row is then written as [`AuditLog::record`] writes it).
    pub fn open(&self, opened: Opened) -> Option<oneshot::Receiver<Result<()>>> {
        let (written, done) = oneshot::channel();
        self.rows.try_send(Message::Open(opened, written)).ok()?;
        Some(done)
    }

    /// Waits until every row handed over so far is stored: a graceful stop calls it, so rows
    /// handed over without waiting are not left as openings.
    pub async fn flush(&self) -> Result<()> {
        let (written, done) = oneshot::channel();
        self.rows
            .send(Message::Flush(written))
            .await
            .map_err(|_| stopped())?;
        done.await.map_err(|_| stopped())?
    }

    /// [`AuditLog::record`] from a thread that is not async (the blocking fronts).
    pub fn record_blocking(&self, entry: AuditEntry) -> Result<()> {
        let (written, done) = oneshot::channel();
        let row = Row {
            entry,
            closes: None,
            only_if_open: false,
        };
        self.rows
            .blocking_send(Message::Row(row, Some(written)))
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

/// Turns the openings opened before `before` (`None`: all) that have no row yet into rows.
fn recover(store: &dyn AuditStore, before: Option<&str>) -> Result<()> {
    let left = store.pending(before)?;
    if left.is_empty() {
        return Ok(());
    }
    let n = left.len();
    store.write(&Batch::recovering(left))?;
    tracing::warn!(
        rows = n,
        "audit rows of requests a stop interrupted were recovered from their openings (status 0)"
    );
    Ok(())
}

/// How long lazily committed rows may wait for a sync when nothing else comes.
const LAZY_SYNC_AFTER: Duration = Duration::from_millis(50);
/// How long rows nobody waits for may wait for company before their commit (a process killed
/// meanwhile leaves their openings, which stand for them: status 0).
const GATHER: Duration = Duration::from_millis(5);

fn write_rows(
    store: Arc<dyn AuditStore>,
    mut waiting: mpsc::Receiver<Message>,
    retention: Option<Duration>,
) {
    let Ok(clock) = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
    else {
        tracing::error!("the audit writer has no timer: it stops, requests will be refused");
        return;
    };
    let (mut pruned_at, mut unsynced): (Option<Instant>, bool) = (None, false);
    loop {
        let first = match unsynced {
            false => waiting.blocking_recv(),
            // The timer is made inside `block_on`: it needs the runtime's clock.
            true => match clock
                .block_on(async { tokio::time::timeout(LAZY_SYNC_AFTER, waiting.recv()).await })
            {
                Ok(message) => message,
                Err(_) => {
                    // Quiet: the rows handed over without waiting become durable now.
                    match store.sync() {
                        Ok(()) => unsynced = false,
                        Err(e) => tracing::error!(error = %e.report(), "audit rows not synced"),
                    }
                    continue;
                }
            },
        };
        let Some(first) = first else { break };
        let messages = gather(first, &mut waiting, &clock);
        if let Some(lazy) = store_messages(store.as_ref(), messages) {
            // A synced commit syncs the whole log file: the lazy ones before it too.
            unsynced = lazy;
        }
        if pruned_at.is_none_or(|at| at.elapsed() >= PRUNE_EVERY) {
            pruned_at = Some(Instant::now());
            hourly(store.as_ref(), retention);
        }
    }
}

/// Stores `messages` in one transaction and answers those waiting; whether it was committed
/// lazily (`None`: it failed).
fn store_messages(store: &dyn AuditStore, messages: Vec<Message>) -> Option<bool> {
    let (mut batch, mut answers, mut flush) = (Batch::default(), Vec::new(), false);
    for message in messages {
        match message {
            Message::Open(opened, written) => {
                batch.opened.push(opened);
                answers.push(written);
            }
            Message::Row(row, written) => {
                batch.rows.push(row);
                answers.extend(written);
            }
            Message::Flush(written) => {
                answers.push(written);
                flush = true;
            }
        }
    }
    // Only rows whose openings are durable: nobody waits, no fsync of their own.
    batch.lazy = answers.is_empty();
    let mut outcome = store.write(&batch);
    if outcome.is_ok() && flush {
        outcome = store.sync();
    }
    if let Err(e) = &outcome {
        tracing::error!(
            error = %e.report(),
            rows = batch.rows.len(),
            openings = batch.opened.len(),
            "audit rows not written"
        );
    }
    for written in answers {
        let answer = match &outcome {
            Ok(()) => Ok(()),
            Err(e) => Err(Error::internal(format!(
                "the request's audit row could not be written: {}",
                e.report()
            ))),
        };
        let _ = written.send(answer);
    }
    outcome.ok().map(|()| batch.lazy)
}

/// The messages waiting after `first`, up to a batch. When none of them is waited for (rows
/// whose openings are durable), up to [`GATHER`] more for the next message: in a client's run
/// of requests that is the next request's opening, and both share one transaction.
fn gather(
    first: Message,
    waiting: &mut mpsc::Receiver<Message>,
    clock: &tokio::runtime::Runtime,
) -> Vec<Message> {
    let waited_for = |m: &Message| !matches!(m, Message::Row(_, None));
    let mut messages = vec![first];
    let mut deadline: Option<Instant> = None;
    while messages.len() < BATCH {
        match waiting.try_recv() {
            Ok(next) => messages.push(next),
            Err(mpsc::error::TryRecvError::Disconnected) => break,
            Err(mpsc::error::TryRecvError::Empty) => {
                if messages.iter().any(waited_for) {
                    break;
                }
                let until = *deadline.get_or_insert_with(|| Instant::now() + GATHER);
                let left = until.saturating_duration_since(Instant::now());
                let next =
                    clock.block_on(async { tokio::time::timeout(left, waiting.recv()).await });
                match next {
                    Ok(Some(next)) => messages.push(next),
                    Ok(None) | Err(_) => break,
                }
            }
        }
    }
    messages
}

/// Retention, and the rows of openings a crashed node left.
fn hourly(store: &dyn AuditStore, retention: Option<Duration>) {
    let abandoned = super::time_text_before(ABANDONED_AFTER);
    if let Err(e) = recover(store, Some(&abandoned)) {
        tracing::warn!(error = %e.report(), "abandoned audit openings not recovered");
    }
    let Some(keep) = retention else { return };
    match store.prune_before(&super::time_text_before(keep)) {
        Ok(0) => {}
        Ok(n) => tracing::info!(rows = n, "removed audit rows past their retention"),
        Err(e) => tracing::warn!(error = %e.report(), "audit retention not applied"),
    }
}
