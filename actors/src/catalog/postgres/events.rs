//! The change events' outbox and webhook deliveries in PostgreSQL (see
//! [`crate::catalog::EventsCatalog`]; the SQLite side says why triggers write the events).
//!
//! Several nodes commit at once, so ids (given at insert) are not in commit order: a reader could
//! see id 7 committed while id 6 is still in flight, and a cursor at 7 would skip 6. The feed is
//! therefore ordered by `position`, given after commit by [`EventsCatalog::sequence_events`]
//! under an advisory lock, to every event visible then, in id order. Commits of one dataset are
//! serialised, so one dataset's events keep their commit order.

use tokio_postgres::Row;

use super::pool::Db;
use super::PostgresCatalog;
use crate::catalog::now_text;
use crate::catalog::{DeliveryRow, DeliveryState, EventRow, EventsCatalog, WebhookRow};
use crate::error::Result;

/// The advisory lock sequencing holds ("events").
const SEQUENCE_LOCK: i64 = 0x0065_7665_6e74;

/// Records that `subject_id`'s permissions changed, in the caller's transaction.
pub(super) fn permission_changed(db: &Db<'_>, subject_id: &str) -> Result<()> {
    db.execute(
        "INSERT INTO events (at, type, about) VALUES ($1, 'permission.changed', $2)",
        &[&now_text(), &subject_id],
    )?;
    Ok(())
}

const EVENT_COLUMNS: &str = "id, position, at, type, layer, domain, dataset, sensitivity, \
     version, commit_no, operation, subject, rows_added, rows_removed, job_id, about, \
     raw_filename";

fn event_row(r: &Row) -> Result<EventRow> {
    Ok(EventRow {
        id: r.try_get(0)?,
        position: r.try_get::<_, Option<i64>>(1)?.unwrap_or(0),
        at: r.try_get(2)?,
        kind: r.try_get(3)?,
        layer: r.try_get(4)?,
        domain: r.try_get(5)?,
        dataset: r.try_get(6)?,
        sensitivity: r.try_get(7)?,
        version: r.try_get(8)?,
        commit: r.try_get(9)?,
        operation: r.try_get(10)?,
        subject: r.try_get(11)?,
        rows_added: r.try_get(12)?,
        rows_removed: r.try_get(13)?,
        job_id: r.try_get(14)?,
        about: r.try_get(15)?,
        raw_filename: r.try_get(16)?,
    })
}

const WEBHOOK_COLUMNS: &str =
    "id, url, events, datasets, secret, created_by, created_at, after_event";

fn webhook_row(r: &Row) -> Result<WebhookRow> {
    Ok(WebhookRow {
        id: r.try_get(0)?,
        url: r.try_get(1)?,
        events: r.try_get(2)?,
        datasets: r.try_get(3)?,
        secret: r.try_get(4)?,
        created_by: r.try_get(5)?,
        created_at: r.try_get(6)?,
        after_event: r.try_get(7)?,
    })
}

const DELIVERY_COLUMNS: &str =
    "webhook_id, event_id, state, attempts, next_at, last_status, last_error, first_at, done_at";

fn delivery_row(r: &Row) -> Result<DeliveryRow> {
    let state: String = r.try_get(2)?;
    Ok(DeliveryRow {
        webhook_id: r.try_get(0)?,
        event_id: r.try_get(1)?,
        state: DeliveryState::parse(&state),
        attempts: r.try_get(3)?,
        next_at: r.try_get(4)?,
        last_status: r.try_get(5)?,
        last_error: r.try_get(6)?,
        first_at: r.try_get(7)?,
        done_at: r.try_get(8)?,
    })
}

/// Positions the events committed but not positioned yet, in id order, under the lock.
fn sequence(db: &Db<'_>) -> Result<usize> {
    db.execute("SELECT pg_advisory_xact_lock($1)", &[&SEQUENCE_LOCK])?;
    let n = db.execute(
        "UPDATE events e SET position = s.position
         FROM (SELECT id, (SELECT coalesce(max(position), 0) FROM events)
                          + row_number() OVER (ORDER BY id) AS position
               FROM events WHERE position IS NULL ORDER BY id LIMIT 10000) s
         WHERE e.id = s.id",
        &[],
    )?;
    Ok(n as usize)
}

fn events_from(db: &Db<'_>, after: i64, limit: usize) -> Result<Vec<EventRow>> {
    let sql = format!(
        "SELECT {EVENT_COLUMNS} FROM events WHERE position > $1 ORDER BY position LIMIT $2"
    );
    db.query(&sql, &[&after, &(limit as i64)])?
        .iter()
        .map(event_row)
        .collect()
}

impl EventsCatalog for PostgresCatalog {
    fn events_after(&self, after: i64, limit: usize) -> Result<Vec<EventRow>> {
        self.with(|db| events_from(db, after, limit))
    }

    fn event(&self, id: i64) -> Result<Option<EventRow>> {
        self.with(|db| {
            let sql = format!("SELECT {EVENT_COLUMNS} FROM events WHERE id = $1");
            db.query_opt(&sql, &[&id])?
                .as_ref()
                .map(event_row)
                .transpose()
        })
    }

    fn last_event_position(&self) -> Result<i64> {
        self.with(|db| {
            Ok(db
                .query_one("SELECT coalesce(max(position), 0)::BIGINT FROM events", &[])?
                .try_get(0)?)
        })
    }

