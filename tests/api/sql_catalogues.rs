//! Clients' catalogue queries with each client's defaults: psql's meta-commands (run by the real
//! `psql`), the database a client names at sign-in, and the one naming rule for unaliased
//! expressions on `/api/sql` and the wire. Each as a PUBLIC reader and as the reader of the
//! PROTECTED domain, which no other subject's catalogue shows.

use reqwest::StatusCode;
use serde_json::json;

use crate::sql::server_with_data;
use crate::sql_wire::{pg_options, psql, psql_binary, psql_command};

/// psql's output of one meta-command (`-c`), which must run without an error.
fn meta(s: &crate::support::TestServer, user: &str, password: &str, command: &str) -> String {
    let (ok, out) = psql(s, user, password, &[command]);
    assert!(ok && !out.contains("ERROR"), "{command}: {out}");
    out
}

#[test]
fn psqls_meta_commands_describe_what_the_subject_may_read() {
    let Some(_) = psql_binary() else {
        eprintln!("skipped: psql is not installed (scripts/pg.sh installs it)");
        return;
    };
    let s = server_with_data(pg_options());
    let (public, public_secret) = s.create_client("meta-public", &["READ_PUBLIC"]);
    let (reader, reader_secret) =
        s.create_client("meta-protected", &["READ_PUBLIC", "READ_PROTECTED_SECRET"]);
    let p = |c: &str| meta(&s, &public, &public_secret, c);
    let r = |c: &str| meta(&s, &reader, &reader_secret, c);

    // `\d table`: its columns with PostgreSQL's types (psql -At: name|type|collation|...).
    // Nullable as the dataset's schema says: `region` and `year` do not allow null.
    let described = p("\\d travel.trips");
    for column in [
        "region|text||not null|\n",
        "year|bigint||not null|\n",
        "price|double precision|||\n",
    ] {
        assert!(described.contains(column), "{described}");
    }
    let verbose = p("\\d+ travel.trips");
    assert!(verbose.contains("price|double precision|"), "{verbose}");
    assert!(p("\\d travel.*").contains("region|text|"));
    // The lists: tables, schemas, databases, and none of views, indexes.
    assert_eq!(p("\\d").trim(), "travel|trips|table|postgres");
    assert_eq!(p("\\dt").trim(), "travel|trips|table|postgres");
    assert!(p("\\dt+").starts_with("travel|trips|table|postgres|permanent|"));
    assert_eq!(p("\\dn").trim(), "public|postgres\ntravel|postgres");
    // Only the databases a session can be in: not the emulation's `postgres` (refused, 3D000).
    let databases = p("\\l");
    assert!(
        databases.lines().any(|l| l.starts_with("default|")),
        "{databases}"
    );
    assert!(
        !databases.lines().any(|l| l.starts_with("postgres|")),
        "{databases}"
    );
    assert_eq!(p("\\dv").trim(), "Did not find any relations.");
    assert_eq!(p("\\di").trim(), "Did not find any relations.");
    // `\du`: the subject itself, no other.
    let roles = p("\\du");
    assert!(roles.starts_with(&format!("{public}|")), "{roles}");
    assert_eq!(roles.trim().lines().count(), 1, "{roles}");
    let info = p("\\conninfo");
    assert!(
        info.contains(&format!("database \"default\" as user \"{public}\"")),
        "{info}"
    );
    assert!(p("\\x").contains("Expanded display is on"));

    // The PROTECTED table: invisible to the PUBLIC reader in every list, there for its reader.
    for command in ["\\d", "\\dt", "\\dt+", "\\dn", "\\d *.*"] {
        assert!(!p(command).contains("secret"), "{command}");
    }
    let (ok, out) = psql(&s, &public, &public_secret, &["\\d secret.payroll"]);
    assert!(
        !ok && out.contains("Did not find any relation named"),
        "{out}"
    );
    assert!(r("\\d secret.payroll").contains("salary|bigint|"));
    assert_eq!(
        r("\\dt").trim(),
        "secret|payroll|table|postgres\ntravel|trips|table|postgres"
    );
    assert_eq!(
        r("\\dn").trim(),
        "public|postgres\nsecret|postgres\ntravel|postgres"
    );
}

#[test]
fn an_unknown_database_is_refused_naming_the_layers_the_subject_may_read() {
    let Some(_) = psql_binary() else {
        eprintln!("skipped: psql is not installed (scripts/pg.sh installs it)");
        return;
    };
    let s = server_with_data(pg_options());
    let (id, secret) = s.create_client("db-typo", &["READ_PUBLIC"]);
    let addr = s.pg_addr().unwrap();
    let mut cmd = std::process::Command::new(psql_binary().unwrap());
    cmd.arg(format!(
        "host={} port={} user={id} dbname=no_such_layer sslmode=disable",
        addr.ip(),
        addr.port()
    ))
    .args(["-X", "-c", "SELECT 1"])
    .env("PGPASSWORD", &secret);
    let out = cmd.output().unwrap();
    let text = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!out.status.success(), "{text}");
    assert!(
        text.contains("database \"no_such_layer\" does not exist")
            && text.contains("may read these: default"),
        "{text}"
    );
    // The layer itself still signs in.
    let (ok, out) = psql(&s, &id, &secret, &["SELECT 1"]);
    assert!(ok && out.trim() == "1", "{out}");
}

