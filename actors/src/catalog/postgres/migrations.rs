//! Versioned migrations, tracked in the `catalog_migrations` table. Append new steps; never edit
//! a shipped one. Every node runs them at start-up: under one advisory lock, in one transaction,
//! so two nodes starting at once apply each step once.
//!
//! Text columns that are ordered by are `COLLATE "C"` (byte order, as SQLite compares), so
//! listings come out in the same order whatever the database's locale. `seq` columns stand in for
//! SQLite's `rowid` where the order rows were written in is read back.

use super::pool::Db;
use crate::catalog::now_text;
use crate::error::{Error, Result};

/// The advisory lock key migrations run under (any fixed number no dataset hash is likely to hit).
const MIGRATION_LOCK: i64 = 0x7261_7069_645f_6d67; // "rapid_mg"

const MIGRATIONS: &[&str] = &[
    // 1: the SQLite catalog's schema (its migrations 1-6) in PostgreSQL types. Identity columns
    // never hand out a number twice, so dataset ids are never reused (SQLite's id_sequences).
    r#"
    CREATE TABLE settings (
        key   TEXT PRIMARY KEY,
        value BYTEA NOT NULL
    );
    CREATE TABLE subjects (
        subject_id           TEXT PRIMARY KEY,
        kind                 TEXT NOT NULL CHECK (kind IN ('CLIENT', 'USER')),
        name                 TEXT NOT NULL,
        name_key             TEXT COLLATE "C" NOT NULL,
        email                TEXT,
        secret_digest        BYTEA,
        password_hash        TEXT,
        created_at           TEXT COLLATE "C" NOT NULL,
        must_change_password BOOLEAN NOT NULL DEFAULT FALSE
    );
    CREATE UNIQUE INDEX subjects_by_name ON subjects (kind, name_key);
    CREATE UNIQUE INDEX users_by_email ON subjects (email) WHERE email IS NOT NULL;
    CREATE TABLE subject_permissions (
        seq        BIGINT GENERATED ALWAYS AS IDENTITY,
        subject_id TEXT NOT NULL REFERENCES subjects (subject_id) ON DELETE CASCADE,
        permission TEXT NOT NULL,
        PRIMARY KEY (subject_id, permission)
    );
    CREATE INDEX permissions_by_name ON subject_permissions (permission);
    CREATE TABLE protected_domains (
        domain     TEXT PRIMARY KEY,
        created_at TEXT NOT NULL
    );
    -- dataset keeps the case it was created with; dataset_key (lower case) is what names
    -- collide on and what storage paths use, so `Sales` and `sales` are one dataset.
    CREATE TABLE datasets (
        id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        layer       TEXT COLLATE "C" NOT NULL,
        domain      TEXT COLLATE "C" NOT NULL,
        dataset     TEXT COLLATE "C" NOT NULL,
        dataset_key TEXT COLLATE "C" NOT NULL,
        sensitivity TEXT NOT NULL,
        created_at  TEXT NOT NULL,
        UNIQUE (layer, domain, dataset_key)
    );
    CREATE TABLE schema_versions (
        dataset_id  BIGINT NOT NULL REFERENCES datasets (id) ON DELETE CASCADE,
        version     BIGINT NOT NULL,
        schema_json TEXT NOT NULL,
        created_at  TEXT NOT NULL,
        PRIMARY KEY (dataset_id, version)
    );
    CREATE TABLE jobs (
        seq            BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
        job_id         TEXT PRIMARY KEY,
        kind           TEXT NOT NULL CHECK (kind IN ('UPLOAD', 'QUERY')),
        status         TEXT NOT NULL CHECK (status IN ('IN PROGRESS', 'SUCCESS', 'FAILED')),
        step           TEXT NOT NULL,
        errors         TEXT,
        filename       TEXT,
        raw_filename   TEXT,
        layer          TEXT NOT NULL,
        domain         TEXT NOT NULL,
        dataset        TEXT NOT NULL,
        version        BIGINT NOT NULL,
        result_url     TEXT,
        subject_id     TEXT NOT NULL,
        rows_processed BIGINT NOT NULL DEFAULT 0,
        created_at     TEXT COLLATE "C" NOT NULL,
        finished_at    TEXT
    );
    CREATE INDEX jobs_by_subject ON jobs (subject_id, created_at);
    CREATE INDEX jobs_by_time ON jobs (created_at);
    CREATE INDEX jobs_in_progress ON jobs (status) WHERE status = 'IN PROGRESS';
    CREATE TABLE raw_files (
        seq               BIGINT GENERATED ALWAYS AS IDENTITY,
        dataset_id        BIGINT NOT NULL REFERENCES datasets (id) ON DELETE CASCADE,
        version           BIGINT NOT NULL,
        raw_filename      TEXT COLLATE "C" NOT NULL,
        original_filename TEXT NOT NULL,
        rows              BIGINT NOT NULL,
        bytes             BIGINT NOT NULL,
        job_id            TEXT NOT NULL,
        uploaded_at       TEXT COLLATE "C" NOT NULL,
        uploaded_by       TEXT,
        PRIMARY KEY (dataset_id, version, raw_filename)
    );
    -- path is relative to the data folder; partition_path is "" or "p0=v/p1=w".
    CREATE TABLE data_files (
        id             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        dataset_id     BIGINT NOT NULL REFERENCES datasets (id) ON DELETE CASCADE,
        version        BIGINT NOT NULL,
        raw_filename   TEXT NOT NULL,
        partition_path TEXT NOT NULL,
        path           TEXT COLLATE "C" NOT NULL UNIQUE,
        rows           BIGINT NOT NULL,
        bytes          BIGINT NOT NULL,
        created_at     TEXT NOT NULL
    );
    CREATE INDEX data_files_by_version ON data_files (dataset_id, version, partition_path);
    -- The auth version: every row written to subjects, permissions or protected domains bumps it
    -- (row triggers: a statement that changes nothing leaves it), whichever node writes.
    CREATE TABLE auth_version (
        id      INTEGER PRIMARY KEY CHECK (id = 1),
        version BIGINT NOT NULL
    );
    INSERT INTO auth_version (id, version) VALUES (1, 0);
    CREATE FUNCTION bump_auth_version() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        UPDATE auth_version SET version = version + 1 WHERE id = 1;
        RETURN NULL;
    END
    $$;
    CREATE TRIGGER subjects_changed AFTER INSERT OR UPDATE OR DELETE ON subjects
        FOR EACH ROW EXECUTE FUNCTION bump_auth_version();
    CREATE TRIGGER permissions_changed AFTER INSERT OR UPDATE OR DELETE ON subject_permissions
        FOR EACH ROW EXECUTE FUNCTION bump_auth_version();
    CREATE TRIGGER domains_changed AFTER INSERT OR UPDATE OR DELETE ON protected_domains
        FOR EACH ROW EXECUTE FUNCTION bump_auth_version();
    "#,
    // 2: the node (process) running each job and its heartbeat (as SQLite's migration 5).
    r#"
    ALTER TABLE jobs ADD COLUMN node_id TEXT, ADD COLUMN heartbeat_at TEXT COLLATE "C";
    "#,
    // 3: the unique index and the versions still to be indexed (as SQLite's migration 8).
    r#"
    CREATE TABLE unique_keys (
        dataset_id   BIGINT NOT NULL,
        version      BIGINT NOT NULL,
        column_name  TEXT COLLATE "C" NOT NULL,
        key          BYTEA NOT NULL,
        data_file_id BIGINT NOT NULL REFERENCES data_files (id) ON DELETE CASCADE,
        PRIMARY KEY (dataset_id, version, column_name, key)
    );
    CREATE INDEX unique_keys_by_file ON unique_keys (data_file_id);
    CREATE TABLE unique_keys_pending (
        dataset_id BIGINT NOT NULL REFERENCES datasets (id) ON DELETE CASCADE,
        version    BIGINT NOT NULL,
        PRIMARY KEY (dataset_id, version)
    );
    INSERT INTO unique_keys_pending (dataset_id, version)
        SELECT DISTINCT dataset_id, version FROM data_files;
    "#,
    // 4: as SQLite's 9, each version's manifest generation, kept by a trigger on data_files.
    r#"
    ALTER TABLE schema_versions ADD COLUMN generation BIGINT NOT NULL DEFAULT 0;
    CREATE FUNCTION bump_manifest_generation() RETURNS trigger LANGUAGE plpgsql AS $body$
    BEGIN
        IF TG_OP = 'DELETE' THEN
            UPDATE schema_versions SET generation = generation + 1
             WHERE dataset_id = OLD.dataset_id AND version = OLD.version;
        ELSE
            UPDATE schema_versions SET generation = generation + 1
             WHERE dataset_id = NEW.dataset_id AND version = NEW.version;
        END IF;
        RETURN NULL;
    END
    $body$;
    CREATE TRIGGER data_files_changed AFTER INSERT OR DELETE ON data_files
        FOR EACH ROW EXECUTE FUNCTION bump_manifest_generation();
    "#,
    // 5: as SQLite's 10, compaction: merged files' parts, unique keys by origin (raw file and
    // partition),
    // and the COMPACT job kind.
    r#"
    CREATE TABLE key_origins (
        id             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        dataset_id     BIGINT NOT NULL REFERENCES datasets (id) ON DELETE CASCADE,
        version        BIGINT NOT NULL,
        raw_filename   TEXT COLLATE "C" NOT NULL,
        partition_path TEXT COLLATE "C" NOT NULL,
        UNIQUE (dataset_id, version, raw_filename, partition_path)
    );
    INSERT INTO key_origins (dataset_id, version, raw_filename, partition_path)
        SELECT DISTINCT k.dataset_id, k.version, f.raw_filename, f.partition_path
        FROM unique_keys k JOIN data_files f ON f.id = k.data_file_id;
    ALTER TABLE unique_keys ADD COLUMN origin BIGINT REFERENCES key_origins (id) ON DELETE CASCADE;
    UPDATE unique_keys k SET origin = o.id
        FROM data_files f, key_origins o
        WHERE f.id = k.data_file_id AND o.dataset_id = k.dataset_id AND o.version = k.version
          AND o.raw_filename = f.raw_filename AND o.partition_path = f.partition_path;
    ALTER TABLE unique_keys DROP COLUMN data_file_id;
    ALTER TABLE unique_keys ALTER COLUMN origin SET NOT NULL;
    CREATE INDEX unique_keys_by_origin ON unique_keys (origin);
    CREATE TABLE data_file_parts (
        data_file_id BIGINT NOT NULL REFERENCES data_files (id) ON DELETE CASCADE,
        raw_filename TEXT COLLATE "C" NOT NULL,
        first_row    BIGINT NOT NULL,
        rows         BIGINT NOT NULL,
        PRIMARY KEY (data_file_id, first_row)
    );
    CREATE INDEX data_file_parts_by_raw ON data_file_parts (raw_filename);
    ALTER TABLE jobs DROP CONSTRAINT jobs_kind_check;
    ALTER TABLE jobs ADD CONSTRAINT jobs_kind_check CHECK (kind IN ('UPLOAD', 'QUERY', 'COMPACT'));
    "#,
    // 6: as SQLite's 11, each data file's column bounds (NULL for files recorded before).
    r#"
    ALTER TABLE data_files ADD COLUMN stats TEXT;
    "#,
    // 7: as SQLite's 12, a refused upload's report link and rejected rows on its job.
    r#"
    ALTER TABLE jobs ADD COLUMN report_url TEXT, ADD COLUMN rows_rejected BIGINT NOT NULL DEFAULT 0;
    "#,
    // 8: as SQLite's 13, a quarantining upload's quarantine link on its job.
    r#"
    ALTER TABLE jobs ADD COLUMN quarantine_url TEXT;
    "#,
    // 9: as SQLite's 14, each upload's column profile, going with its raw file.
    r#"
    CREATE TABLE upload_profiles (
        seq          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        dataset_id   BIGINT NOT NULL,
        version      BIGINT NOT NULL,
        raw_filename TEXT COLLATE "C" NOT NULL,
        profile      TEXT NOT NULL,
        UNIQUE (dataset_id, version, raw_filename),
        FOREIGN KEY (dataset_id, version, raw_filename)
            REFERENCES raw_files (dataset_id, version, raw_filename) ON DELETE CASCADE
    );
    "#,
    // 10: as SQLite's 15, commits as versions: numbered commits, files retired instead of
    // deleted (with a merged file's parts), the oldest readable commit per version, a BASELINE
    // commit for files already there.
    r#"
    CREATE TABLE commits (
        dataset_id   BIGINT NOT NULL REFERENCES datasets (id) ON DELETE CASCADE,
        version      BIGINT NOT NULL,
        commit_no    BIGINT NOT NULL,
        committed_at TEXT COLLATE "C" NOT NULL,
        operation    TEXT NOT NULL,
        subject      TEXT,
        raw_filename TEXT,
        rows_added   BIGINT NOT NULL,
        rows_removed BIGINT NOT NULL,
        PRIMARY KEY (dataset_id, version, commit_no)
    );
    CREATE INDEX commits_by_time ON commits (dataset_id, version, committed_at);
    ALTER TABLE data_files ADD COLUMN added_commit BIGINT NOT NULL DEFAULT 1;
    CREATE TABLE retired_files (
        id             BIGINT NOT NULL,
        dataset_id     BIGINT NOT NULL REFERENCES datasets (id) ON DELETE CASCADE,
        version        BIGINT NOT NULL,
        raw_filename   TEXT NOT NULL,
        partition_path TEXT NOT NULL,
        path           TEXT COLLATE "C" NOT NULL,
        rows           BIGINT NOT NULL,
        bytes          BIGINT NOT NULL,
        stats          TEXT,
        added_commit   BIGINT NOT NULL,
        removed_commit BIGINT NOT NULL,
        PRIMARY KEY (path, removed_commit)
    );
    CREATE INDEX retired_files_by_version ON retired_files (dataset_id, version, removed_commit);
    CREATE TABLE retired_file_parts (
        dataset_id   BIGINT NOT NULL REFERENCES datasets (id) ON DELETE CASCADE,
        path         TEXT COLLATE "C" NOT NULL,
        raw_filename TEXT COLLATE "C" NOT NULL,
        first_row    BIGINT NOT NULL,
        rows         BIGINT NOT NULL,
        PRIMARY KEY (path, first_row)
    );
    ALTER TABLE schema_versions ADD COLUMN history_floor BIGINT NOT NULL DEFAULT 1;
    INSERT INTO commits (dataset_id, version, commit_no, committed_at, operation, subject,
                         raw_filename, rows_added, rows_removed)
        SELECT dataset_id, version, 1, max(created_at), 'BASELINE', NULL, NULL, sum(rows)::BIGINT, 0
        FROM data_files GROUP BY dataset_id, version;
    "#,
    // 11: as SQLite's 16, what each commit added, by commit (the Delta log is derived from it,
    // `delta_log`): one indexed read per commit however many files the version holds.
    r#"
    CREATE INDEX data_files_by_commit ON data_files (dataset_id, version, added_commit);
    CREATE INDEX retired_files_by_commit ON retired_files (dataset_id, version, added_commit);
    "#,
    // 12: as SQLite's 17, the unique index as sorted runs of keys (IDENTITY already never
    // reuses an origin's id). Blobs stored uncompressed: keys and filters barely compress.
    r#"
    INSERT INTO unique_keys_pending (dataset_id, version)
        SELECT DISTINCT dataset_id, version FROM key_origins ON CONFLICT DO NOTHING;
    DROP TABLE unique_keys;
    DELETE FROM key_origins;
    CREATE TABLE key_runs (
        id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        dataset_id  BIGINT NOT NULL REFERENCES datasets (id) ON DELETE CASCADE,
        version     BIGINT NOT NULL,
        column_name TEXT COLLATE "C" NOT NULL,
        finished    BOOLEAN NOT NULL DEFAULT false,
        level       BIGINT NOT NULL DEFAULT 0,
        entries     BIGINT NOT NULL DEFAULT 0,
        min_key     BYTEA NOT NULL DEFAULT '',
        max_key     BYTEA NOT NULL DEFAULT ''
    );
    CREATE INDEX key_runs_by_column ON key_runs (dataset_id, version, column_name);
    CREATE TABLE key_run_blocks (
        run_id  BIGINT NOT NULL REFERENCES key_runs (id) ON DELETE CASCADE,
        block   BIGINT NOT NULL,
        min_key BYTEA NOT NULL,
        max_key BYTEA NOT NULL,
        bloom   BYTEA NOT NULL,
        entries BYTEA NOT NULL,
        PRIMARY KEY (run_id, block)
    );
    ALTER TABLE key_run_blocks ALTER COLUMN bloom SET STORAGE EXTERNAL,
                               ALTER COLUMN entries SET STORAGE EXTERNAL;
    "#,
    // 18: dataset policies and subject attributes (issue 55).
    super::policies::TABLES,
    // 19: the audit log (issue 55).
    super::audit::TABLES,
    // 20: change events: the outbox written by triggers, webhooks and deliveries (issue 58).
    super::event_tables::TABLES,
    // 21: as SQLite's 20, each unique-index run tagged above the manifest generation its writer
    // read, so a commit probes only the runs written after the engine's check (issue 52).
    r#"
    ALTER TABLE key_runs ADD COLUMN generation BIGINT NOT NULL DEFAULT 0;
    UPDATE key_runs SET generation = COALESCE((SELECT s.generation FROM schema_versions s
        WHERE s.dataset_id = key_runs.dataset_id AND s.version = key_runs.version), 0);
    "#,
    // 22: audit rows opened before their requests are answered (issue 55).
    super::audit::PENDING,
];

