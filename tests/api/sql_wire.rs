//! SQL over the PostgreSQL protocol: psql, and psycopg / pandas / SQLAlchemy from Python, signed
//! in as subjects of different permissions; the limits HTTP queries have (slots, time limit,
//! cancel, a closed connection) hold on the wire too.

use std::process::Command;

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::sql::server_with_data;
use crate::support::{Options, TestServer};

/// A long statement, stopped by a time limit, a cancel or a closed connection, never by finishing.
const SLOW: &str = "SELECT count(*) FROM generate_series(1, 2000000000) AS t(x) WHERE x % 7 = 3";

/// `psql` from Debian's postgresql-client (scripts/pg.sh installs it).
pub(crate) fn psql_binary() -> Option<String> {
    ["/usr/lib/postgresql/15/bin/psql", "/usr/bin/psql"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
        .map(str::to_string)
}

/// psql's output of `commands` (one `-c` each) as `user`/`password` on database `default`.
pub(crate) fn psql(
    s: &TestServer,
    user: &str,
    password: &str,
    commands: &[&str],
) -> (bool, String) {
    let out = psql_command(s, user, password, commands).output().unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

pub(crate) fn psql_command(
    s: &TestServer,
    user: &str,
    password: &str,
    commands: &[&str],
) -> Command {
    let addr = s
        .pg_addr()
        .expect("the server printed its PostgreSQL address");
    let mut cmd = Command::new(psql_binary().unwrap());
    cmd.arg(format!(
        "host={} port={} user={user} dbname=default sslmode=disable",
        addr.ip(),
        addr.port()
    ))
    .args(["-X", "-At", "-v", "VERBOSITY=verbose"])
    .env("PGPASSWORD", password)
    .env("PGCONNECT_TIMEOUT", "10");
    for c in commands {
        cmd.args(["-c", c]);
    }
    cmd
}

pub(crate) fn pg_options() -> Options {
    Options {
        env: vec![("RAPID_PG_LISTEN".into(), "127.0.0.1:0".into())],
        ..Options::default()
    }
}

/// The listener on, with one query slot, no queue and a time limit of `seconds`.
fn one_slot(seconds: &str) -> Options {
    let mut options = pg_options();
    for (k, v) in [
        ("RAPID_QUERY_CONCURRENCY", "1"),
        ("RAPID_QUERY_QUEUE_WAIT_MS", "0"),
        ("RAPID_QUERY_TIMEOUT_SECONDS", seconds),
    ] {
        options.env.push((k.into(), v.into()));
    }
    options
}

#[test]
fn psql_signs_in_as_a_client_and_sees_only_its_datasets() {
    let Some(_) = psql_binary() else {
        eprintln!("skipped: psql is not installed (scripts/pg.sh installs it)");
        return;
    };
    let s = server_with_data(pg_options());
    let (public_id, public_secret) = s.create_client("pg-public", &["READ_PUBLIC"]);
    let (all_id, all_secret) = s.create_client("pg-all", &["READ_ALL", "READ_PROTECTED_SECRET"]);
    let listing = "SELECT table_schema || '.' || table_name FROM information_schema.tables \
                   WHERE table_catalog = 'default' \
                   AND table_schema NOT IN ('information_schema', 'pg_catalog') ORDER BY 1";
    let (ok, out) = psql(&s, &public_id, &public_secret, &[listing]);
    assert!(ok, "{out}");
    assert_eq!(out.trim(), "travel.trips");
    let (ok, out) = psql(&s, &all_id, &all_secret, &[listing]);
    assert!(ok, "{out}");
    assert_eq!(out.trim(), "secret.payroll\ntravel.trips");
    // psql's own catalog queries (pg_catalog emulation): the protected table shows only to its reader.
    let (ok, out) = psql(&s, &public_id, &public_secret, &["\\dt *.*"]);
    assert!(
        ok && out.contains("travel|trips|") && !out.contains("payroll"),
        "{out}"
    );
    let (ok, out) = psql(&s, &all_id, &all_secret, &["\\dt *.*"]);
    assert!(ok && out.contains("secret|payroll|"), "{out}");

    let (ok, out) = psql(
        &s,
        &public_id,
        &public_secret,
        &["SELECT region, count(*) FROM travel.trips GROUP BY region ORDER BY region"],
    );
    assert!(ok, "{out}");
    assert_eq!(out.trim(), "north|2\nsouth|1\nwest|1");

    let (ok, out) = psql(
        &s,
        &public_id,
        &public_secret,
        &["SELECT * FROM secret.payroll"],
    );
    assert!(!ok && out.contains("42P01"), "{out}");
    let (ok, out) = psql(&s, &all_id, &all_secret, &["DELETE FROM travel.trips"]);
    assert!(!ok && out.contains("25006"), "{out}");
    // Before the session exists psql shows no SQLSTATE (28P01 on the wire).
    let (ok, out) = psql(&s, &public_id, "wrong-secret", &["SELECT 1"]);
    assert!(
        !ok && out.contains("password authentication failed"),
        "{out}"
    );
}

/// psycopg 3 and pandas (`tests/python/pg_clients.py`) as a PUBLIC reader and as a reader of the
/// protected domain; the first session again after its permissions were taken away, given back,
/// and after its client was deleted.
#[test]
fn psycopg_and_pandas_read_and_lose_access_at_once() {
    use std::io::{BufRead, BufReader, Write};
    let s = server_with_data(pg_options());
    let (id, secret) = s.create_client("pg-pandas", &["READ_PUBLIC"]);
    let addr = s.pg_addr().unwrap();
    let mut child = Command::new(crate::pyarrow_readback::python())
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/python/pg_clients.py"
        ))
        .args([
            addr.ip().to_string(),
            addr.port().to_string(),
            id.clone(),
            secret,
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().expect("the script's answer").unwrap();
    let answer: Value = serde_json::from_str(&first).unwrap();
    assert_eq!(answer["tables"], json!(["travel.trips"]), "{answer}");
    assert_eq!(answer["counts"], json!({"north": 2, "south": 1, "west": 1}));
    assert_eq!(answer["sqlalchemy"], answer["counts"], "{answer}");
    assert_eq!(answer["write"], "25006");
    assert_eq!(answer["protected"], "42P01");
    assert_eq!(lines.next().unwrap().unwrap(), "ready");

    let (status, body) = s.call(
        "PUT",
        "/api/subjects/permissions",
        Some(&s.admin_token()),
        Some(&json!({"subject_id": id, "permissions": ["WRITE_ALL"]})),
    );
    assert_eq!(status, StatusCode::OK, "{body}");
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"go\n").unwrap();
    assert_eq!(lines.next().unwrap().unwrap(), "42P01");

    // A second subject, of another permission kind, sees the PROTECTED dataset too.
    let (reader, reader_secret) =
        s.create_client("pg-protected", &["READ_PUBLIC", "READ_PROTECTED_SECRET"]);
    let other = Command::new(crate::pyarrow_readback::python())
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/python/pg_clients.py"
        ))
        .args([
            addr.ip().to_string(),
            addr.port().to_string(),
            reader,
            reader_secret,
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&other.stdout).to_string();
    assert!(other.status.success(), "{text}");
    let answer: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(
        answer["tables"],
        json!(["secret.payroll", "travel.trips"]),
        "{answer}"
    );
    assert_eq!(answer["protected"], "ok");

    let admin = s.admin_token();
    let (status, body) = s.call(
        "PUT",
        "/api/subjects/permissions",
        Some(&admin),
        Some(&json!({"subject_id": id, "permissions": ["READ_PUBLIC"]})),
    );
    assert_eq!(status, StatusCode::OK, "{body}");
    stdin.write_all(b"go\n").unwrap();
    assert_eq!(lines.next().unwrap().unwrap(), "ok");
    let (status, body) = s.call("DELETE", &format!("/api/client/{id}"), Some(&admin), None);
    assert_eq!(status, StatusCode::OK, "{body}");
    stdin.write_all(b"go\n").unwrap();
    assert_eq!(lines.next().unwrap().unwrap(), "28000");
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

/// A user's name and password sign in too; limits answer with their SQLSTATE and the session
/// goes on.
#[test]
fn the_wire_signs_in_users_and_keeps_its_limits() {
    if psql_binary().is_none() {
        eprintln!("skipped: psql is not installed (scripts/pg.sh installs it)");
        return;
    }
    let mut options = pg_options();
    options
        .env
        .push(("RAPID_QUERY_TIMEOUT_SECONDS".into(), "1".into()));
    let s = TestServer::start_with(options);
    let password = s.create_user("analyst");
    let huge = format!("SELECT '{}'", "x".repeat(100_001));
    let (ok, out) = psql(
        &s,
        "analyst",
        &password,
        &[
            SLOW,
            "SELECT 42",
            &huge,
            "SET datafusion.execution.target_partitions = 64",
        ],
    );
    let _ = ok; // psql goes on after an error; each one is in its output
    assert!(out.contains("ERROR:  57014"), "{out}");
    assert!(out.lines().any(|l| l == "42"), "{out}");
    assert!(out.contains("ERROR:  54000"), "{out}");
    assert!(out.contains("ERROR:  42501"), "{out}");
}

/// With a certificate and key the listener speaks TLS (`sslmode=require`), which is what lets it
/// listen beyond loopback.
#[test]
fn the_wire_offers_tls_with_a_certificate() {
    if psql_binary().is_none() {
        eprintln!("skipped: psql is not installed (scripts/pg.sh installs it)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    let made = Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
        ])
        .args(["-subj", "/CN=localhost", "-keyout"])
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .unwrap();
    assert!(made.status.success(), "{made:?}");
    let mut options = pg_options();
    options
        .env
        .push(("RAPID_PG_TLS_CERT".into(), cert.display().to_string()));
    options
        .env
        .push(("RAPID_PG_TLS_KEY".into(), key.display().to_string()));
    let s = TestServer::start_with(options);
    let addr = s.pg_addr().unwrap();
    let out = Command::new(psql_binary().unwrap())
        .arg(format!(
            "host={} port={} user={} dbname=default sslmode=require",
            addr.ip(),
            addr.port(),
            crate::support::ADMIN_ID
        ))
        .args(["-X", "-At", "-c", "\\conninfo", "-c", "SELECT 7"])
        .env("PGPASSWORD", crate::support::ADMIN_SECRET)
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("SSL connection"), "{text}");
    assert!(text.lines().any(|l| l == "7"), "{text}");
}

