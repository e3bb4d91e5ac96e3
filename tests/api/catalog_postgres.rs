//! The server on a PostgreSQL catalog (`RAPID_CATALOG_URL`): schema, upload, job, query, and a
//! second server process on the same catalog and data folder (a second node) seeing all of it.
//!
//! The PostgreSQL server comes from `RAPID_TEST_PG_URL` (scripts/pg.sh); each test makes a
//! database of its own with `psql` and drops it after. Unset: the test prints "skipped: ..." and
//! passes, unless `RAPID_REQUIRE_PG=1`.

use std::process::Command;

use reqwest::StatusCode;
use serde_json::json;

use crate::support::{schema_json, Options, TestServer};

const PATH: &str = "/api/datasets/default/shop/sales";

/// A database of its own on the test server, dropped when this goes.
pub(crate) struct Database {
    server_url: String,
    name: String,
    /// The catalog URL naming this database.
    url: String,
}

fn psql() -> String {
    let debian = "/usr/lib/postgresql/15/bin/psql";
    if std::path::Path::new(debian).exists() {
        debian.into()
    } else {
        "psql".into()
    }
}

fn run_sql(server_url: &str, sql: &str) {
    let out = Command::new(psql())
        .args([server_url, "-v", "ON_ERROR_STOP=1", "-q", "-c", sql])
        .output()
        .expect("psql runs");
    assert!(
        out.status.success(),
        "psql {sql}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

impl Database {
    /// `None` (after saying why) when no test server is configured.
    pub(crate) fn create(test: &str) -> Option<Database> {
        let server_url = match std::env::var("RAPID_TEST_PG_URL") {
            Ok(url) if !url.trim().is_empty() => url,
            _ => {
                assert!(
                    std::env::var("RAPID_REQUIRE_PG").as_deref() != Ok("1"),
                    "{test}: RAPID_REQUIRE_PG=1 but RAPID_TEST_PG_URL is unset"
                );
                println!(
                    "skipped: {test}: RAPID_TEST_PG_URL is unset (scripts/pg.sh starts a server)"
                );
                return None;
            }
        };
        let name = format!("rapid_api_{}", uuid::Uuid::new_v4().simple());
        run_sql(&server_url, &format!("CREATE DATABASE {name}"));
        // postgres://user@host:port/db[?params]: the same server, this database.
        let (base, query) = server_url
            .split_once('?')
            .map_or((server_url.as_str(), ""), |(b, q)| (b, q));
        let (host, _) = base.rsplit_once('/').expect("a database in the URL");
        let url = match query {
            "" => format!("{host}/{name}"),
            q => format!("{host}/{name}?{q}"),
        };
        Some(Database {
            server_url,
            name,
            url,
        })
    }

    pub(crate) fn options(&self) -> Options {
        Options {
            env: vec![("RAPID_CATALOG_URL".into(), self.url.clone())],
            ..Options::default()
        }
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        let sql = format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name);
        let _ = Command::new(psql())
            .args([self.server_url.as_str(), "-q", "-c", &sql])
            .status();
    }
}

#[test]
fn two_servers_share_one_postgres_catalog() {
    let Some(db) = Database::create("two_servers_share_one_postgres_catalog") else {
        return;
    };
    let first = TestServer::start_with(db.options());
    first.create_schema(&schema_json(
        "shop",
        "sales",
        "PUBLIC",
        "APPEND",
        json!([
            {"name": "id", "data_type": "int", "allow_null": false},
            {"name": "item", "data_type": "string", "allow_null": true}
        ]),
    ));
    let token = first.admin_token();
    let csv = "id,item\n1,apple\n2,pear\n3,plum\n";
    let (details, job) = first.upload_and_wait(&token, PATH, "sales.csv", csv.into());
    assert_eq!(job["status"], "SUCCESS", "{job}");
    let job_id = details["job_id"].as_str().unwrap().to_string();
    let query = json!({"select_columns": ["id", "item"], "order_by_columns": [{"column": "id"}]});
    let (status, answer) = first.call("POST", &format!("{PATH}/query"), Some(&token), Some(&query));
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["2"], json!({"id": 3, "item": "plum"}));
    assert_eq!(answer.as_object().unwrap().len(), 3);
    assert!(
        !first.data_dir().join("catalog.sqlite").exists(),
        "no SQLite catalog beside a PostgreSQL one"
    );

    // What another node may be writing right now: a staged upload, a placed but not yet
    // committed file. A node starting on the shared folder leaves both alone.
    let staged = first.data_dir().join("staging/other-node/part.csv");
    let placed = first
        .data_dir()
        .join("data/default/shop/sales/1/placed.parquet");
    for file in [&staged, &placed] {
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, b"in flight").unwrap();
    }

    // A second node: same catalog, same (shared) data folder, running beside the first.
    let second = TestServer::start_with(Options {
        data_dir: Some(first.data_dir()),
        ..db.options()
    });
    assert!(
        staged.exists() && placed.exists(),
        "another node's work kept"
    );
    let (status, job) = second.call("GET", &format!("/api/jobs/{job_id}"), Some(&token), None);
    assert_eq!(
        status,
        StatusCode::OK,
        "a token of the first node works: {job}"
    );
    assert_eq!(job["status"], "SUCCESS");
    let (status, again) = second.call("POST", &format!("{PATH}/query"), Some(&token), Some(&query));
    assert_eq!(status, StatusCode::OK, "{again}");
    assert_eq!(again, answer, "the second node answers the same rows");
    // And what the second node records, the first sees.
    let csv = "id,item\n4,fig\n";
    let (_, job) = second.upload_and_wait(&token, PATH, "more.csv", csv.into());
    assert_eq!(job["status"], "SUCCESS", "{job}");
    let (_, after) = first.call("POST", &format!("{PATH}/query"), Some(&token), Some(&query));
    assert_eq!(after.as_object().unwrap().len(), 4, "{after}");
    drop(second);
    drop(first);
}