#[test]
fn unaliased_expressions_are_named_as_written_on_both_sql_fronts() {
    let s = server_with_data(pg_options());
    let (id, secret) = s.create_client("names", &["READ_PUBLIC"]);
    let token = s.token(&id, &secret);
    let sql = "SELECT region, year + (-37), count(*), NULL, NULL FROM travel.trips \
               WHERE region = 'south' GROUP BY region, year";
    let qualified = sql.replace("FROM travel.trips", "FROM \"default\".travel.trips");
    let (status, body) = s.call(
        "POST",
        "/api/sql",
        Some(&token),
        Some(&json!({"sql": qualified})),
    );
    assert_eq!(status, StatusCode::OK, "{body}");
    let names: Vec<&str> = body["0"]
        .as_object()
        .map(|row| row.keys().map(String::as_str).collect())
        .unwrap_or_default();
    assert_eq!(
        names,
        ["region", "year + (-37)", "count(*)", "NULL", "NULL_2"],
        "{body}"
    );
    assert_eq!(body["0"]["year + (-37)"], json!(1981), "{body}");
    if psql_binary().is_none() {
        eprintln!("skipped the wire: psql is not installed (scripts/pg.sh installs it)");
        return;
    }
    // psql -At with a header: the names are the first line.
    let mut cmd = psql_command(&s, &id, &secret, &[sql]);
    let out = cmd.arg("-P").arg("tuples_only=off").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "{text}");
    assert_eq!(
        text.lines().next(),
        Some("region|year + (-37)|count(*)|NULL|NULL_2"),
        "{text}"
    );
}

/// SQLAlchemy's inspector through psycopg with its defaults (`tests/python/pg_inspect.py`).
fn inspect(s: &crate::support::TestServer, user: &str, password: &str) -> serde_json::Value {
    run_script(s, "pg_inspect.py", user, password)
}

/// The JSON a client script in `tests/python` prints, given the listener and a subject.
pub(crate) fn run_script(
    s: &crate::support::TestServer,
    script: &str,
    user: &str,
    password: &str,
) -> serde_json::Value {
    run_script_in(
        &crate::pyarrow_readback::python(),
        s,
        script,
        user,
        password,
    )
}