/// Statements over the wire take the HTTP queries' slots: with every slot busy a statement is
/// refused at once with 53000, and the slot is free again when the slow statement stops.
#[test]
fn the_wire_shares_the_query_slots() {
    if psql_binary().is_none() {
        eprintln!("skipped: psql is not installed (scripts/pg.sh installs it)");
        return;
    }
    let s = std::sync::Arc::new(TestServer::start_with(one_slot("3")));
    let busy = {
        let s = s.clone();
        std::thread::spawn(move || {
            psql(
                &s,
                crate::support::ADMIN_ID,
                crate::support::ADMIN_SECRET,
                &[SLOW],
            )
        })
    };
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let (ok, out) = psql(
        &s,
        crate::support::ADMIN_ID,
        crate::support::ADMIN_SECRET,
        &["SELECT 1"],
    );
    assert!(!ok && out.contains("53000"), "{out}");
    let (_, out) = busy.join().unwrap();
    assert!(out.contains("57014"), "{out}");
    let (ok, out) = psql(
        &s,
        crate::support::ADMIN_ID,
        crate::support::ADMIN_SECRET,
        &["SELECT 1"],
    );
    assert!(ok && out.trim() == "1", "{out}");
}

/// A client killed while its statement runs (its socket closed abruptly) frees the statement's
/// query slot at once, long before the time limit: the only slot serves the next statement.
#[test]
fn a_closed_connection_stops_its_statement() {
    if psql_binary().is_none() {
        eprintln!("skipped: psql is not installed (scripts/pg.sh installs it)");
        return;
    }
    let s = TestServer::start_with(one_slot("60"));
    let (id, secret) = (crate::support::ADMIN_ID, crate::support::ADMIN_SECRET);
    let mut busy = psql_command(&s, id, secret, &[SLOW])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    // The slot is taken while the statement runs.
    let (ok, out) = psql(&s, id, secret, &["SELECT 1"]);
    assert!(!ok && out.contains("53000"), "{out}");
    busy.kill().unwrap();
    busy.wait().unwrap();
    let killed = std::time::Instant::now();
    loop {
        let (ok, out) = psql(&s, id, secret, &["SELECT 1"]);
        if ok {
            assert_eq!(out.trim(), "1");
            break;
        }
        assert!(out.contains("53000"), "{out}");
        assert!(
            killed.elapsed() < std::time::Duration::from_secs(10),
            "the slot is still taken {:?} after the client was killed",
            killed.elapsed()
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

/// The protocol's cancel request (psycopg's `cancel_safe`) stops a running statement long before
/// its time limit, and the session goes on.
#[test]
fn a_cancel_request_stops_the_statement() {
    let s = TestServer::start_with(pg_options());
    let addr = s.pg_addr().unwrap();
    let out = Command::new(crate::pyarrow_readback::python())
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/python/pg_cancel.py"
        ))
        .args([addr.ip().to_string(), addr.port().to_string()])
        .args([crate::support::ADMIN_ID, crate::support::ADMIN_SECRET])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answer: Value = serde_json::from_str(text.trim()).unwrap();
    assert_eq!(answer["sqlstate"], "57014", "{answer}");
    assert!(answer["seconds"].as_f64().unwrap() < 10.0, "{answer}");
    assert_eq!(answer["after"], 5);
}
