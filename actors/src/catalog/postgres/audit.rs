//! The audit log's rows in the catalog's database (the store is `crate::audit::store`'s; this is
//! its PostgreSQL side). Appends of every node take one advisory lock, so one chain is kept.

use tokio_postgres::types::ToSql;

use super::PostgresCatalog;
use crate::audit::pending::{entry_from_json, entry_json, Batch, Opened};
use crate::audit::store::{
    placed, record_from, row_values, where_clause, Value, COLUMNS, UPSERT_OPENING,
};
use crate::audit::{AuditFilter, AuditRecord, AuditStore};
use crate::error::Result;

/// Migration 19: the audit log (issue 55).
pub(super) const TABLES: &str = crate::audit::store::TABLE;
/// Migration 22: requests' rows opened before their answers (`crate::audit::pending`).
pub(super) const PENDING: &str = crate::audit::pending::PENDING_TABLE;

/// The advisory lock appends hold: any fixed number no other lock of ours uses ("audit").
const APPEND_LOCK: i64 = 0x0061_7564_6974;

fn read(rows: Vec<tokio_postgres::Row>) -> Result<Vec<AuditRecord>> {
    rows.iter()
        .map(|r| {
            let text = |i: usize| Ok(r.try_get::<_, Option<String>>(i)?);
            // The status column is an INTEGER (int4); the others are BIGINT.
            let int = |i: usize| match i {
                15 => Ok(r.try_get::<_, Option<i32>>(i)?.map(i64::from)),
                _ => Ok(r.try_get::<_, Option<i64>>(i)?),
            };
            record_from(text, int)
        })
        .collect()
}

impl AuditStore for PostgresCatalog {
    fn write(&self, batch: &Batch) -> Result<()> {
        self.transaction(|db| {
            if batch.lazy {
                // Flushed by the server's WAL writer within a fraction of a second.
                db.execute("SET LOCAL synchronous_commit = off", &[])?;
            }
            let open = placed(UPSERT_OPENING, |n| format!("${n}"));
            for o in &batch.opened {
                db.execute(&open, &[&o.key, &o.entry.at, &entry_json(&o.entry)?])?;
            }
            if batch.rows.is_empty() {
                return Ok(());
            }
            db.execute("SELECT pg_advisory_xact_lock($1)", &[&APPEND_LOCK])?;
            let last = db.query_opt(
                "SELECT id, hash FROM audit_events ORDER BY id DESC LIMIT 1",
                &[],
            )?;
            let (mut id, mut prev): (i64, String) = match last {
                Some(r) => (r.try_get(0)?, r.try_get(1)?),
                None => (0, crate::audit::store::GENESIS_HASH.to_string()),
            };
            let marks: Vec<String> = (1..=22).map(|n| format!("${n}")).collect();
            let sql = format!(
                "INSERT INTO audit_events ({COLUMNS}) VALUES ({})",
                marks.join(", ")
            );
            for row in &batch.rows {
                let closed = match &row.closes {
                    Some(key) => db.execute("DELETE FROM audit_pending WHERE key = $1", &[key])?,
                    None => 0,
                };
                if !row.appended(closed > 0) {
                    continue;
                }
                let entry = &row.entry;
                id += 1;
                let (values, own) = row_values(id, &prev, entry)?;
                let status = i32::from(entry.status);
                let boxed: Vec<Box<dyn ToSql + Sync>> = values
                    .into_iter()
                    .enumerate()
                    .map(|(i, v)| -> Box<dyn ToSql + Sync> {
                        match v {
                            // The status column is an INTEGER (int4) in PostgreSQL.
                            _ if i == 15 => Box::new(status),
                            Value::Int(n) => Box::new(n),
                            Value::Text(t) => Box::new(t),
                        }
                    })
                    .collect();
                let params: Vec<&(dyn ToSql + Sync)> = boxed.iter().map(|b| b.as_ref()).collect();
                db.execute(&sql, &params)?;
                prev = own;
            }
            Ok(())
        })
    }

    fn pending(&self, before: Option<&str>) -> Result<Vec<Opened>> {
        self.with(|db| {
            let rows = db.query(
                "SELECT key, entry_json FROM audit_pending \
                 WHERE $1::text IS NULL OR opened_at < $1 ORDER BY opened_at, key",
                &[&before],
            )?;
            rows.iter()
                .map(|r| {
                    Ok(Opened {
                        key: r.try_get(0)?,
                        entry: entry_from_json(&r.try_get::<_, String>(1)?)?,
                    })
                })
                .collect()
        })
    }

    fn sync(&self) -> Result<()> {
        // A lazy commit is on disk once the WAL writer flushes it (wal_writer_delay, 200 ms by
        // default); a synced commit of any session waits for everything before it in the WAL.
        Ok(())
    }

    fn page(&self, filter: &AuditFilter) -> Result<Vec<AuditRecord>> {
        let (clause, texts, after) = where_clause(filter, |n| format!("${n}"));
        let mut params: Vec<&(dyn ToSql + Sync)> =
            texts.iter().map(|t| t as &(dyn ToSql + Sync)).collect();
        if let Some(a) = &after {
            params.push(a);
        }
        let sql = format!(
            "SELECT {COLUMNS} FROM audit_events {clause} ORDER BY id LIMIT {}",
            filter.limit
        );
        self.with(|db| read(db.query(&sql, &params)?))
    }

    fn chain_from(&self, after: i64, limit: usize) -> Result<Vec<AuditRecord>> {
        let sql =
            format!("SELECT {COLUMNS} FROM audit_events WHERE id > $1 ORDER BY id LIMIT {limit}");
        self.with(|db| read(db.query(&sql, &[&after])?))
    }

    fn prune_before(&self, before: &str) -> Result<u64> {
        self.with(|db| {
            db.execute(
                "DELETE FROM audit_events WHERE at < $1
                 AND id < (SELECT max(id) FROM audit_events)",
                &[&before],
            )
        })
    }
}
