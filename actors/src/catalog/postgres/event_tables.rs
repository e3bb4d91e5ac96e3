//! The PostgreSQL outbox's tables and the trigger functions that write it (migration 20; see
//! `events.rs`).

/// Migration 20: the outbox, its trigger functions, webhooks and their deliveries.
pub(super) const TABLES: &str = r#"
    CREATE TABLE events (
        id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        position     BIGINT UNIQUE,
        at           TEXT NOT NULL,
        type         TEXT NOT NULL,
        layer        TEXT,
        domain       TEXT,
        dataset      TEXT,
        sensitivity  TEXT,
        version      BIGINT,
        commit_no    BIGINT,
        operation    TEXT,
        subject      TEXT,
        rows_added   BIGINT,
        rows_removed BIGINT,
        job_id       TEXT,
        about        TEXT,
        raw_filename TEXT
    );
    CREATE INDEX events_unsequenced ON events (id) WHERE position IS NULL;
    CREATE FUNCTION event_now() RETURNS TEXT LANGUAGE sql AS $$
        SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
    $$;
    -- The dataset's names and sensitivity are copied: the event outlives the dataset. No row
    -- (a policy going with its deleted dataset) writes no event.
    CREATE FUNCTION dataset_event(kind TEXT, of_dataset BIGINT, of_version BIGINT,
                                  commit_no BIGINT, operation TEXT, subject TEXT,
                                  rows_added BIGINT, rows_removed BIGINT,
                                  raw_filename TEXT) RETURNS void
    LANGUAGE sql AS $$
        INSERT INTO events (at, type, layer, domain, dataset, sensitivity, version, commit_no,
                            operation, subject, rows_added, rows_removed, raw_filename)
        SELECT event_now(), kind, d.layer, d.domain, d.dataset, d.sensitivity, of_version,
               commit_no, operation, subject, rows_added, rows_removed, raw_filename
        FROM datasets d WHERE d.id = of_dataset
    $$;
    CREATE FUNCTION commit_event() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'INSERT' AND NEW.operation NOT IN ('COMPACT', 'BASELINE') THEN
            PERFORM dataset_event(CASE NEW.operation WHEN 'ROLLBACK' THEN 'dataset.rolled_back'
                                                     ELSE 'dataset.committed' END,
                NEW.dataset_id, NEW.version, NEW.commit_no, NEW.operation, NEW.subject,
                NEW.rows_added, NEW.rows_removed, NEW.raw_filename);
        ELSIF TG_OP = 'UPDATE' AND NEW.operation = 'ERASE' AND OLD.operation <> 'ERASE' THEN
            PERFORM dataset_event('dataset.erased', NEW.dataset_id, NEW.version, NEW.commit_no,
                NEW.operation, NEW.subject, NEW.rows_added, NEW.rows_removed, NEW.raw_filename);
        END IF;
        RETURN NULL;
    END $$;
    CREATE TRIGGER events_commits AFTER INSERT OR UPDATE OF operation ON commits
        FOR EACH ROW EXECUTE FUNCTION commit_event();
    CREATE FUNCTION schema_event() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'INSERT' AND NEW.version = 1 THEN
            PERFORM dataset_event('schema.created', NEW.dataset_id, NEW.version,
                                  NULL, NULL, NULL, NULL, NULL, NULL);
        ELSIF TG_OP = 'INSERT' OR NEW.schema_json IS DISTINCT FROM OLD.schema_json THEN
            PERFORM dataset_event('schema.updated', NEW.dataset_id, NEW.version,
                                  NULL, NULL, NULL, NULL, NULL, NULL);
        END IF;
        RETURN NULL;
    END $$;
    CREATE TRIGGER events_schemas AFTER INSERT OR UPDATE OF schema_json ON schema_versions
        FOR EACH ROW EXECUTE FUNCTION schema_event();
    CREATE FUNCTION dataset_deleted_event() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        INSERT INTO events (at, type, layer, domain, dataset, sensitivity)
        VALUES (event_now(), 'dataset.deleted', OLD.layer, OLD.domain, OLD.dataset,
                OLD.sensitivity);
        RETURN NULL;
    END $$;
    CREATE TRIGGER events_datasets AFTER DELETE ON datasets
        FOR EACH ROW EXECUTE FUNCTION dataset_deleted_event();
    CREATE FUNCTION upload_event() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF NEW.kind = 'UPLOAD' AND OLD.status = 'IN PROGRESS'
           AND (NEW.status = 'FAILED'
                OR (NEW.status = 'SUCCESS' AND NEW.quarantine_url IS NOT NULL)) THEN
            INSERT INTO events (at, type, layer, domain, dataset, sensitivity, version, subject,
                                rows_removed, job_id, raw_filename)
            VALUES (event_now(),
                    CASE NEW.status WHEN 'FAILED' THEN 'upload.rejected'
                                    ELSE 'upload.quarantined' END,
                    NEW.layer, NEW.domain, NEW.dataset,
                    (SELECT sensitivity FROM datasets
                      WHERE layer = NEW.layer AND domain = NEW.domain
                        AND dataset_key = lower(NEW.dataset)),
                    NEW.version, NEW.subject_id, NEW.rows_rejected, NEW.job_id, NEW.raw_filename);
        END IF;
        RETURN NULL;
    END $$;
    CREATE TRIGGER events_jobs AFTER UPDATE OF status ON jobs
        FOR EACH ROW EXECUTE FUNCTION upload_event();
    CREATE FUNCTION policy_event() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'DELETE' THEN
            PERFORM dataset_event('policy.changed', OLD.dataset_id, OLD.version,
                                  NULL, 'REMOVED', NULL, NULL, NULL, NULL);
        ELSE
            PERFORM dataset_event('policy.changed', NEW.dataset_id, NEW.version,
                                  NULL, 'SET', NULL, NULL, NULL, NULL);
        END IF;
        RETURN NULL;
    END $$;
    CREATE TRIGGER events_policies AFTER INSERT OR UPDATE OR DELETE ON dataset_policies
        FOR EACH ROW EXECUTE FUNCTION policy_event();
    CREATE TABLE webhooks (
        id          TEXT PRIMARY KEY,
        url         TEXT NOT NULL,
        events      TEXT NOT NULL,
        datasets    TEXT NOT NULL,
        secret      TEXT NOT NULL,
        created_by  TEXT NOT NULL,
        created_at  TEXT NOT NULL,
        after_event BIGINT NOT NULL
    );
    CREATE TABLE webhook_deliveries (
        webhook_id    TEXT NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
        event_id      BIGINT NOT NULL,
        state         TEXT NOT NULL CHECK (state IN ('PENDING', 'DELIVERED', 'DEAD')),
        attempts      BIGINT NOT NULL DEFAULT 0,
        next_at       BIGINT NOT NULL,
        claimed_until BIGINT NOT NULL DEFAULT 0,
        last_status   BIGINT,
        last_error    TEXT,
        first_at      BIGINT,
        done_at       TEXT,
        PRIMARY KEY (webhook_id, event_id)
    );
    CREATE INDEX deliveries_due ON webhook_deliveries (next_at) WHERE state = 'PENDING';
    CREATE TABLE event_fan_out (
        id   INTEGER PRIMARY KEY CHECK (id = 1),
        done BIGINT NOT NULL
    );
    INSERT INTO event_fan_out (id, done) VALUES (1, 0);
"#;
