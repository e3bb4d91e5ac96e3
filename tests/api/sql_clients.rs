//! Clients of the wire endpoint beyond psql and psycopg, each as two subjects of different
//! permission kinds: the PostgreSQL JDBC driver (what DBeaver and Metabase connect with: the
//! DatabaseMetaData calls those tools make on connect, then a prepared statement;
//! `tests/java/JdbcClient.java`) and DuckDB's `postgres` extension (`tests/python/pg_duckdb.py`).

use std::process::Command;

use serde_json::{json, Value};

use crate::sql::server_with_data;
use crate::sql_wire::pg_options;
use crate::support::TestServer;

/// Whether a missing client fails its test (RAPID_REQUIRE_CLIENTS=1, as in CI) or skips it.
fn required() -> bool {
    std::env::var("RAPID_REQUIRE_CLIENTS").as_deref() == Ok("1")
}

/// The driver's jar (scripts/jdbc.sh installs it and sets RAPID_TEST_JDBC_JAR).
fn jdbc_jar() -> Option<String> {
    let jar = std::env::var("RAPID_TEST_JDBC_JAR")
        .unwrap_or_else(|_| "/usr/share/java/postgresql.jar".to_string());
    let present = std::path::Path::new(&jar).exists()
        && Command::new("java").arg("-version").output().is_ok();
    if !present && required() {
        panic!("RAPID_REQUIRE_CLIENTS=1 but no java or no driver at {jar} (scripts/jdbc.sh)");
    }
    present.then_some(jar)
}

/// The JSON line a client program prints after signing in to `s`'s listener as `user`: `program`
/// takes the listener's host, port, user and password as its last four arguments.
fn client_answer(mut program: Command, s: &TestServer, user: &str, password: &str) -> Value {
    let addr = s.pg_addr().unwrap();
    let out = program
        .args([
            &addr.ip().to_string(),
            &addr.port().to_string(),
            user,
            password,
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(text.trim()).unwrap()
}

fn jdbc(s: &TestServer, jar: &str, user: &str, password: &str) -> Value {
    let mut java = Command::new("java");
    java.args(["-cp", jar]).arg(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/java/JdbcClient.java"
    ));
    client_answer(java, s, user, password)
}

#[test]
fn jdbc_metadata_and_a_prepared_statement_show_each_subject_its_datasets() {
    let Some(jar) = jdbc_jar() else {
        eprintln!("skipped: no java or no JDBC driver (scripts/jdbc.sh installs them)");
        return;
    };
    let s = server_with_data(pg_options());
    let (public_id, public_secret) = s.create_client("jdbc-public", &["READ_PUBLIC"]);
    let answer = jdbc(&s, &jar, &public_id, &public_secret);
    assert_eq!(answer["product"], "PostgreSQL", "{answer}");
    assert_eq!(answer["catalogs"], json!(["default"]), "{answer}");
    assert_eq!(
        answer["schemas"],
        json!(["pg_catalog", "public", "travel"]),
        "{answer}"
    );
    assert_eq!(answer["tables"], json!(["travel.trips"]), "{answer}");
    assert_eq!(
        answer["columns"],
        json!(["price.float8.YES", "region.text.NO", "year.int8.NO"]),
        "{answer}"
    );
    // Datasets have no keys and no indexes: each call answers, with nothing.
    for call in [
        "primary_keys",
        "imported_keys",
        "exported_keys",
        "indexes",
        "unique_indexes",
    ] {
        assert_eq!(answer[call], json!([]), "{call}: {answer}");
    }
    // The types, with the numbers a tool maps columns by.
    let types = answer["type_info"]
        .as_array()
        .unwrap_or_else(|| panic!("getTypeInfo: {answer}"));
    for name in ["int8", "float8", "text", "bool", "date", "timestamp"] {
        assert!(types.contains(&json!(name)), "{name}: {answer}");
    }
    // A parameter bound to a prepared statement (the extended protocol), as every tool sends.
    assert_eq!(
        answer["prepared"],
        json!(["north=2", "south=1"]),
        "{answer}"
    );
    assert_eq!(answer["protected"]["sqlstate"], "42P01", "{answer}");
    assert_eq!(answer["write"]["sqlstate"], "25006", "{answer}");

    let (reader, reader_secret) =
        s.create_client("jdbc-protected", &["READ_PUBLIC", "READ_PROTECTED_SECRET"]);
    let answer = jdbc(&s, &jar, &reader, &reader_secret);
    assert_eq!(
        answer["schemas"],
        json!(["pg_catalog", "public", "secret", "travel"]),
        "{answer}"
    );
    assert_eq!(
        answer["tables"],
        json!(["secret.payroll", "travel.trips"]),
        "{answer}"
    );
    assert_eq!(answer["protected"], "ok", "{answer}");
    assert_eq!(
        answer["prepared"],
        json!(["north=2", "south=1"]),
        "{answer}"
    );
}

/// .venv-ext's Python, with DuckDB's extensions (scripts/setup-python.sh makes it).
pub(crate) fn extension_python() -> Option<String> {
    let python = std::env::var("RAPID_TEST_EXT_PYTHON").unwrap_or_else(|_| {
        concat!(env!("CARGO_MANIFEST_DIR"), "/.venv-ext/bin/python").to_string()
    });
    let present = std::path::Path::new(&python).exists();
    if !present && required() {
        panic!("RAPID_REQUIRE_CLIENTS=1 but no {python} (scripts/setup-python.sh)");
    }
    present.then_some(python)
}

fn duckdb_attach(s: &TestServer, python: &str, user: &str, password: &str) -> Value {
    let mut script = Command::new(python);
    script.arg(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/python/pg_duckdb.py"
    ));
    client_answer(script, s, user, password)
}

