//! Versioned migrations, tracked in SQLite's `user_version`. Append new steps; never edit a shipped one.

use rusqlite::Connection;

use crate::error::{Error, Result};

pub(super) const MIGRATIONS: &[&str] = &[
    // 1: subjects, permissions, protected domains, datasets and their schema versions.
    r#"
    CREATE TABLE settings (
        key   TEXT PRIMARY KEY,
        value BLOB NOT NULL
    );
    CREATE TABLE subjects (
        subject_id         TEXT PRIMARY KEY,
        kind               TEXT NOT NULL CHECK (kind IN ('CLIENT', 'USER')),
        name               TEXT NOT NULL,
        name_key           TEXT NOT NULL,
        email              TEXT,
        secret_digest      BLOB,
        password_hash      TEXT,
        created_at         TEXT NOT NULL
    );
    CREATE UNIQUE INDEX subjects_by_name ON subjects (kind, name_key);
    CREATE UNIQUE INDEX users_by_email ON subjects (email) WHERE email IS NOT NULL;
    CREATE TABLE subject_permissions (
        subject_id TEXT NOT NULL REFERENCES subjects (subject_id) ON DELETE CASCADE,
        permission TEXT NOT NULL,
        PRIMARY KEY (subject_id, permission)
    );
    CREATE TABLE protected_domains (
        domain     TEXT PRIMARY KEY,
        created_at TEXT NOT NULL
    );
    -- dataset keeps the case it was created with; dataset_key (lower case) is what names
    -- collide on and what storage paths use, so `Sales` and `sales` are one dataset.
    CREATE TABLE datasets (
        id          INTEGER PRIMARY KEY,
        layer       TEXT NOT NULL,
        domain      TEXT NOT NULL,
        dataset     TEXT NOT NULL,
        dataset_key TEXT NOT NULL,
        sensitivity TEXT NOT NULL,
        created_at  TEXT NOT NULL,
        UNIQUE (layer, domain, dataset_key)
    );
    CREATE TABLE schema_versions (
        dataset_id  INTEGER NOT NULL REFERENCES datasets (id) ON DELETE CASCADE,
        version     INTEGER NOT NULL,
        schema_json TEXT NOT NULL,
        created_at  TEXT NOT NULL,
        PRIMARY KEY (dataset_id, version)
    );
    "#,
    // 2: jobs, and the manifest of raw uploads and the Parquet files each contributed.
    r#"
    CREATE TABLE jobs (
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
        version        INTEGER NOT NULL,
        result_url     TEXT,
        subject_id     TEXT NOT NULL,
        rows_processed INTEGER NOT NULL DEFAULT 0,
        created_at     TEXT NOT NULL,
        finished_at    TEXT
    );
    CREATE INDEX jobs_by_subject ON jobs (subject_id, created_at);
    CREATE INDEX jobs_in_progress ON jobs (status) WHERE status = 'IN PROGRESS';
    CREATE TABLE raw_files (
        dataset_id        INTEGER NOT NULL REFERENCES datasets (id) ON DELETE CASCADE,
        version           INTEGER NOT NULL,
        raw_filename      TEXT NOT NULL,
        original_filename TEXT NOT NULL,
        rows              INTEGER NOT NULL,
        bytes             INTEGER NOT NULL,
        job_id            TEXT NOT NULL,
        uploaded_at       TEXT NOT NULL,
        PRIMARY KEY (dataset_id, version, raw_filename)
    );
    -- path is relative to the data folder; partition_path is "" or "p0=v/p1=w".
    CREATE TABLE data_files (
        id             INTEGER PRIMARY KEY,
        dataset_id     INTEGER NOT NULL REFERENCES datasets (id) ON DELETE CASCADE,
        version        INTEGER NOT NULL,
        raw_filename   TEXT NOT NULL,
        partition_path TEXT NOT NULL,
        path           TEXT NOT NULL UNIQUE,
        rows           INTEGER NOT NULL,
        bytes          INTEGER NOT NULL,
        created_at     TEXT NOT NULL
    );
    CREATE INDEX data_files_by_version ON data_files (dataset_id, version, partition_path);
    "#,
    // 3: who uploaded each raw file (a subject name, kept even after the subject is deleted), for
    // dataset info's `last_uploaded_by`. Files recorded before this have NULL.
    r#"
    ALTER TABLE raw_files ADD COLUMN uploaded_by TEXT;
    "#,
    // 4: a user created with a temporary password must replace it at the first sign-in on the web
    // pages. Set when a user is created, cleared when its password is changed.
    r#"
    ALTER TABLE subjects ADD COLUMN must_change_password INTEGER NOT NULL DEFAULT 0;
    "#,
    // 5: the auth version, bumped by triggers on every change to subjects, their permissions and
    // protected domains, so that no writer (the service, `rapid-rs admin`) can forget it.
    r#"
    CREATE TABLE auth_version (
        id      INTEGER PRIMARY KEY CHECK (id = 1),
        version INTEGER NOT NULL
    );
    INSERT INTO auth_version (id, version) VALUES (1, 0);
    CREATE TRIGGER subjects_inserted AFTER INSERT ON subjects
        BEGIN UPDATE auth_version SET version = version + 1; END;
    CREATE TRIGGER subjects_updated AFTER UPDATE ON subjects
        BEGIN UPDATE auth_version SET version = version + 1; END;
    CREATE TRIGGER subjects_deleted AFTER DELETE ON subjects
        BEGIN UPDATE auth_version SET version = version + 1; END;
    CREATE TRIGGER permissions_inserted AFTER INSERT ON subject_permissions
        BEGIN UPDATE auth_version SET version = version + 1; END;
    CREATE TRIGGER permissions_updated AFTER UPDATE ON subject_permissions
        BEGIN UPDATE auth_version SET version = version + 1; END;
    CREATE TRIGGER permissions_deleted AFTER DELETE ON subject_permissions
        BEGIN UPDATE auth_version SET version = version + 1; END;
    CREATE TRIGGER domains_inserted AFTER INSERT ON protected_domains
        BEGIN UPDATE auth_version SET version = version + 1; END;
    CREATE TRIGGER domains_updated AFTER UPDATE ON protected_domains
        BEGIN UPDATE auth_version SET version = version + 1; END;
    CREATE TRIGGER domains_deleted AFTER DELETE ON protected_domains
        BEGIN UPDATE auth_version SET version = version + 1; END;
    "#,
    // 6: dataset ids are never reused. A plain INTEGER PRIMARY KEY hands a deleted dataset's id
    // (when it was the highest) to the next one, and an upload validated against the deleted
    // dataset would then look like one of the new dataset.
    r#"
    CREATE TABLE id_sequences (
        name TEXT PRIMARY KEY,
        last INTEGER NOT NULL
    );
    INSERT INTO id_sequences (name, last) SELECT 'datasets', coalesce(max(id), 0) FROM datasets;
    "#,
    // 7: the node (process) running each job and its heartbeat, so that a node fails only its own
    // jobs at start-up and any node fails those whose heartbeat is older than the lease. Jobs
    // recorded before have NULL (failed by the next start, as before).
    r#"
    ALTER TABLE jobs ADD COLUMN node_id TEXT;
    ALTER TABLE jobs ADD COLUMN heartbeat_at TEXT;
    "#,
    // 8: the unique index: every stored value of a `unique` column (by its index key) with the
    // data file holding it, so an upload's check looks up its own values instead of reading every
    // stored file. Keys go with their file (cascade). Versions that already had files are pending:
    // the first commit that checks uniqueness there records their keys.
    r#"
    CREATE TABLE unique_keys (
        dataset_id   INTEGER NOT NULL,
        version      INTEGER NOT NULL,
        column_name  TEXT NOT NULL,
        key          BLOB NOT NULL,
        data_file_id INTEGER NOT NULL REFERENCES data_files (id) ON DELETE CASCADE,
        PRIMARY KEY (dataset_id, version, column_name, key)
    ) WITHOUT ROWID;
    CREATE INDEX unique_keys_by_file ON unique_keys (data_file_id);
    CREATE TABLE unique_keys_pending (
        dataset_id INTEGER NOT NULL REFERENCES datasets (id) ON DELETE CASCADE,
        version    INTEGER NOT NULL,
        PRIMARY KEY (dataset_id, version)
    );
    INSERT INTO unique_keys_pending (dataset_id, version)
        SELECT DISTINCT dataset_id, version FROM data_files;
    "#,
    // 9: each version's manifest generation, bumped by triggers whenever a data file of the version
    // is recorded or dropped, so a commit checks "nothing changed since my checks" by one number
    // instead of the list of every file's id (which grows with the uploads).
    r#"
    ALTER TABLE schema_versions ADD COLUMN generation INTEGER NOT NULL DEFAULT 0;
    CREATE TRIGGER data_files_recorded AFTER INSERT ON data_files
        BEGIN UPDATE schema_versions SET generation = generation + 1
              WHERE dataset_id = NEW.dataset_id AND version = NEW.version; END;
    CREATE TRIGGER data_files_dropped AFTER DELETE ON data_files
        BEGIN UPDATE schema_versions SET generation = generation + 1
              WHERE dataset_id = OLD.dataset_id AND version = OLD.version; END;
    "#,
    // 10: compaction. A merged data file holds rows of several raw files: its parts say which rows
    // came from which, so deleting a raw file removes exactly its rows. A unique key now names
    // its origin (the raw file and partition its row came from, numbered in `key_origins`)
    // instead of its data file, so merging files touches no key, and deleting a raw file (or
    // replacing partitions) drops exactly its keys (cascade from the origins).
    // Jobs gain the COMPACT kind (a CHECK constraint cannot be altered in SQLite: tables whose
    // shape changes are copied).
    r#"
    CREATE TABLE key_origins (
        id             INTEGER PRIMARY KEY,
        dataset_id     INTEGER NOT NULL REFERENCES datasets (id) ON DELETE CASCADE,
        version        INTEGER NOT NULL,
        raw_filename   TEXT NOT NULL,
        partition_path TEXT NOT NULL,
        UNIQUE (dataset_id, version, raw_filename, partition_path)
    );
    INSERT INTO key_origins (dataset_id, version, raw_filename, partition_path)
        SELECT DISTINCT k.dataset_id, k.version, f.raw_filename, f.partition_path
        FROM unique_keys k JOIN data_files f ON f.id = k.data_file_id;
    CREATE TABLE unique_keys_by_origin (
        dataset_id  INTEGER NOT NULL,
        version     INTEGER NOT NULL,
        column_name TEXT NOT NULL,
        key         BLOB NOT NULL,
        origin      INTEGER NOT NULL REFERENCES key_origins (id) ON DELETE CASCADE,
        PRIMARY KEY (dataset_id, version, column_name, key)
    ) WITHOUT ROWID;
    INSERT INTO unique_keys_by_origin
        SELECT k.dataset_id, k.version, k.column_name, k.key, o.id
        FROM unique_keys k JOIN data_files f ON f.id = k.data_file_id
        JOIN key_origins o ON o.dataset_id = k.dataset_id AND o.version = k.version
             AND o.raw_filename = f.raw_filename AND o.partition_path = f.partition_path;
    DROP TABLE unique_keys;
    ALTER TABLE unique_keys_by_origin RENAME TO unique_keys;
    CREATE INDEX unique_keys_by_origin ON unique_keys (origin);
    CREATE TABLE data_file_parts (
        data_file_id INTEGER NOT NULL REFERENCES data_files (id) ON DELETE CASCADE,
        raw_filename TEXT NOT NULL,
        first_row    INTEGER NOT NULL,
        rows         INTEGER NOT NULL,
        PRIMARY KEY (data_file_id, first_row)
    ) WITHOUT ROWID;
    CREATE INDEX data_file_parts_by_raw ON data_file_parts (raw_filename);
    CREATE TABLE jobs_with_compact (
        job_id         TEXT PRIMARY KEY,
        kind           TEXT NOT NULL CHECK (kind IN ('UPLOAD', 'QUERY', 'COMPACT')),
        status         TEXT NOT NULL CHECK (status IN ('IN PROGRESS', 'SUCCESS', 'FAILED')),
        step           TEXT NOT NULL,
        errors         TEXT,
        filename       TEXT,
        raw_filename   TEXT,
        layer          TEXT NOT NULL,
        domain         TEXT NOT NULL,
        dataset        TEXT NOT NULL,
        version        INTEGER NOT NULL,
        result_url     TEXT,
        subject_id     TEXT NOT NULL,
        rows_processed INTEGER NOT NULL DEFAULT 0,
        created_at     TEXT NOT NULL,
        finished_at    TEXT,
        node_id        TEXT,
        heartbeat_at   TEXT
    );
    INSERT INTO jobs_with_compact (job_id, kind, status, step, errors, filename, raw_filename,
            layer, domain, dataset, version, result_url, subject_id, rows_processed, created_at,
            finished_at, node_id, heartbeat_at)
        SELECT job_id, kind, status, step, errors, filename, raw_filename, layer, domain,
            dataset, version, result_url, subject_id, rows_processed, created_at, finished_at,
            node_id, heartbeat_at FROM jobs;
    DROP TABLE jobs;
    ALTER TABLE jobs_with_compact RENAME TO jobs;
    CREATE INDEX jobs_by_subject ON jobs (subject_id, created_at);
    CREATE INDEX jobs_in_progress ON jobs (status) WHERE status = 'IN PROGRESS';
    "#,
    // 11: each data file's column bounds (JSON, `manifest::stats`), so a query skips files its
    // filters rule out before opening them. Files recorded before have NULL (never skipped).
    r#"
    ALTER TABLE data_files ADD COLUMN stats TEXT;
    "#,
    // 12: upload feedback. A refused upload's job links its whole report and counts the rows
    // that had problems.
    r#"
    ALTER TABLE jobs ADD COLUMN report_url TEXT;
    ALTER TABLE jobs ADD COLUMN rows_rejected INTEGER NOT NULL DEFAULT 0;
    "#,
    // 13: a quarantining upload's job links the rows it kept apart.
    r#"
    ALTER TABLE jobs ADD COLUMN quarantine_url TEXT;
    "#,
    // 14: each upload's column profile, going with its raw file.
    r#"
    CREATE TABLE upload_profiles (
        seq          INTEGER PRIMARY KEY,
        dataset_id   INTEGER NOT NULL,
        version      INTEGER NOT NULL,
        raw_filename TEXT NOT NULL,
        profile      TEXT NOT NULL,
        UNIQUE (dataset_id, version, raw_filename),
        FOREIGN KEY (dataset_id, version, raw_filename)
            REFERENCES raw_files (dataset_id, version, raw_filename) ON DELETE CASCADE
    );
    "#,
    // 15: commits as versions (issue 36). Every change of a version's files is a numbered commit;
    // each live file names the commit that added it, and a file a commit replaces moves to
    // `retired_files` with the commit that removed it instead of being deleted, so every retained
    // commit stays readable (a rollback may list one again: a path can be retired more than once).
    // `history_floor` is the oldest commit still readable (retention raises it). A version that
    // already had files starts its history with one BASELINE commit holding them.
    r#"
    CREATE TABLE commits (
        dataset_id   INTEGER NOT NULL REFERENCES datasets (id) ON DELETE CASCADE,
        version      INTEGER NOT NULL,
        commit_no    INTEGER NOT NULL,
        committed_at TEXT NOT NULL,
        operation    TEXT NOT NULL,
        subject      TEXT,
        raw_filename TEXT,
        rows_added   INTEGER NOT NULL,
        rows_removed INTEGER NOT NULL,
        PRIMARY KEY (dataset_id, version, commit_no)
    ) WITHOUT ROWID;
    CREATE INDEX commits_by_time ON commits (dataset_id, version, committed_at);
    ALTER TABLE data_files ADD COLUMN added_commit INTEGER NOT NULL DEFAULT 1;
    CREATE TABLE retired_files (
        id             INTEGER NOT NULL,
        dataset_id     INTEGER NOT NULL REFERENCES datasets (id) ON DELETE CASCADE,
        version        INTEGER NOT NULL,
        raw_filename   TEXT NOT NULL,
        partition_path TEXT NOT NULL,
        path           TEXT NOT NULL,
        rows           INTEGER NOT NULL,
        bytes          INTEGER NOT NULL,
        stats          TEXT,
        added_commit   INTEGER NOT NULL,
        removed_commit INTEGER NOT NULL,
        PRIMARY KEY (path, removed_commit)
    );
    CREATE INDEX retired_files_by_version ON retired_files (dataset_id, version, removed_commit);
    -- A retired merged file's parts, by path, so a rollback that lists it again keeps deleting
    -- a raw file's rows exactly.
    CREATE TABLE retired_file_parts (
        dataset_id   INTEGER NOT NULL REFERENCES datasets (id) ON DELETE CASCADE,
        path         TEXT NOT NULL,
        raw_filename TEXT NOT NULL,
        first_row    INTEGER NOT NULL,
        rows         INTEGER NOT NULL,
        PRIMARY KEY (path, first_row)
    );
    ALTER TABLE schema_versions ADD COLUMN history_floor INTEGER NOT NULL DEFAULT 1;
    INSERT INTO commits (dataset_id, version, commit_no, committed_at, operation, subject,
                         raw_filename, rows_added, rows_removed)
        SELECT dataset_id, version, 1, max(created_at), 'BASELINE', NULL, NULL, sum(rows), 0
        FROM data_files GROUP BY dataset_id, version;
    "#,
    // 16: what each commit added, by commit (the Delta log's versions are derived from it,
    // `delta_log`): one indexed read per commit however many files the version holds.
    r#"
    CREATE INDEX data_files_by_commit ON data_files (dataset_id, version, added_commit);
    CREATE INDEX retired_files_by_commit ON retired_files (dataset_id, version, added_commit);
    "#,
    // 17: the unique index as sorted runs of keys (`catalog::key_runs`) instead of a row per key.
    // Keys recorded before are dropped and their versions marked pending: the next commit that
    // checks a unique column there records them again from the files, as one run. Origins are
    // numbered by AUTOINCREMENT from now on: a run's entry names an origin id, which must never
    // come back for another origin once dropped.
    r#"
    INSERT OR IGNORE INTO unique_keys_pending (dataset_id, version)
        SELECT DISTINCT dataset_id, version FROM key_origins;
    DROP TABLE unique_keys;
    DROP TABLE key_origins;
    CREATE TABLE key_origins (
        id             INTEGER PRIMARY KEY AUTOINCREMENT,
        dataset_id     INTEGER NOT NULL REFERENCES datasets (id) ON DELETE CASCADE,
        version        INTEGER NOT NULL,
        raw_filename   TEXT NOT NULL,
        partition_path TEXT NOT NULL,
        UNIQUE (dataset_id, version, raw_filename, partition_path)
    );
    CREATE TABLE key_runs (
        id          INTEGER PRIMARY KEY AUTOINCREMENT,
        dataset_id  INTEGER NOT NULL REFERENCES datasets (id) ON DELETE CASCADE,
        version     INTEGER NOT NULL,
        column_name TEXT NOT NULL,
        finished    INTEGER NOT NULL DEFAULT 0,
        level       INTEGER NOT NULL DEFAULT 0,
        entries     INTEGER NOT NULL DEFAULT 0,
        min_key     BLOB NOT NULL DEFAULT x'',
        max_key     BLOB NOT NULL DEFAULT x''
    );
    CREATE INDEX key_runs_by_column ON key_runs (dataset_id, version, column_name);
    -- The small columns first: listing blocks reads no overflow page of the blobs.
    CREATE TABLE key_run_blocks (
        id      INTEGER PRIMARY KEY,
        run_id  INTEGER NOT NULL REFERENCES key_runs (id) ON DELETE CASCADE,
        block   INTEGER NOT NULL,
        min_key BLOB NOT NULL,
        max_key BLOB NOT NULL,
        bloom   BLOB NOT NULL,
        entries BLOB NOT NULL,
        UNIQUE (run_id, block)
    );
    "#,
    // 18: dataset policies and subject attributes (issue 55).
    super::policies::TABLES,
    // 19: change events: the outbox written by triggers, webhooks and deliveries (issue 58).
    super::event_tables::TABLES,
    // 20: each unique-index run tagged above the manifest generation its writer read, so a
    // commit probes only the runs written after the engine's check (issue 52). Runs already
    // stored take their version's generation now: each holds only keys committed by then.
    r#"
    ALTER TABLE key_runs ADD COLUMN generation INTEGER NOT NULL DEFAULT 0;
    UPDATE key_runs SET generation = COALESCE((SELECT s.generation FROM schema_versions s
        WHERE s.dataset_id = key_runs.dataset_id AND s.version = key_runs.version), 0);
    "#,
];

pub(super) fn apply(conn: &mut Connection) -> Result<()> {
    let current: usize = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if current > MIGRATIONS.len() {
        return Err(Error::internal(format!(
            "the catalog is at schema version {current}, newer than this binary knows ({}); \
             run a newer rapid-rs",
            MIGRATIONS.len()
        )));
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(current) {
        let tx = conn.transaction()?;
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", i + 1)?;
        tx.commit()?;
        tracing::info!(version = i + 1, "applied catalog migration");
    }
    Ok(())
}
