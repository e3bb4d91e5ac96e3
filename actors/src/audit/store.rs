//! Where the log's rows are kept. SQLite: a file of its own beside the catalog (`audit.sqlite`),
//! so its writer never waits for a commit holding the catalog's write lock, nor makes one wait.
//! PostgreSQL: the table `audit_events` of the catalog's database, written under an advisory lock
//! so several nodes append one chain.

use std::path::Path;
use std::sync::Mutex;

use rusqlite::{params_from_iter, Connection};

use super::chain::hash;
pub(crate) use super::chain::GENESIS as GENESIS_HASH;
use super::pending::{entry_from_json, entry_json, Batch, Opened, PENDING_TABLE};
use super::{AuditEntry, AuditFilter, AuditRecord, Front};
use crate::error::{Error, Result};

/// The audit file of a data folder (SQLite catalogs).
pub const AUDIT_FILE: &str = "audit.sqlite";

pub trait AuditStore: Send + Sync {
    /// Stores `batch` in one durable transaction: its openings, then its rows in order, chained
    /// to the last row, each removing the opening it closes.
    fn write(&self, batch: &Batch) -> Result<()>;
    /// Appends `entries` in order, chained to the last row, in one durable transaction.
    fn append(&self, entries: &[AuditEntry]) -> Result<()> {
        self.write(&Batch::of_rows(entries))
    }
    /// The openings still waiting for their rows, opened before `before` (RFC 3339; `None`: all).
    fn pending(&self, before: Option<&str>) -> Result<Vec<Opened>>;
    /// Makes every batch committed lazily so far durable.
    fn sync(&self) -> Result<()>;
    /// The rows `filter` selects, oldest first.
    fn page(&self, filter: &AuditFilter) -> Result<Vec<AuditRecord>>;
    /// Up to `limit` rows after id `after`, in id order (verification).
    fn chain_from(&self, after: i64, limit: usize) -> Result<Vec<AuditRecord>>;
    /// Removes the rows older than `before` (RFC 3339 text); how many.
    fn prune_before(&self, before: &str) -> Result<u64>;
}

/// The columns in [`AuditEntry`]'s order after `id`, as both stores name them.
pub(crate) const COLUMNS: &str = "id, at, subject_id, subject_name, front, action, layer, domain, \
    dataset, version, commit_id, columns_json, policies_json, rows_returned, bytes, status, \
    duration_ms, request_id, client_addr, statement, prev_hash, hash";

/// The table, in SQLite's and PostgreSQL's common SQL (`BIGINT` is an integer to both).
pub(crate) const TABLE: &str = r#"
    CREATE TABLE IF NOT EXISTS audit_events (
        id            BIGINT PRIMARY KEY,
        at            TEXT NOT NULL,
        subject_id    TEXT,
        subject_name  TEXT,
        front         TEXT NOT NULL,
        action        TEXT NOT NULL,
        layer         TEXT,
        domain        TEXT,
        dataset       TEXT,
        version       BIGINT,
        commit_id     BIGINT,
        columns_json  TEXT NOT NULL,
        policies_json TEXT NOT NULL,
        rows_returned BIGINT,
        bytes         BIGINT,
        status        INTEGER NOT NULL,
        duration_ms   BIGINT NOT NULL,
        request_id    TEXT,
        client_addr   TEXT,
        statement     TEXT,
        prev_hash     TEXT NOT NULL,
        hash          TEXT NOT NULL
    );
    CREATE INDEX IF NOT EXISTS audit_events_at ON audit_events (at);
"#;

/// One row's values as text or numbers, in [`COLUMNS`]'s order, for either store's parameters.
pub(crate) enum Value {
    Int(Option<i64>),
    Text(Option<String>),
}

