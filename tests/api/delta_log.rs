//! Each stored version is a Delta Lake table (issue 36): the `deltalake` Python package
//! (delta-rs) reads every commit's Delta version and DuckDB's delta extension the current one,
//! equal to our as-of answers; the log is derived from the catalog, so a log version lost (a stop
//! between a commit and its log) is written again at start-up, byte for byte, and `admin check`
//! reports the gap while it lasts.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::catalog_postgres::Database;
use crate::ops_admin::{admin, stdout_json};
use crate::pyarrow_readback::python;
use crate::sql_clients::extension_python;
use crate::support::{into_parts, schema_json, Options, TestServer};

pub(crate) const EVENTS: &str = "/api/datasets/default/lake/events";

pub(crate) fn events_schema() -> Value {
    schema_json(
        "lake",
        "events",
        "PUBLIC",
        "APPEND",
        json!([
            {"name": "region", "data_type": "string", "allow_null": false, "partition_index": 0},
            {"name": "batch", "data_type": "int", "allow_null": false, "partition_index": 1},
            {"name": "id", "data_type": "int", "allow_null": false},
            {"name": "day", "data_type": "date", "format": "%Y-%m-%d", "allow_null": true},
            {"name": "amount", "data_type": "double", "allow_null": true},
            {"name": "paid", "data_type": "boolean", "allow_null": true},
            {"name": "note", "data_type": "string", "allow_null": true}
        ]),
    )
}

/// Upload `n`: three rows over two regions (one needing percent-encoding in its folder name).
fn rows(n: i64) -> Vec<u8> {
    let (a, b, c) = (10 * n, 10 * n + 1, 10 * n + 2);
    format!(
        "region,batch,id,day,amount,paid,note\n\
         north,{n},{a},2024-01-{:02},{a}.25,true,first\n\
         São Paulo,{n},{b},,,,\n\
         São Paulo,{n},{c},2023-12-31,-1.5,false,\"a, b\"\n",
        n + 1
    )
    .into_bytes()
}

pub(crate) fn upload(s: &TestServer, t: &str, n: i64) -> String {
    let (accepted, job) = s.upload_and_wait(t, EVENTS, "events.csv", rows(n));
    assert_eq!(job["status"], "SUCCESS", "{job}");
    accepted["raw_filename"].as_str().unwrap().to_string()
}

