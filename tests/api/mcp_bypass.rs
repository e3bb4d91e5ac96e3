//! The bypass corpus (issue 59): statements built from the published ways past read-only modes
//! of SQL MCP servers (several statements in one query, `COMMIT`/`ROLLBACK` ending the read-only
//! transaction, leading comments, `COPY`, file-reading functions, settings, writes hidden in a
//! CTE or an `EXPLAIN`, very long or deep inputs). Each is sent by the most privileged subject
//! to the MCP `sql` tool and to `POST /api/sql`: every one is refused on both, and afterwards the
//! datasets, their rows and schemas, the subjects and the files outside the service are as
//! before.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::mcp::tool;
use crate::sql::server_with_data;
use crate::support::{Options, TestServer};

const TRIPS: &str = r#""default"."travel"."trips""#;

/// Files a `COPY ... TO` or a file-writing function would create if it ran.
const PROBES: &[&str] = &["/tmp/rapid_mcp_bypass_copy.csv", "/tmp/rapid_mcp_bypass.db"];

fn corpus() -> Vec<String> {
    let t = TRIPS;
    let mut statements: Vec<String> = [
        // Several statements in one simple query.
        format!("SELECT 1; DROP TABLE {t}"),
        format!("SELECT * FROM {t}; DELETE FROM {t}"),
        "SELECT 1;".repeat(1000),
        // Ending the read-only transaction first.
        format!("COMMIT; DROP TABLE {t}"),
        format!("ROLLBACK; DELETE FROM {t}"),
        format!("END; INSERT INTO {t} VALUES ('x', 1, 1.0)"),
        format!("BEGIN READ WRITE; UPDATE {t} SET price = 0; COMMIT"),
        "SET TRANSACTION READ WRITE".to_string(),
        // Comments hiding the statement's kind.
        format!("/* SELECT */ DROP TABLE {t}"),
        format!("-- SELECT\nDELETE FROM {t}"),
        format!("SELECT 1 /* ; */ ; TRUNCATE {t}"),
        format!("SELECT 1 -- \n; DROP TABLE {t}"),
        format!("SELECT 1\u{0}; DROP TABLE {t}"),
        format!("SELECT 1\u{ff1b} DROP TABLE {t}"),
        // Writes and definitions in every shape.
        format!("INSERT INTO {t} SELECT * FROM {t}"),
        format!("UPDATE {t} SET price = 0"),
        format!("DELETE FROM {t}"),
        format!("TRUNCATE {t}"),
        format!("ALTER TABLE {t} ADD COLUMN pwned int"),
        format!("DROP TABLE {t}"),
        r#"DROP SCHEMA "default"."travel" CASCADE"#.to_string(),
        "CREATE TABLE pwned AS SELECT 1 AS x".to_string(),
        "CREATE VIEW pwned AS SELECT 1 AS x".to_string(),
        "CREATE EXTERNAL TABLE pwned STORED AS CSV LOCATION '/etc/passwd'".to_string(),
        format!("WITH gone AS (DELETE FROM {t} RETURNING *) SELECT * FROM gone"),
        format!("EXPLAIN ANALYZE DELETE FROM {t}"),
        format!("EXPLAIN INSERT INTO {t} VALUES ('x', 1, 1.0)"),
        format!("PREPARE pwn AS DELETE FROM {t}"),
        "EXECUTE pwn".to_string(),
        "DO $$ BEGIN PERFORM 1; END $$".to_string(),
        "CALL pwned()".to_string(),
        "VACUUM".to_string(),
        // COPY both ways.
        format!("COPY {t} TO '{}'", PROBES[0]),
        format!("COPY (SELECT * FROM {t}) TO '{}'", PROBES[0]),
        format!("COPY {t} FROM '/etc/passwd'"),
        // Reading files and reaching out.
        "SELECT pg_read_file('/etc/passwd')".to_string(),
        "SELECT pg_read_binary_file('/etc/passwd')".to_string(),
        "SELECT * FROM pg_ls_dir('/')".to_string(),
        "SELECT lo_import('/etc/passwd')".to_string(),
        "SELECT * FROM read_csv('/etc/passwd')".to_string(),
        "SELECT * FROM read_parquet('/etc/hosts')".to_string(),
        format!("ATTACH DATABASE '{}' AS pwned", PROBES[1]),
        "INSTALL httpfs".to_string(),
        "LOAD 'httpfs'".to_string(),
        "SELECT dblink_exec('host=127.0.0.1', 'DROP TABLE x')".to_string(),
        // Settings and roles.
        "SET datafusion.execution.batch_size = 1".to_string(),
        "SET ROLE postgres".to_string(),
        "SET SESSION AUTHORIZATION postgres".to_string(),
        "RESET ALL".to_string(),
        "SELECT set_config('role', 'postgres', false)".to_string(),
    ]
    .into();
    // Very long, and very deep.
    statements.push(format!("SELECT {}1", "1+".repeat(60_000)));
    statements.push(format!(
        "SELECT {}1{}",
        "(".repeat(5_000),
        ")".repeat(5_000)
    ));
    statements.push(format!(
        "SELECT * FROM {t} WHERE {}",
        vec!["price > 0"; 20_000].join(" AND ")
    ));
    statements
}