/// The row of `entry` chained after `prev`, as parameters.
pub(crate) fn row_values(id: i64, prev: &str, entry: &AuditEntry) -> Result<(Vec<Value>, String)> {
    let own = hash(prev, id, entry)?;
    let json = |v: &Vec<String>| serde_json::to_string(v).unwrap_or_else(|_| "[]".into());
    let opt = |v: &Option<String>| Value::Text(v.clone());
    let values = vec![
        Value::Int(Some(id)),
        Value::Text(Some(entry.at.clone())),
        opt(&entry.subject_id),
        opt(&entry.subject_name),
        Value::Text(Some(entry.front.as_str().to_string())),
        Value::Text(Some(entry.action.clone())),
        opt(&entry.layer),
        opt(&entry.domain),
        opt(&entry.dataset),
        Value::Int(entry.version),
        Value::Int(entry.commit),
        Value::Text(Some(json(&entry.columns))),
        Value::Text(Some(json(&entry.policies))),
        Value::Int(entry.rows.map(|n| n as i64)),
        Value::Int(entry.bytes.map(|n| n as i64)),
        Value::Int(Some(i64::from(entry.status))),
        Value::Int(Some(entry.duration_ms as i64)),
        opt(&entry.request_id),
        opt(&entry.client_addr),
        opt(&entry.statement),
        Value::Text(Some(prev.to_string())),
        Value::Text(Some(own.clone())),
    ];
    Ok((values, own))
}

/// A stored row back from its columns in [`COLUMNS`]'s order, as either store reads them:
/// `text(i)` and `int(i)` give column `i`. The one place that knows which column is which.
pub(crate) fn record_from(
    text: impl Fn(usize) -> Result<Option<String>>,
    int: impl Fn(usize) -> Result<Option<i64>>,
) -> Result<AuditRecord> {
    let bad = || Error::internal("an audit row of an unexpected shape");
    let list = |i: usize| -> Result<Vec<String>> {
        serde_json::from_str(text(i)?.as_deref().unwrap_or("[]")).map_err(|_| bad())
    };
    let required = |i: usize| text(i)?.ok_or_else(bad);
    Ok(AuditRecord {
        id: int(0)?.ok_or_else(bad)?,
        entry: AuditEntry {
            at: required(1)?,
            subject_id: text(2)?,
            subject_name: text(3)?,
            front: Front::parse(&required(4)?).ok_or_else(bad)?,
            action: required(5)?,
            layer: text(6)?,
            domain: text(7)?,
            dataset: text(8)?,
            version: int(9)?,
            commit: int(10)?,
            columns: list(11)?,
            policies: list(12)?,
            rows: int(13)?.map(|n| n as u64),
            bytes: int(14)?.map(|n| n as u64),
            status: int(15)?
                .and_then(|s| u16::try_from(s).ok())
                .ok_or_else(bad)?,
            duration_ms: int(16)?.map_or(0, |n| n as u64),
            request_id: text(17)?,
            client_addr: text(18)?,
            statement: text(19)?,
        },
        prev_hash: required(20)?,
        hash: required(21)?,
    })
}

/// The WHERE clause and its text parameters for `filter`; `mark(n)` writes the n-th placeholder
/// (1-based). Numbers are compared as text-free casts by the caller's SQL (`id > ...`).
pub(crate) fn where_clause(
    filter: &AuditFilter,
    mark: impl Fn(usize) -> String,
) -> (String, Vec<String>, Option<i64>) {
    let mut parts = Vec::new();
    let mut params = Vec::new();
    let mut text = |column: &str, op: &str, value: &Option<String>| {
        if let Some(v) = value {
            params.push(v.clone());
            parts.push(format!("{column} {op} {}", mark(params.len())));
        }
    };
    text("subject_id", "=", &filter.subject_id);
    text(
        "lower(layer)",
        "=",
        &filter.layer.as_ref().map(|s| s.to_lowercase()),
    );
    text(
        "lower(domain)",
        "=",
        &filter.domain.as_ref().map(|s| s.to_lowercase()),
    );
    text(
        "lower(dataset)",
        "=",
        &filter.dataset.as_ref().map(|s| s.to_lowercase()),
    );
    text("action", "=", &filter.action);
    text("front", "=", &filter.front.map(|f| f.as_str().to_string()));
    text("at", ">=", &filter.since);
    text("at", "<", &filter.until);
    // The cursor is a number: the caller binds it after the texts.
    if filter.after.is_some() {
        parts.push(format!("id > {}", mark(params.len() + 1)));
    }
    let clause = if parts.is_empty() {
        String::new()
    } else {
        format!("WHERE {}", parts.join(" AND "))
    };
    (clause, params, filter.after)
}