/// Every row as of `params` (`?as_of_commit=N` or ""), ordered by id, with the commit read.
pub(crate) fn read(s: &TestServer, t: &str, params: &str) -> (i64, Value) {
    let res = s
        .request("POST", &format!("{EVENTS}/query{params}"))
        .bearer_auth(t)
        .json(&json!({"order_by_columns": [{"column": "id", "direction": "ASC"}]}))
        .send()
        .unwrap();
    let commit = res.headers()["x-rapid-commit"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    let (status, body) = into_parts(res);
    assert_eq!(status, StatusCode::OK, "{body}");
    // rAPId's answers write a null boolean as `{}`: here a null, as other engines give it.
    let null_booleans = |(k, v): (&String, &Value)| match v {
        Value::Object(o) if o.is_empty() => (k.clone(), Value::Null),
        v => (k.clone(), v.clone()),
    };
    let rows: Vec<Value> = body
        .as_object()
        .unwrap()
        .values()
        .map(|row| Value::Object(row.as_object().unwrap().iter().map(null_booleans).collect()))
        .collect();
    (commit, numbers_as_floats(Value::Array(rows)))
}

/// Integers and floats compared as numbers (`2` and `2.0` alike).
fn numbers_as_floats(v: Value) -> Value {
    match v {
        Value::Number(n) => json!(n.as_f64().unwrap()),
        Value::Array(a) => Value::Array(a.into_iter().map(numbers_as_floats).collect()),
        Value::Object(o) => Value::Object(
            o.into_iter()
                .map(|(k, v)| (k, numbers_as_floats(v)))
                .collect(),
        ),
        other => other,
    }
}

/// A server keeping a hundred commits (the tests' default keeps one).
pub(crate) fn keeping() -> Options {
    Options {
        env: vec![("RAPID_HISTORY_KEEP_COMMITS".into(), "100".into())],
        ..Options::default()
    }
}

pub(crate) fn table(s: &TestServer) -> PathBuf {
    s.data_dir().join("data/default/lake/events/1")
}

pub(crate) fn log_file(table: &Path, delta_version: i64) -> PathBuf {
    table.join(format!("_delta_log/{delta_version:020}.json"))
}

/// Until the log holds Delta version `v` (it is written just after the commit that made the
/// job SUCCESS).
pub(crate) fn wait_log(table: &Path, v: i64) {
    let until = Instant::now() + Duration::from_secs(10);
    while !log_file(table, v).exists() {
        assert!(Instant::now() < until, "no Delta version {v}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

pub(crate) fn run(mut command: Command) -> Value {
    let out = command.output().expect("run python");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    numbers_as_floats(serde_json::from_slice(&out.stdout).unwrap())
}

/// Five commits: three appends, a rollback to commit 2, the deletion of commit 1's raw file.
fn five_commits(s: &TestServer, t: &str) -> Vec<Value> {
    s.create_schema(&events_schema());
    let first = upload(s, t, 1);
    upload(s, t, 2);
    upload(s, t, 3);
    let (status, body) = s.call(
        "POST",
        &format!("{EVENTS}/rollback?to_commit=2"),
        Some(t),
        None,
    );
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = s.call("DELETE", &format!("{EVENTS}/1/{first}"), Some(t), None);
    assert_eq!(status, StatusCode::OK, "{body}");
    let answers: Vec<Value> = (1..=5)
        .map(|n| {
            let (commit, rows) = read(s, t, &format!("?as_of_commit={n}"));
            assert_eq!(commit, n);
            rows
        })
        .collect();
    let lens: Vec<usize> = answers
        .iter()
        .map(|a| a.as_array().unwrap().len())
        .collect();
    assert_eq!(lens, [3, 6, 9, 6, 3], "rows by commit");
    wait_log(&table(s), 4);
    answers
}

#[test]
fn deltalake_and_duckdb_read_every_commit_as_our_as_of_answers() {
    read_back(keeping());
}

/// The same on a PostgreSQL catalog (skipped without `RAPID_TEST_PG_URL`, see catalog_postgres).
#[test]
fn deltalake_reads_every_commit_on_postgres_too() {
    let Some(db) = Database::create("deltalake_reads_every_commit_on_postgres_too") else {
        return;
    };
    let mut options = db.options();
    options.env.extend(keeping().env);
    read_back(options);
}

fn read_back(options: Options) {
    let s = TestServer::start_with(options);
    let t = s.admin_token();
    let answers = five_commits(&s, &t);
    let table = table(&s);

    // delta-rs, at every Delta version (commit N is Delta version N - 1).
    let mut script = Command::new(python());
    script
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/python/delta_read.py"
        ))
        .arg("deltalake")
        .arg(&table)
        .args(["0", "1", "2", "3", "4"]);
    let read = run(script);
    assert_eq!(read["latest"], json!(4.0), "{read}");
    for (v, ours) in answers.iter().enumerate() {
        let theirs = &read[v.to_string()];
        assert_eq!(&theirs["rows"], ours, "Delta version {v}");
    }

    // DuckDB's delta extension, the current version.
    match extension_python() {
        Some(ext) => {
            let mut script = Command::new(ext);
            script
                .arg(concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/tests/python/delta_read.py"
                ))
                .arg("duckdb")
                .arg(&table);
            let read = run(script);
            assert_eq!(&read["rows"], &answers[4], "DuckDB delta_scan");
        }
        None => eprintln!("skipped DuckDB: no .venv-ext (scripts/setup-python.sh makes it)"),
    }
}

fn log_bytes(table: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(table.join("_delta_log"))
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).unwrap())
        })
        .collect();
    files.sort();
    files
}

#[test]
fn a_lost_log_version_is_reported_and_written_again_at_start_up() {
    let s = TestServer::start_with(keeping());
    let t = s.admin_token();
    five_commits(&s, &t);
    let before = log_bytes(&table(&s));
    assert_eq!(before.len(), 5, "one log version per commit");
    let data = s.data_dir();
    let dir = s.stop();
    let table = data.join("data/default/lake/events/1");

    // The last version lost (a stop between the commit and its log): check reports it.
    std::fs::remove_file(log_file(&table, 4)).unwrap();
    let out = admin(&data, &["check"]);
    assert!(!out.status.success(), "a lagging log is drift");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let drift = report["report"]["delta"].to_string();
    assert!(
        drift.contains("00000000000000000004.json: missing"),
        "{report}"
    );

    // Start-up writes it again, byte for byte.
    let s = TestServer::start_in(dir, keeping());
    assert_eq!(log_bytes(&table), before);
    let dir = s.stop();

    // A version changed by hand is drift; `--repair` writes it again.
    std::fs::write(log_file(&table, 2), b"{}\n").unwrap();
    let out = admin(&data, &["check"]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        report["report"]["delta"]
            .to_string()
            .contains("00000000000000000002.json: differs from catalog commit 3"),
        "{report}"
    );
    let repaired = stdout_json(&admin(&data, &["check", "--repair"]));
    assert_eq!(repaired["report"]["logged"], 5, "{repaired}");
    assert_eq!(log_bytes(&table), before);

    // A whole log lost (a version stored before logs existed) is not drift, and comes back
    // the same at start-up.
    std::fs::remove_dir_all(table.join("_delta_log")).unwrap();
    let report = stdout_json(&admin(&data, &["check"]));
    assert_eq!(
        report["report"]["delta_unwritten"],
        json!(["data/default/lake/events/1"]),
        "{report}"
    );
    let s = TestServer::start_in(dir, keeping());
    assert_eq!(log_bytes(&table), before);
    let dir = s.stop();
    let out = admin(&dir.path().join("data"), &["check"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}