#[test]
fn a_bad_catalog_url_stops_the_start_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_rapid-rs"))
        .args(["serve", "--bind", "127.0.0.1:0", "--data-dir"])
        .arg(dir.path().join("data"))
        .env("RAPID_CATALOG_URL", "mysql://nope")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("postgres://"), "{stderr}");
}

/// Backup and restore copy the SQLite catalog file: on a PostgreSQL catalog they refuse, saying
/// so, before touching anything.
#[test]
fn sqlite_only_admin_commands_refuse_on_postgres() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    for args in [
        vec![
            "backup".to_string(),
            dir.path().join("copy").display().to_string(),
        ],
        vec![
            "restore".to_string(),
            dir.path().join("copy").display().to_string(),
        ],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_rapid-rs"))
            .arg("admin")
            .arg("--data-dir")
            .arg(&data)
            .args(&args)
            .env("RAPID_CATALOG_URL", "postgres://rapid@127.0.0.1:1/rapid")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains("PostgreSQL") && stderr.contains("pg_dump"),
            "{stderr}"
        );
        assert!(!dir.path().join("copy").exists(), "nothing written");
    }
}

/// Jobs carry their node: a node's start fails only its own unfinished jobs, and a job whose
/// node stopped beating is failed by a surviving node within the lease.
#[test]
fn a_node_fails_its_own_jobs_at_start_and_anyones_after_the_lease() {
    let Some(db) =
        Database::create("a_node_fails_its_own_jobs_at_start_and_anyones_after_the_lease")
    else {
        return;
    };
    // The catalog's tables exist once a first node has started.
    TestServer::start_with(db.options()).stop();
    let job = |id: &str, node: &str, heartbeat: &str| {
        format!(
            "INSERT INTO jobs (job_id, kind, status, step, layer, domain, dataset, version, \
             subject_id, created_at, node_id, heartbeat_at) VALUES ('{id}', 'UPLOAD', \
             'IN PROGRESS', 'VALIDATION', 'default', 'shop', 'sales', 1, 'testadmin', \
             '2026-01-01T00:00:00.000Z', '{node}', '{heartbeat}')"
        )
    };
    // Its own (node "b"), another node's alive (a heartbeat in the future), a dead node's.
    run_sql(&db.url, &job("own", "b", "9999-01-01T00:00:00.000Z"));
    run_sql(&db.url, &job("alive", "a", "9999-01-01T00:00:00.000Z"));
    run_sql(&db.url, &job("dead", "c", "2026-01-01T00:00:00.000Z"));
    let mut options = db.options();
    options.args = ["--node-id", "b", "--job-lease-secs", "3"]
        .map(String::from)
        .to_vec();
    let s = TestServer::start_with(options);
    let token = s.admin_token();
    let status = |id: &str| {
        let (code, job) = s.call("GET", &format!("/api/jobs/{id}"), Some(&token), None);
        assert_eq!(code, StatusCode::OK, "{job}");
        job["status"].as_str().unwrap().to_string()
    };
    assert_eq!(status("own"), "FAILED", "failed by its node's start");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while status("dead") != "FAILED" {
        assert!(
            std::time::Instant::now() < deadline,
            "the dead node's job never failed"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    assert_eq!(
        status("alive"),
        "IN PROGRESS",
        "a live node's job is left alone"
    );
}