/// The SQLite store: a file of its own, one connection (the writer thread and the readers
/// take turns; reads are short pages).
pub struct SqliteAudit {
    conn: Mutex<Connection>,
    /// The `synchronous` setting of its commits (the catalog's durability).
    synchronous: &'static str,
    /// Whether the connection is set for a lazy commit now (set only when it changes).
    lazy: std::sync::atomic::AtomicBool,
}

impl SqliteAudit {
    /// Opens (creating if needed) the log at `file`, its commits synced as `durability` says.
    pub fn open(file: &Path, durability: crate::storage::Durability) -> Result<SqliteAudit> {
        let at = || format!("opening the audit log {}", file.display());
        let conn = Connection::open(file).map_err(|e| Error::from(e).context(at()))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        // FULL as the catalog: an answered request's row survives a power cut.
        let synchronous = durability.sqlite_synchronous();
        conn.pragma_update(None, "synchronous", synchronous)?;
        conn.busy_timeout(std::time::Duration::from_secs(30))?;
        conn.execute_batch(&format!("{TABLE}{PENDING_TABLE}"))
            .map_err(|e| Error::from(e).context(at()))?;
        Ok(SqliteAudit {
            conn: Mutex::new(conn),
            synchronous,
            lazy: false.into(),
        })
    }

    /// A copy of the log as one committed state (SQLite's online backup), fsynced, at `dest`:
    /// what a backup holds beside the catalog.
    pub fn copy_to(&self, dest: &Path) -> Result<()> {
        crate::storage::remove_file_if_exists(dest)?;
        let mut copy = Connection::open(dest)?;
        self.with(|source| {
            rusqlite::backup::Backup::new(source, &mut copy)?.step(-1)?;
            Ok(())
        })?;
        copy.pragma_update(None, "journal_mode", "DELETE")?;
        drop(copy);
        std::fs::File::open(dest)?.sync_all()?;
        Ok(())
    }

    /// `synchronous` as a lazy commit or the others need it, changed only when it differs.
    fn set_lazy(&self, conn: &Connection, lazy: bool) -> Result<()> {
        use std::sync::atomic::Ordering;
        if self.lazy.load(Ordering::Relaxed) != lazy {
            conn.pragma_update(
                None,
                "synchronous",
                if lazy { "NORMAL" } else { self.synchronous },
            )?;
            self.lazy.store(lazy, Ordering::Relaxed);
        }
        Ok(())
    }

    fn with<R>(&self, f: impl FnOnce(&mut Connection) -> Result<R>) -> Result<R> {
        let mut conn = self
            .conn
            .lock()
            .map_err(|_| Error::internal("audit log lock poisoned by an earlier panic"))?;
        f(&mut conn)
    }

    fn read_rows(
        conn: &Connection,
        sql: &str,
        params: Vec<rusqlite::types::Value>,
    ) -> Result<Vec<AuditRecord>> {
        let mut stmt = conn.prepare_cached(sql)?;
        let mut rows = stmt.query(params_from_iter(params))?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            let text = |i: usize| Ok(r.get::<_, Option<String>>(i)?);
            let int = |i: usize| Ok(r.get::<_, Option<i64>>(i)?);
            out.push(record_from(text, int)?);
        }
        Ok(out)
    }
}

fn sqlite_value(v: Value) -> rusqlite::types::Value {
    use rusqlite::types::Value as V;
    match v {
        Value::Int(Some(i)) => V::Integer(i),
        Value::Text(Some(t)) => V::Text(t),
        Value::Int(None) | Value::Text(None) => V::Null,
    }
}

/// Upserts an opening (a later version of the same request's opening replaces the earlier).
pub(crate) const UPSERT_OPENING: &str = "INSERT INTO audit_pending (key, opened_at, entry_json) \
    VALUES ({1}, {2}, {3}) ON CONFLICT (key) DO UPDATE \
    SET opened_at = excluded.opened_at, entry_json = excluded.entry_json";

/// `sql` with its `{n}` marks written as a store writes its n-th placeholder.
pub(crate) fn placed(sql: &str, mark: impl Fn(usize) -> String) -> String {
    (1..=3).fold(sql.to_string(), |s, n| {
        s.replace(&format!("{{{n}}}"), &mark(n))
    })
}

