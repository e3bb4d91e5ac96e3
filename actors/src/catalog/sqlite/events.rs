//! The change events' outbox and webhook deliveries in SQLite (see
//! [`crate::catalog::interface::EventsCatalog`]).
//!
//! Events are written by triggers on the tables that change, so every write path (the service,
//! `rapid-rs admin`, one added later) records its event in its own transaction: an event exists
//! exactly when its change does. A subject's permissions change in several row statements, so
//! those write their one event explicitly ([`permission_changed`]). SQLite has one writer, so ids
//! are in commit order and an event's feed position is its id.

use rusqlite::{params, Connection, OptionalExtension, Row};

use super::SqliteCatalog;
use crate::catalog::now_text;
use crate::catalog::{DeliveryRow, DeliveryState, EventRow, EventsCatalog, WebhookRow};
use crate::error::Result;

/// Records that `subject_id`'s permissions changed (created, replaced, revoked, deleted), in the
/// caller's transaction.
pub(super) fn permission_changed(c: &Connection, subject_id: &str) -> Result<()> {
    c.prepare_cached(
        "INSERT INTO events (at, type, about)
         VALUES (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), 'permission.changed', ?1)",
    )?
    .execute([subject_id])?;
    Ok(())
}

const EVENT_COLUMNS: &str = "id, id, at, type, layer, domain, dataset, sensitivity, version, \
     commit_no, operation, subject, rows_added, rows_removed, job_id, about, raw_filename";

fn event_row(r: &Row<'_>) -> rusqlite::Result<EventRow> {
    Ok(EventRow {
        id: r.get(0)?,
        position: r.get(1)?,
        at: r.get(2)?,
        kind: r.get(3)?,
        layer: r.get(4)?,
        domain: r.get(5)?,
        dataset: r.get(6)?,
        sensitivity: r.get(7)?,
        version: r.get(8)?,
        commit: r.get(9)?,
        operation: r.get(10)?,
        subject: r.get(11)?,
        rows_added: r.get(12)?,
        rows_removed: r.get(13)?,
        job_id: r.get(14)?,
        about: r.get(15)?,
        raw_filename: r.get(16)?,
    })
}

const WEBHOOK_COLUMNS: &str =
    "id, url, events, datasets, secret, created_by, created_at, after_event";

fn webhook_row(r: &Row<'_>) -> rusqlite::Result<WebhookRow> {
    Ok(WebhookRow {
        id: r.get(0)?,
        url: r.get(1)?,
        events: r.get(2)?,
        datasets: r.get(3)?,
        secret: r.get(4)?,
        created_by: r.get(5)?,
        created_at: r.get(6)?,
        after_event: r.get(7)?,
    })
}

const DELIVERY_COLUMNS: &str =
    "webhook_id, event_id, state, attempts, next_at, last_status, last_error, first_at, done_at";

fn delivery_row(r: &Row<'_>) -> rusqlite::Result<DeliveryRow> {
    let state: String = r.get(2)?;
    Ok(DeliveryRow {
        webhook_id: r.get(0)?,
        event_id: r.get(1)?,
        state: DeliveryState::parse(&state),
        attempts: r.get(3)?,
        next_at: r.get(4)?,
        last_status: r.get(5)?,
        last_error: r.get(6)?,
        first_at: r.get(7)?,
        done_at: r.get(8)?,
    })
}

fn events_from(c: &Connection, after: i64, limit: usize) -> Result<Vec<EventRow>> {
    let sql = format!("SELECT {EVENT_COLUMNS} FROM events WHERE id > ?1 ORDER BY id LIMIT ?2");
    let rows = c
        .prepare_cached(&sql)?
        .query_map(params![after, limit as i64], event_row)?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rows)
}

impl EventsCatalog for SqliteCatalog {
    fn events_after(&self, after: i64, limit: usize) -> Result<Vec<EventRow>> {
        self.with(|c| events_from(c, after, limit))
    }

    fn event(&self, id: i64) -> Result<Option<EventRow>> {
        self.with(|c| {
            let sql = format!("SELECT {EVENT_COLUMNS} FROM events WHERE id = ?1");
            Ok(c.prepare_cached(&sql)?
                .query_row([id], event_row)
                .optional()?)
        })
    }

    fn last_event_position(&self) -> Result<i64> {
        self.with(|c| {
            Ok(c.prepare_cached("SELECT coalesce(max(id), 0) FROM events")?
                .query_row([], |r| r.get(0))?)
        })
    }

    fn sequence_events(&self) -> Result<usize> {
        Ok(0) // ids are positions: one writer commits in id order
    }