/// [`run_script`] with the Python of another environment (`.venv-ext`).
pub(crate) fn run_script_in(
    python: &str,
    s: &crate::support::TestServer,
    script: &str,
    user: &str,
    password: &str,
) -> serde_json::Value {
    let addr = s.pg_addr().unwrap();
    let out = std::process::Command::new(python)
        .arg(format!(
            "{}/tests/python/{script}",
            env!("CARGO_MANIFEST_DIR")
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
fn sqlalchemys_inspector_reflects_schemas_tables_and_columns() {
    let s = server_with_data(pg_options());
    let (public, public_secret) = s.create_client("sa-public", &["READ_PUBLIC"]);
    let answer = inspect(&s, &public, &public_secret);
    // `NOT LIKE 'pg/_%' ESCAPE '/'` leaves out pg_catalog, as PostgreSQL's own answer does.
    assert_eq!(answer["schemas"], json!(["public", "travel"]), "{answer}");
    assert_eq!(
        answer["tables"],
        json!({"public": [], "travel": ["trips"]}),
        "{answer}"
    );
    assert_eq!(
        answer["views"],
        json!({"public": [], "travel": []}),
        "{answer}"
    );
    // Each reflection Superset's dataset creation and "sync columns" call answers: the columns
    // with PostgreSQL's types, and no key, index, constraint or comment.
    let trips = &answer["reflected"]["travel.trips"];
    let column = |name: &str, t: &str, nullable: bool| json!({"name": name, "type": t, "nullable": nullable, "default": null, "comment": null});
    assert_eq!(
        trips["columns"],
        json!([
            column("region", "TEXT", false),
            column("year", "BIGINT", false),
            column("price", "DOUBLE PRECISION", true)
        ]),
        "{answer}"
    );
    assert_eq!(
        trips["pk"],
        json!({"name": null, "constrained_columns": []}),
        "{answer}"
    );
    for none in ["foreign_keys", "indexes", "unique", "checks"] {
        assert_eq!(trips[none], json!([]), "{none}: {answer}");
    }
    assert_eq!(trips["comment"], json!({"text": null}), "{answer}");
    assert_eq!(answer["has_table"], json!(true), "{answer}");
    assert_eq!(answer["sum"], json!(35.5), "{answer}");

    let (reader, reader_secret) =
        s.create_client("sa-protected", &["READ_PUBLIC", "READ_PROTECTED_SECRET"]);
    let answer = inspect(&s, &reader, &reader_secret);
    assert_eq!(
        answer["schemas"],
        json!(["public", "secret", "travel"]),
        "{answer}"
    );
    assert_eq!(answer["tables"]["secret"], json!(["payroll"]), "{answer}");
    let salary = &answer["reflected"]["secret.payroll"]["columns"][0];
    assert_eq!(
        (&salary["name"], &salary["type"], &salary["nullable"]),
        (&json!("salary"), &json!("BIGINT"), &json!(false)),
        "{answer}"
    );
}

#[test]
fn copy_to_stdout_writes_text_csv_and_binary_and_nothing_else() {
    let Some(_) = psql_binary() else {
        eprintln!("skipped: psql is not installed (scripts/pg.sh installs it)");
        return;
    };
    let s = server_with_data(pg_options());
    let (id, secret) = s.create_client("copy-public", &["READ_PUBLIC"]);
    let rows = "SELECT region, price FROM travel.trips ORDER BY region, price";
    let csv = format!("COPY ({rows}) TO STDOUT (FORMAT csv, HEADER)");
    let (ok, out) = psql(&s, &id, &secret, &[&csv]);
    assert!(ok, "{out}");
    assert_eq!(
        out,
        "region,price\nnorth,10.5\nnorth,20.0\nsouth,5.0\nwest,\n"
    );
    let text = format!("COPY ({rows}) TO STDOUT");
    let (ok, out) = psql(&s, &id, &secret, &[&text]);
    assert!(ok, "{out}");
    assert_eq!(out, "north\t10.5\nnorth\t20.0\nsouth\t5.0\nwest\t\\N\n");
    let (ok, out) = psql(&s, &id, &secret, &["COPY travel.trips (year) TO STDOUT"]);
    assert!(ok && out.lines().count() == 4, "{out}");
    // The same permissions: the PROTECTED table does not exist for this subject.
    let (ok, out) = psql(
        &s,
        &id,
        &secret,
        &["COPY (SELECT * FROM secret.payroll) TO STDOUT"],
    );
    assert!(!ok && out.contains("42P01"), "{out}");
    // Files and writes stay refused.
    for refused in [
        "COPY (SELECT 1) TO '/tmp/rapid-copy'",
        "COPY travel.trips FROM STDIN",
    ] {
        let (ok, out) = psql(&s, &id, &secret, &[refused]);
        assert!(!ok && out.contains("25006"), "{refused}: {out}");
    }
    // Binary, as psycopg reads it.
    let addr = s.pg_addr().unwrap();
    let out = std::process::Command::new(crate::pyarrow_readback::python())
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/python/pg_copy.py"
        ))
        .args([
            &addr.ip().to_string(),
            &addr.port().to_string(),
            &id,
            &secret,
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let read: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
    assert_eq!(
        read["rows"],
        json!([
            ["north", 10.5],
            ["north", 20.0],
            ["south", 5.0],
            ["west", null]
        ])
    );
    // As PostgreSQL sends it: the signature, one message a row (header and flags in the first),
    // then the trailer alone. A row: its count, then each value's length and bytes (-1 for NULL).
    let raw = &read["raw"];
    assert_eq!(raw["signature"], "5047434f50590aff0d0a00", "{raw}");
    assert_eq!(
        raw["lengths"],
        json!([19 + 23, 23, 23, 2 + 8 + 4, 2]),
        "{raw}"
    );
    assert_eq!(raw["last"], "ffff", "{raw}");
}

/// The ADBC PostgreSQL driver with its defaults (`tests/python/pg_adbc.py`): typed Arrow
/// columns, the PROTECTED table unknown to a PUBLIC reader and read by its reader.
#[test]
fn adbcs_driver_reads_typed_columns_with_its_defaults() {
    let s = server_with_data(pg_options());
    let (public, public_secret) = s.create_client("adbc-public", &["READ_PUBLIC"]);
    let answer = run_script(&s, "pg_adbc.py", &public, &public_secret);
    assert_eq!(
        answer["rows"],
        json!([
            {"region": "north", "n": 2, "total": 30.5, "latest": 2018},
            {"region": "south", "n": 1, "total": 5.0, "latest": 2018},
            {"region": "west", "n": 1, "total": null, "latest": 2021}
        ]),
        "{answer}"
    );
    assert_eq!(
        answer["types"],
        json!({"region": "string", "n": "int64", "total": "double", "latest": "int64"}),
        "{answer}"
    );
    assert_eq!(answer["protected"], "42P01", "{answer}");
    let (reader, reader_secret) =
        s.create_client("adbc-protected", &["READ_PUBLIC", "READ_PROTECTED_SECRET"]);
    let answer = run_script(&s, "pg_adbc.py", &reader, &reader_secret);
    assert_eq!(answer["protected"], "ok [{'s': 100}]", "{answer}");
}