/// The newest schema version this binary knows.
pub(super) fn latest() -> i64 {
    MIGRATIONS.len() as i64
}

/// The schema version of the catalog `db` sees; `None` when it holds no rapid-rs catalog.
pub(super) fn current(db: &Db<'_>) -> Result<Option<i64>> {
    let table = db.query_one("SELECT to_regclass('catalog_migrations') IS NOT NULL", &[])?;
    if !table.try_get::<_, bool>(0)? {
        return Ok(None);
    }
    let row = db.query_one(
        "SELECT coalesce(max(version), 0) FROM catalog_migrations",
        &[],
    )?;
    Ok(Some(row.try_get::<_, i32>(0)?.into()))
}

/// Refuses a catalog newer than this binary.
pub(super) fn check_not_newer(version: i64) -> Result<()> {
    if version > latest() {
        return Err(Error::internal(format!(
            "the catalog is at schema version {version}, newer than this binary knows ({}); \
             run a newer rapid-rs",
            latest()
        )));
    }
    Ok(())
}

/// Brings the catalog to the newest schema. Call inside a transaction.
pub(super) fn apply(db: &Db<'_>) -> Result<()> {
    db.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])?;
    db.batch(
        "CREATE TABLE IF NOT EXISTS catalog_migrations (
             version    INTEGER PRIMARY KEY,
             applied_at TEXT NOT NULL
         )",
    )?;
    let applied = current(db)?.unwrap_or(0);
    check_not_newer(applied)?;
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(applied as usize) {
        let version = i as i32 + 1;
        db.batch(sql)?;
        db.execute(
            "INSERT INTO catalog_migrations (version, applied_at) VALUES ($1, $2)",
            &[&version, &now_text()],
        )?;
        tracing::info!(version, "applied PostgreSQL catalog migration");
    }
    Ok(())
}
