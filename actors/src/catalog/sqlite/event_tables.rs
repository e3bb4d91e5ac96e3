//! The SQLite outbox's tables and the triggers that write it (migration 19; see `events.rs`).
//! [`now_text`](crate::catalog::now_text)'s format is written in SQL here, so trigger-written
//! and code-written times compare as texts.

/// The time as `catalog::now_text` writes it, in SQL.
macro_rules! now_sql {
    () => {
        "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"
    };
}

/// A dataset's names and sensitivity by id, as the triggers copy them into the event (the event
/// outlives the dataset).
macro_rules! dataset_of {
    ($id:expr) => {
        concat!(
            "SELECT layer, domain, dataset, sensitivity FROM datasets WHERE id = ",
            $id
        )
    };
}

/// Migration 19: the outbox, its triggers, webhooks and their deliveries.
pub(super) const TABLES: &str = concat!(
    r#"
    CREATE TABLE events (
        id           INTEGER PRIMARY KEY AUTOINCREMENT,
        at           TEXT NOT NULL,
        type         TEXT NOT NULL,
        layer        TEXT,
        domain       TEXT,
        dataset      TEXT,
        sensitivity  TEXT,
        version      INTEGER,
        commit_no    INTEGER,
        operation    TEXT,
        subject      TEXT,
        rows_added   INTEGER,
        rows_removed INTEGER,
        job_id       TEXT,
        about        TEXT,
        raw_filename TEXT
    );
    CREATE TRIGGER events_committed AFTER INSERT ON commits
        WHEN NEW.operation NOT IN ('COMPACT', 'BASELINE')
    BEGIN
        INSERT INTO events (at, type, layer, domain, dataset, sensitivity, version, commit_no,
                            operation, subject, rows_added, rows_removed, raw_filename)
        SELECT "#,
    now_sql!(),
    r#",
               CASE NEW.operation WHEN 'ROLLBACK' THEN 'dataset.rolled_back'
                                  ELSE 'dataset.committed' END,
               d.layer, d.domain, d.dataset, d.sensitivity, NEW.version, NEW.commit_no,
               NEW.operation, NEW.subject, NEW.rows_added, NEW.rows_removed, NEW.raw_filename
        FROM ("#,
    dataset_of!("NEW.dataset_id"),
    r#") AS d;
    END;
    CREATE TRIGGER events_erased AFTER UPDATE OF operation ON commits
        WHEN NEW.operation = 'ERASE' AND OLD.operation <> 'ERASE'
    BEGIN
        INSERT INTO events (at, type, layer, domain, dataset, sensitivity, version, commit_no,
                            operation, subject, rows_added, rows_removed, raw_filename)
        SELECT "#,
    now_sql!(),
    r#", 'dataset.erased',
               d.layer, d.domain, d.dataset, d.sensitivity, NEW.version, NEW.commit_no,
               NEW.operation, NEW.subject, NEW.rows_added, NEW.rows_removed, NEW.raw_filename
        FROM ("#,
    dataset_of!("NEW.dataset_id"),
    r#") AS d;
    END;
    CREATE TRIGGER events_schema_created AFTER INSERT ON schema_versions
    BEGIN
        INSERT INTO events (at, type, layer, domain, dataset, sensitivity, version)
        SELECT "#,
    now_sql!(),
    r#",
               CASE NEW.version WHEN 1 THEN 'schema.created' ELSE 'schema.updated' END,
               d.layer, d.domain, d.dataset, d.sensitivity, NEW.version
        FROM ("#,
    dataset_of!("NEW.dataset_id"),
    r#") AS d;
    END;
    CREATE TRIGGER events_schema_updated AFTER UPDATE OF schema_json ON schema_versions
    BEGIN
        INSERT INTO events (at, type, layer, domain, dataset, sensitivity, version)
        SELECT "#,
    now_sql!(),
    r#", 'schema.updated',
               d.layer, d.domain, d.dataset, d.sensitivity, NEW.version
        FROM ("#,
    dataset_of!("NEW.dataset_id"),
    r#") AS d;
    END;
    CREATE TRIGGER events_dataset_deleted AFTER DELETE ON datasets
    BEGIN
        INSERT INTO events (at, type, layer, domain, dataset, sensitivity)
        VALUES ("#,
    now_sql!(),
    r#", 'dataset.deleted', OLD.layer, OLD.domain, OLD.dataset, OLD.sensitivity);
    END;
    CREATE TRIGGER events_upload_ended AFTER UPDATE OF status ON jobs
        WHEN NEW.kind = 'UPLOAD' AND OLD.status = 'IN PROGRESS'
         AND (NEW.status = 'FAILED' OR (NEW.status = 'SUCCESS' AND NEW.quarantine_url IS NOT NULL))
    BEGIN
        INSERT INTO events (at, type, layer, domain, dataset, sensitivity, version, subject,
                            rows_removed, job_id, raw_filename)
        SELECT "#,
    now_sql!(),
    r#",
               CASE NEW.status WHEN 'FAILED' THEN 'upload.rejected' ELSE 'upload.quarantined' END,
               NEW.layer, NEW.domain, NEW.dataset,
               (SELECT sensitivity FROM datasets
                 WHERE layer = NEW.layer AND domain = NEW.domain
                   AND dataset_key = lower(NEW.dataset)),
               NEW.version, NEW.subject_id, NEW.rows_rejected, NEW.job_id, NEW.raw_filename;
    END;
    CREATE TRIGGER events_policy_set AFTER INSERT ON dataset_policies
    BEGIN
        INSERT INTO events (at, type, layer, domain, dataset, sensitivity, version, operation)
        SELECT "#,
    now_sql!(),
    r#", 'policy.changed',
               d.layer, d.domain, d.dataset, d.sensitivity, NEW.version, 'SET'
        FROM ("#,
    dataset_of!("NEW.dataset_id"),
    r#") AS d;
    END;
    CREATE TRIGGER events_policy_replaced AFTER UPDATE ON dataset_policies
    BEGIN
        INSERT INTO events (at, type, layer, domain, dataset, sensitivity, version, operation)
        SELECT "#,
    now_sql!(),
    r#", 'policy.changed',
               d.layer, d.domain, d.dataset, d.sensitivity, NEW.version, 'SET'
        FROM ("#,
    dataset_of!("NEW.dataset_id"),
    r#") AS d;
    END;
    -- A policy going with its dataset (cascade) is the dataset's deletion, not a policy change:
    -- the dataset row is already gone then, and the SELECT finds nothing.
    CREATE TRIGGER events_policy_removed AFTER DELETE ON dataset_policies
    BEGIN
        INSERT INTO events (at, type, layer, domain, dataset, sensitivity, version, operation)
        SELECT "#,
    now_sql!(),
    r#", 'policy.changed',
               d.layer, d.domain, d.dataset, d.sensitivity, OLD.version, 'REMOVED'
        FROM ("#,
    dataset_of!("OLD.dataset_id"),
    r#") AS d;
    END;
    CREATE TABLE webhooks (
        id          TEXT PRIMARY KEY,
        url         TEXT NOT NULL,
        events      TEXT NOT NULL,
        datasets    TEXT NOT NULL,
        secret      TEXT NOT NULL,
        created_by  TEXT NOT NULL,
        created_at  TEXT NOT NULL,
        after_event INTEGER NOT NULL
    );
    CREATE TABLE webhook_deliveries (
        webhook_id    TEXT NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
        event_id      INTEGER NOT NULL,
        state         TEXT NOT NULL CHECK (state IN ('PENDING', 'DELIVERED', 'DEAD')),
        attempts      INTEGER NOT NULL DEFAULT 0,
        next_at       INTEGER NOT NULL,
        claimed_until INTEGER NOT NULL DEFAULT 0,
        last_status   INTEGER,
        last_error    TEXT,
        first_at      INTEGER,
        done_at       TEXT,
        PRIMARY KEY (webhook_id, event_id)
    );
    CREATE INDEX deliveries_due ON webhook_deliveries (next_at) WHERE state = 'PENDING';
    -- How far the fan-out (events to deliveries) has gone.
    CREATE TABLE event_fan_out (
        id   INTEGER PRIMARY KEY CHECK (id = 1),
        done INTEGER NOT NULL
    );
    INSERT INTO event_fan_out (id, done) VALUES (1, 0);
    "#
);
