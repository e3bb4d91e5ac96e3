//! The PostgreSQL JDBC driver (what DBeaver and Metabase connect with) against the wire endpoint:
//! the DatabaseMetaData calls those tools make on connect, then a prepared statement, as two
//! subjects of different permission kinds (`tests/java/JdbcClient.java`).

use std::process::Command;

use serde_json::{json, Value};

use crate::sql::server_with_data;
use crate::sql_wire::pg_options;
use crate::support::TestServer;

/// The driver's jar (scripts/jdbc.sh installs it and sets RAPID_TEST_JDBC_JAR); None skips the
/// test with a line, unless RAPID_REQUIRE_JDBC=1 (CI) makes its absence a failure.
fn jdbc_jar() -> Option<String> {
    let jar = std::env::var("RAPID_TEST_JDBC_JAR")
        .unwrap_or_else(|_| "/usr/share/java/postgresql.jar".to_string());
    let present = std::path::Path::new(&jar).exists()
        && Command::new("java").arg("-version").output().is_ok();
    if !present && std::env::var("RAPID_REQUIRE_JDBC").as_deref() == Ok("1") {
        panic!("RAPID_REQUIRE_JDBC=1 but no java or no driver at {jar} (scripts/jdbc.sh)");
    }
    present.then_some(jar)
}

fn jdbc(s: &TestServer, jar: &str, user: &str, password: &str) -> Value {
    let addr = s.pg_addr().unwrap();
    let out = Command::new("java")
        .args(["-cp", jar])
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/java/JdbcClient.java"
        ))
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
        json!(["price.float8", "region.text", "year.int8"]),
        "{answer}"
    );
    assert_eq!(answer["primary_keys"], json!([]), "{answer}");
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