    fn sequence_events(&self) -> Result<usize> {
        self.transaction(sequence)
    }

    fn create_webhook(&self, hook: &WebhookRow) -> Result<i64> {
        self.transaction(|db| {
            // Events committed before it are positioned first, so it is owed none of them.
            sequence(db)?;
            let after: i64 = db
                .query_one("SELECT coalesce(max(position), 0)::BIGINT FROM events", &[])?
                .try_get(0)?;
            db.execute(
                "INSERT INTO webhooks (id, url, events, datasets, secret, created_by, created_at,
                                       after_event)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                &[
                    &hook.id,
                    &hook.url,
                    &hook.events,
                    &hook.datasets,
                    &hook.secret,
                    &hook.created_by,
                    &now_text(),
                    &after,
                ],
            )?;
            Ok(after)
        })
    }

    fn webhooks(&self) -> Result<Vec<WebhookRow>> {
        self.with(|db| {
            let sql = format!("SELECT {WEBHOOK_COLUMNS} FROM webhooks ORDER BY created_at, id");
            db.query(&sql, &[])?.iter().map(webhook_row).collect()
        })
    }

    fn delete_webhook(&self, id: &str) -> Result<bool> {
        self.with(|db| Ok(db.execute("DELETE FROM webhooks WHERE id = $1", &[&id])? > 0))
    }

    fn fan_out(
        &self,
        limit: usize,
        now_ms: i64,
        wanted: &mut dyn FnMut(&EventRow) -> Vec<String>,
    ) -> Result<usize> {
        self.transaction(|db| {
            // The row lock makes nodes fan out one after another.
            let done: i64 = db
                .query_one(
                    "SELECT done FROM event_fan_out WHERE id = 1 FOR UPDATE",
                    &[],
                )?
                .try_get(0)?;
            let events = events_from(db, done, limit)?;
            for event in &events {
                for hook in wanted(event) {
                    db.execute(
                        "INSERT INTO webhook_deliveries (webhook_id, event_id, state, next_at)
                         VALUES ($1, $2, 'PENDING', $3) ON CONFLICT DO NOTHING",
                        &[&hook, &event.id, &now_ms],
                    )? as usize;
                }
            }
            if let Some(last) = events.last() {
                db.execute(
                    "UPDATE event_fan_out SET done = $1 WHERE id = 1",
                    &[&last.position],
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
        self.transaction(|db| {
            let sql = format!(
                "UPDATE webhook_deliveries d SET claimed_until = $1
                 FROM (SELECT webhook_id, event_id FROM webhook_deliveries
                       WHERE state = 'PENDING' AND next_at <= $2 AND claimed_until <= $2
                       ORDER BY next_at, event_id LIMIT $3
                       FOR UPDATE SKIP LOCKED) c
                 WHERE d.webhook_id = c.webhook_id AND d.event_id = c.event_id
                 RETURNING {}",
                DELIVERY_COLUMNS
                    .split(", ")
                    .map(|c| format!("d.{c}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            db.query(&sql, &[&(now_ms + lease_ms), &now_ms, &(limit as i64)])?
                .iter()
                .map(delivery_row)
                .collect()
        })
    }

    fn release_claims(&self) -> Result<usize> {
        self.with(|db| {
            Ok(db.execute(
                "UPDATE webhook_deliveries SET claimed_until = 0 WHERE claimed_until > 0",
                &[],
            )? as usize)
        })
    }

    fn finish_delivery(&self, outcome: &DeliveryRow) -> Result<()> {
        self.with(|db| {
            db.execute(
                "UPDATE webhook_deliveries
                 SET state = $3, attempts = $4, next_at = $5, claimed_until = 0, last_status = $6,
                     last_error = $7, first_at = $8, done_at = $9
                 WHERE webhook_id = $1 AND event_id = $2",
                &[
                    &outcome.webhook_id,
                    &outcome.event_id,
                    &outcome.state.as_str(),
                    &outcome.attempts,
                    &outcome.next_at,
                    &outcome.last_status,
                    &outcome.last_error,
                    &outcome.first_at,
                    &outcome.done_at,
                ],
            )?;
            Ok(())
        })
    }

    fn deliveries(&self, webhook_id: &str, limit: usize) -> Result<Vec<DeliveryRow>> {
        self.with(|db| {
            let sql = format!(
                "SELECT {DELIVERY_COLUMNS} FROM webhook_deliveries WHERE webhook_id = $1
                 ORDER BY event_id DESC LIMIT $2"
            );
            db.query(&sql, &[&webhook_id, &(limit as i64)])?
                .iter()
                .map(delivery_row)
                .collect()
        })
    }

    fn redeliver(&self, webhook_id: &str, event_id: i64, now_ms: i64) -> Result<bool> {
        self.with(|db| {
            let n = db.execute(
                "INSERT INTO webhook_deliveries (webhook_id, event_id, state, next_at)
                 SELECT $1, id, 'PENDING', $3 FROM events WHERE id = $2
                 ON CONFLICT (webhook_id, event_id) DO UPDATE
                 SET state = 'PENDING', next_at = $3, claimed_until = 0, first_at = NULL,
                     done_at = NULL",
                &[&webhook_id, &event_id, &now_ms],
            )?;
            Ok(n > 0)
        })
    }
}