impl AuditStore for SqliteAudit {
    fn write(&self, batch: &Batch) -> Result<()> {
        self.with(|conn| {
            // WAL with NORMAL: the commit is in the log file, synced by the next FULL commit
            // (the same file) or by `sync`.
            self.set_lazy(conn, batch.lazy)?;
            let tx = conn.transaction()?;
            {
                let mut open = tx.prepare_cached(&placed(UPSERT_OPENING, |n| format!("?{n}")))?;
                for o in &batch.opened {
                    open.execute((&o.key, &o.entry.at, entry_json(&o.entry)?))?;
                }
            }
            if !batch.rows.is_empty() {
                let (mut id, mut prev): (i64, String) = tx
                    .query_row(
                        "SELECT id, hash FROM audit_events ORDER BY id DESC LIMIT 1",
                        [],
                        |r| Ok((r.get(0)?, r.get(1)?)),
                    )
                    .or_else(|e| match e {
                        rusqlite::Error::QueryReturnedNoRows => Ok((0, GENESIS_HASH.to_string())),
                        e => Err(e),
                    })?;
                let marks = vec!["?"; 22].join(", ");
                let mut insert = tx.prepare_cached(&format!(
                    "INSERT INTO audit_events ({COLUMNS}) VALUES ({marks})"
                ))?;
                let mut close = tx.prepare_cached("DELETE FROM audit_pending WHERE key = ?1")?;
                for row in &batch.rows {
                    let closed = match &row.closes {
                        Some(key) => close.execute([key])?,
                        None => 0,
                    };
                    if !row.appended(closed > 0) {
                        continue;
                    }
                    id += 1;
                    let (values, own) = row_values(id, &prev, &row.entry)?;
                    insert.execute(params_from_iter(values.into_iter().map(sqlite_value)))?;
                    prev = own;
                }
            }
            tx.commit()?;
            Ok(())
        })
    }

    fn pending(&self, before: Option<&str>) -> Result<Vec<Opened>> {
        self.with(|conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT key, entry_json FROM audit_pending \
                 WHERE ?1 IS NULL OR opened_at < ?1 ORDER BY opened_at, key",
            )?;
            let rows = stmt.query_map([before], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
            })?;
            let mut out = Vec::new();
            for row in rows {
                let (key, json) = row?;
                out.push(Opened {
                    key,
                    entry: entry_from_json(&json)?,
                });
            }
            Ok(out)
        })
    }

    fn sync(&self) -> Result<()> {
        // A checkpoint syncs the WAL before copying it into the database (and syncs that).
        self.with(|conn| {
            self.set_lazy(conn, false)?;
            conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))?;
            Ok(())
        })
    }

    fn page(&self, filter: &AuditFilter) -> Result<Vec<AuditRecord>> {
        let (clause, texts, after) = where_clause(filter, |n| format!("?{n}"));
        let mut params: Vec<rusqlite::types::Value> = texts
            .into_iter()
            .map(rusqlite::types::Value::Text)
            .collect();
        if let Some(a) = after {
            params.push(rusqlite::types::Value::Integer(a));
        }
        let sql = format!(
            "SELECT {COLUMNS} FROM audit_events {clause} ORDER BY id LIMIT {}",
            filter.limit
        );
        self.with(|conn| SqliteAudit::read_rows(conn, &sql, params))
    }

    fn chain_from(&self, after: i64, limit: usize) -> Result<Vec<AuditRecord>> {
        let sql =
            format!("SELECT {COLUMNS} FROM audit_events WHERE id > ?1 ORDER BY id LIMIT {limit}");
        self.with(|conn| {
            SqliteAudit::read_rows(conn, &sql, vec![rusqlite::types::Value::Integer(after)])
        })
    }

    fn prune_before(&self, before: &str) -> Result<u64> {
        self.with(|conn| {
            // The newest row stays whatever its age: the next append chains to it.
            let n = conn.execute(
                "DELETE FROM audit_events WHERE at < ?1
                 AND id < (SELECT max(id) FROM audit_events)",
                [before],
            )?;
            Ok(n as u64)
        })
    }
}