    fn create_webhook(&self, hook: &WebhookRow) -> Result<i64> {
        self.transaction(|tx| {
            let after: i64 =
                tx.query_row("SELECT coalesce(max(id), 0) FROM events", [], |r| r.get(0))?;
            tx.execute(
                "INSERT INTO webhooks (id, url, events, datasets, secret, created_by, created_at,
                                       after_event)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![
                    hook.id,
                    hook.url,
                    hook.events,
                    hook.datasets,
                    hook.secret,
                    hook.created_by,
                    now_text(),
                    after
                ],
            )?;
            Ok(after)
        })
    }

    fn webhooks(&self) -> Result<Vec<WebhookRow>> {
        self.with(|c| {
            let sql = format!("SELECT {WEBHOOK_COLUMNS} FROM webhooks ORDER BY created_at, id");
            let rows = c
                .prepare_cached(&sql)?
                .query_map([], webhook_row)?
                .collect::<Result<Vec<_>, _>>()?;
            Ok(rows)
        })
    }

    fn delete_webhook(&self, id: &str) -> Result<bool> {
        self.with(|c| Ok(c.execute("DELETE FROM webhooks WHERE id = ?1", [id])? > 0))
    }

    fn fan_out(
        &self,
        limit: usize,
        now_ms: i64,
        wanted: &mut dyn FnMut(&EventRow) -> Vec<String>,
    ) -> Result<usize> {
        self.transaction(|tx| {
            let done: i64 =
                tx.query_row("SELECT done FROM event_fan_out WHERE id = 1", [], |r| {
                    r.get(0)
                })?;
            let events = events_from(tx, done, limit)?;
            let mut insert = tx.prepare_cached(
                "INSERT OR IGNORE INTO webhook_deliveries (webhook_id, event_id, state, next_at)
                 VALUES (?1, ?2, 'PENDING', ?3)",
            )?;
            for event in &events {
                for hook in wanted(event) {
                    insert.execute(params![hook, event.id, now_ms])?;
                }
            }
            if let Some(last) = events.last() {
                tx.execute(
                    "UPDATE event_fan_out SET done = ?1 WHERE id = 1",
                    [last.position],
                )?;
            }
            Ok(events.len())
        })
    }

    fn claim_deliveries(
        &self,
        now_ms: i64,
        lease_ms: i64,
        limit: usize,
    ) -> Result<Vec<DeliveryRow>> {
        self.transaction(|tx| {
            let sql = format!(
                "UPDATE webhook_deliveries SET claimed_until = ?1
                 WHERE (webhook_id, event_id) IN (
                     SELECT webhook_id, event_id FROM webhook_deliveries
                     WHERE state = 'PENDING' AND next_at <= ?2 AND claimed_until <= ?2
                     ORDER BY next_at, event_id LIMIT ?3)
                 RETURNING {DELIVERY_COLUMNS}"
            );
            let rows = tx
                .prepare_cached(&sql)?
                .query_map(
                    params![now_ms + lease_ms, now_ms, limit as i64],
                    delivery_row,
                )?
                .collect::<Result<Vec<_>, _>>()?;
            Ok(rows)
        })
    }

    fn release_claims(&self) -> Result<usize> {
        self.with(|c| {
            Ok(c.execute(
                "UPDATE webhook_deliveries SET claimed_until = 0 WHERE claimed_until > 0",
                [],
            )?)
        })
    }

    fn finish_delivery(&self, outcome: &DeliveryRow) -> Result<()> {
        self.with(|c| {
            c.prepare_cached(
                "UPDATE webhook_deliveries
                 SET state = ?3, attempts = ?4, next_at = ?5, claimed_until = 0, last_status = ?6,
                     last_error = ?7, first_at = ?8, done_at = ?9
                 WHERE webhook_id = ?1 AND event_id = ?2",
            )?
            .execute(params![
                outcome.webhook_id,
                outcome.event_id,
                outcome.state.as_str(),
                outcome.attempts,
                outcome.next_at,
                outcome.last_status,
                outcome.last_error,
                outcome.first_at,
                outcome.done_at
            ])?;
            Ok(())
        })
    }

    fn deliveries(&self, webhook_id: &str, limit: usize) -> Result<Vec<DeliveryRow>> {
        self.with(|c| {
            let sql = format!(
                "SELECT {DELIVERY_COLUMNS} FROM webhook_deliveries WHERE webhook_id = ?1
                 ORDER BY event_id DESC LIMIT ?2"
            );
            let rows = c
                .prepare_cached(&sql)?
                .query_map(params![webhook_id, limit as i64], delivery_row)?
                .collect::<Result<Vec<_>, _>>()?;
            Ok(rows)
        })
    }

    fn redeliver(&self, webhook_id: &str, event_id: i64, now_ms: i64) -> Result<bool> {
        self.with(|c| {
            let n = c.execute(
                "INSERT INTO webhook_deliveries (webhook_id, event_id, state, next_at)
                 SELECT ?1, id, 'PENDING', ?3 FROM events WHERE id = ?2
                 ON CONFLICT (webhook_id, event_id) DO UPDATE
                 SET state = 'PENDING', next_at = ?3, claimed_until = 0, first_at = NULL,
                     done_at = NULL",
                params![webhook_id, event_id, now_ms],
            )?;
            Ok(n > 0)
        })
    }
}