#[test]
fn duckdbs_postgres_extension_attaches_and_lists_only_readable_datasets() {
    let Some(python) = extension_python() else {
        eprintln!("skipped: no .venv-ext (scripts/setup-python.sh makes it)");
        return;
    };
    let s = server_with_data(pg_options());
    let counts = json!({"north": 2, "south": 1, "west": 1});
    let (public_id, public_secret) = s.create_client("duck-public", &["READ_PUBLIC"]);
    let answer = duckdb_attach(&s, &python, &public_id, &public_secret);
    assert_eq!(answer["tables"], json!(["travel.trips"]), "{answer}");
    assert_eq!(answer["counts"], counts, "{answer}");
    // information_schema names PostgreSQL's types, so numbers arrive as numbers.
    assert_eq!(answer["sum"], json!(35.5), "{answer}");
    let types = json!(["price:DOUBLE", "region:VARCHAR", "year:BIGINT"]);
    assert_eq!(answer["types"], types, "{answer}");
    // With the extension's defaults (binary COPY with ctid page ranges, PostgreSQL's own
    // catalogue tables on attach): the answer of /query.
    let token = s.token(&public_id, &public_secret);
    let query = json!({
        "select_columns": ["region", "count(*) AS n", "sum(price) AS total"],
        "group_by_columns": ["region"]
    });
    let path = "/api/datasets/default/travel/trips/query";
    let (status, by_http) = s.call("POST", path, Some(&token), Some(&query));
    assert_eq!(status, reqwest::StatusCode::OK, "{by_http}");
    let mut expected = serde_json::Map::new();
    for row in by_http.as_object().unwrap().values() {
        let region = row["region"].as_str().unwrap().to_string();
        expected.insert(region, json!([row["n"], row["total"]]));
    }
    assert_eq!(expected.len(), 3, "{by_http}");
    assert_eq!(answer["defaults"], Value::Object(expected), "{answer}");
    let (reader, reader_secret) =
        s.create_client("duck-protected", &["READ_PUBLIC", "READ_PROTECTED_SECRET"]);
    let answer = duckdb_attach(&s, &python, &reader, &reader_secret);
    assert_eq!(
        answer["tables"],
        json!(["secret.payroll", "travel.trips"]),
        "{answer}"
    );
    assert_eq!(answer["counts"], counts, "{answer}");
}
