//! A request's row opened before it is answered (docs/DESIGN.md, "Audit log"): when the engine
//! has noted what a request reads, the row as known then (who, what, which columns, policies,
//! the statement) is stored apart, durably, while the query runs; the request's full row later
//! replaces it in the log's transaction that appends it. An answer waits only for the opening,
//! whose fsync overlapped the query's work. After a crash, an opening left without its row
//! becomes the row, with status 0: the answer may have gone out, its outcome is not known.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use tokio::sync::oneshot;

use super::AuditEntry;
use crate::error::Result;

/// The openings' table, in SQLite's and PostgreSQL's common SQL.
pub(crate) const PENDING_TABLE: &str = r#"
    CREATE TABLE IF NOT EXISTS audit_pending (
        key        TEXT PRIMARY KEY,
        opened_at  TEXT NOT NULL,
        entry_json TEXT NOT NULL
    );
"#;

/// The status a row recovered from an opening carries: the outcome was never stored.
pub const OUTCOME_UNKNOWN: u16 = 0;

/// A request's row as known when it was opened.
#[derive(Debug, Clone, PartialEq)]
pub struct Opened {
    pub key: String,
    pub entry: AuditEntry,
}

/// A row to append; `closes` names the opening it replaces (removed in the same transaction).
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub entry: AuditEntry,
    pub closes: Option<String>,
    /// A recovered opening: appended only if the opening is still there (another node may
    /// have recovered it, or its request's row may have come meanwhile).
    pub only_if_open: bool,
}

impl Row {
    /// Whether the row is appended, once removing the opening it closes removed one (`closed`)
    /// or none: a recovered opening's row only if the opening was still there.
    pub(crate) fn appended(&self, closed: bool) -> bool {
        closed || !self.only_if_open
    }
}

/// What the writer stores in one transaction: openings first, then rows in order.
#[derive(Debug, Default)]
pub struct Batch {
    pub opened: Vec<Opened>,
    pub rows: Vec<Row>,
    /// Nobody waits for it: only rows whose openings are durable already. The store may commit
    /// it without a sync (a crash then leaves the openings, which stand for the rows); the next
    /// synced write, or [`super::AuditStore::sync`], makes it durable.
    pub lazy: bool,
}

impl Batch {
    pub fn of_rows(entries: &[AuditEntry]) -> Batch {
        Batch {
            opened: Vec::new(),
            lazy: false,
            rows: entries
                .iter()
                .map(|entry| Row {
                    entry: entry.clone(),
                    closes: None,
                    only_if_open: false,
                })
                .collect(),
        }
    }

    /// The rows replacing openings left without theirs (a crash): status [`OUTCOME_UNKNOWN`].
    pub fn recovering(left: Vec<Opened>) -> Batch {
        let rows = left
            .into_iter()
            .map(|o| Row {
                entry: AuditEntry {
                    status: OUTCOME_UNKNOWN,
                    ..o.entry
                },
                closes: Some(o.key),
                only_if_open: true,
            })
            .collect();
        Batch {
            opened: Vec::new(),
            rows,
            lazy: false,
        }
    }
}

/// What a request's front hands back with its row: the opening's key, and the writer's answer
/// for the opening's latest version (`None`: it could not be handed over, the queue was full).
pub struct Opening {
    pub key: String,
    pub written: Option<oneshot::Receiver<Result<()>>>,
}

/// A key no other opening of any node has: this process's random prefix and a counter.
pub fn new_key() -> String {
    static PROCESS: OnceLock<String> = OnceLock::new();
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let process = PROCESS.get_or_init(|| uuid::Uuid::new_v4().simple().to_string());
    format!("{process}-{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// The opening's stored form.
pub(crate) fn entry_json(entry: &AuditEntry) -> Result<String> {
    serde_json::to_string(entry)
        .map_err(|e| crate::error::Error::internal(format!("an audit opening unwritable: {e}")))
}

pub(crate) fn entry_from_json(text: &str) -> Result<AuditEntry> {
    serde_json::from_str(text)
        .map_err(|e| crate::error::Error::internal(format!("an audit opening unreadable: {e}")))
}