/// What the corpus must leave as it found: the datasets listed, the rows and schemas of both,
/// the subjects.
fn state_of(s: &TestServer, admin: &str) -> Value {
    let (_, listed) = s.call("POST", "/api/datasets", Some(admin), Some(&json!({})));
    let rows = |path: &str, by: &[&str]| {
        let order: Vec<Value> = by.iter().map(|c| json!({"column": c})).collect();
        let query = json!({"order_by_columns": order});
        s.call("POST", path, Some(admin), Some(&query)).1
    };
    let info = |path: &str| s.call("GET", path, Some(admin), None).1["columns"].clone();
    let (_, subjects) = s.call("GET", "/api/subjects", Some(admin), None);
    json!({
        "listed": listed,
        "trips": rows("/api/datasets/default/travel/trips/query", &["region", "year"]),
        "payroll": rows("/api/datasets/default/secret/payroll/query", &["salary"]),
        "trips_columns": info("/api/datasets/default/travel/trips/info"),
        "payroll_columns": info("/api/datasets/default/secret/payroll/info"),
        "subjects": subjects,
    })
}

#[test]
fn every_bypass_statement_is_refused_and_nothing_changes() {
    for probe in PROBES {
        let _ = std::fs::remove_file(probe);
    }
    let s = server_with_data(Options::default());
    let admin = s.admin_token();
    let before = state_of(&s, &admin);
    let corpus = corpus();
    assert!(corpus.len() >= 25, "{}", corpus.len());
    let mut passed = vec![];
    for statement in &corpus {
        let shown: String = statement.chars().take(80).collect();
        if let Ok(answer) = tool(&s, &admin, "sql", json!({"sql": statement})) {
            passed.push(format!("mcp: {shown} -> {answer}"));
        }
        let (status, body) = s.call(
            "POST",
            "/api/sql",
            Some(&admin),
            Some(&json!({"sql": statement})),
        );
        if status != StatusCode::BAD_REQUEST {
            passed.push(format!("/api/sql {status}: {shown} -> {body}"));
        }
    }
    assert!(
        passed.is_empty(),
        "{} of {} statements were not refused:\n{}",
        passed.len(),
        corpus.len(),
        passed.join("\n")
    );
    assert_eq!(state_of(&s, &admin), before);
    for probe in PROBES {
        assert!(!std::path::Path::new(probe).exists(), "{probe} was written");
    }
    // The service still answers a plain SELECT through both doors.
    let count = format!("SELECT count(*) AS n FROM {TRIPS}");
    let answer = tool(&s, &admin, "sql", json!({"sql": count})).unwrap();
    assert_eq!(answer["rows"], json!([[4]]), "{answer}");
    eprintln!(
        "bypass corpus: {} statements, all refused on both doors",
        corpus.len()
    );
}
