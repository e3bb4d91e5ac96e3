//! Dashboard tools' traffic with the PostgreSQL listener, as their sources send it, through the
//! real drivers: Metabase's sync (`tests/python/pg_metabase.py`) and Superset's connection
//! check, browsing, dataset creation, charts and SQL Lab (`tests/python/pg_superset.py`). Each
//! as a PUBLIC reader and as the reader of the PROTECTED domain, which no other subject's
//! catalogue shows.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::sql::server_with_data;
use crate::sql_catalogues::{run_script, run_script_in};
use crate::sql_wire::pg_options;
use crate::support::{schema_json, TestServer};

/// Metabase's sync of a PostgreSQL database (`tests/python/pg_metabase.py`, its driver's
/// queries): every query answers; the reader sees the tables it may read, with their columns
/// typed, no key, and read-only privileges (Metabase offers its write actions only on tables
/// it may write); the PROTECTED table only for its domain's reader.
#[test]
fn metabases_sync_queries_answer_with_read_only_tables() {
    let s = server_with_data(pg_options());
    let (public, public_secret) = s.create_client("mb-public", &["READ_PUBLIC"]);
    let answer = run_script(&s, "pg_metabase.py", &public, &public_secret);
    for (name, rows) in answer.as_object().unwrap() {
        assert!(rows.is_array(), "{name}: {rows}");
    }
    assert_eq!(answer["timezone"], json!([["UTC"]]), "{answer}");
    assert_eq!(
        answer["tables"],
        json!([["travel", "trips", "TABLE", null, null]]),
        "{answer}"
    );
    assert_eq!(
        answer["privileges"],
        json!([[null, "travel", "trips", false, true, false, false]]),
        "{answer}"
    );
    let fields: Vec<(String, String, bool)> = answer["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let text = |i: usize| f[i].as_str().unwrap_or_default().to_string();
            (
                text(4),
                format!("{}:{}", text(0), text(1)),
                f[5] == json!(true),
            )
        })
        .collect();
    let trips = |c: &str| ("trips".to_string(), c.to_string(), false);
    assert_eq!(
        fields,
        [
            trips("region:text"),
            trips("year:int8"),
            trips("price:float8")
        ],
        "{answer}"
    );
    // "database-required": a column the dataset's schema does not allow null in (no default).
    let required: Vec<&Value> = answer["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| &f[7])
        .collect();
    assert_eq!(
        required,
        [&json!(true), &json!(true), &json!(false)],
        "{answer}"
    );
    let positions: Vec<&serde_json::Value> = answer["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| &f[2])
        .collect();
    assert_eq!(positions, [&json!(0), &json!(1), &json!(2)], "{answer}");
    for none in ["enums", "fks", "indexes"] {
        assert_eq!(answer[none], json!([]), "{none}: {answer}");
    }

    let (reader, reader_secret) =
        s.create_client("mb-protected", &["READ_PUBLIC", "READ_PROTECTED_SECRET"]);
    let answer = run_script(&s, "pg_metabase.py", &reader, &reader_secret);
    let tables: Vec<&str> = answer["tables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t[1].as_str().unwrap())
        .collect();
    assert_eq!(tables, ["payroll", "trips"], "{answer}");
}

const ORDERS: &str = "/api/datasets/default/sales/orders";

/// `sales.orders`, a PUBLIC dataset with a date column for Superset's time series.
fn with_orders(s: &TestServer) {
    s.create_schema(&schema_json(
        "sales",
        "orders",
        "PUBLIC",
        "APPEND",
        json!([
            {"name": "order_date", "data_type": "date", "allow_null": false, "format": "%Y-%m-%d"},
            {"name": "region", "data_type": "string", "allow_null": false},
            {"name": "amount", "data_type": "double", "allow_null": true},
            {"name": "qty", "data_type": "int", "allow_null": true}
        ]),
    ));
    let csv = "order_date,region,amount,qty\n2024-01-15,north,10.5,1\n2024-01-20,south,4.5,2\n\
               2024-02-03,north,7.25,\n2024-03-09,west,,3\n2025-01-01,south,100,4\n";
    let (_, job) = s.upload_and_wait(&s.admin_token(), ORDERS, "orders.csv", csv.into());
    assert_eq!(job["status"], "SUCCESS", "{job}");
}

/// Superset's steps through each driver the script ran (`pg_superset.py`), with SQLAlchemy 2 from
/// .venv and, with `pinned`, with the 1.4 Superset pins from .venv-ext (when there).
fn superset(s: &TestServer, user: &str, password: &str, pinned: bool) -> Vec<(String, Value)> {
    let mut runs = vec![run_script(s, "pg_superset.py", user, password)];
    if let Some(python) = crate::sql_clients::extension_python().filter(|_| pinned) {
        runs.push(run_script_in(&python, s, "pg_superset.py", user, password));
    }
    let mut answers = Vec::new();
    for run in runs {
        let version = run["sqlalchemy"].as_str().unwrap_or_default().to_string();
        for (driver, answer) in run.as_object().unwrap() {
            if driver != "sqlalchemy" {
                answers.push((format!("SQLAlchemy {version}, {driver}"), answer.clone()));
            }
        }
    }
    answers
}

/// A dataset's columns as `[name, type, nullable]`, the type as SQLAlchemy 2 names it (1.4 writes
/// `DOUBLE_PRECISION`).
fn columns(answer: &Value, table: &str, step: &str) -> Value {
    let listed = answer["datasets"][table][step].as_array().cloned();
    let listed = listed.unwrap_or_else(|| panic!("{table} {step}: {answer}"));
    let named = listed.iter().map(|c| {
        let t = c[1].as_str().unwrap_or_default().replace('_', " ");
        json!([c[0], t, c[2]])
    });
    Value::Array(named.collect())
}

/// What a PUBLIC reader's Superset finds: the connection, the catalogue without the PROTECTED
/// table, the dataset of `sales.orders` with its columns typed, previews and charts with
/// numbers as numbers, `SUM(amount)` as `/query` answers it.
fn check_public(how: &str, answer: &Value, total: &Value) {
    let steps = |names: &[&str]| names.iter().map(|n| answer[*n].clone()).collect::<Vec<_>>();
    assert_eq!(
        steps(&["ping", "catalogs", "default_schema", "schemas"]),
        [
            json!(true),
            json!([["default"]]),
            json!("public"),
            json!(["public", "sales", "travel"])
        ],
        "{how}: {answer}"
    );
    let tables = json!({"public": [], "sales": ["orders"], "travel": ["trips"]});
    let views = json!({"public": [], "sales": [], "travel": []});
    assert_eq!(
        steps(&["tables", "views"]),
        [tables, views],
        "{how}: {answer}"
    );
    let orders = &answer["datasets"]["sales.orders"];
    let none = [json!(true), json!([]), json!([]), json!([]), Value::Null];
    let found =
        ["has_table", "pk", "foreign_keys", "indexes", "comment"].map(|k| orders[k].clone());
    assert_eq!(found, none, "{how}: {answer}");
    let expected = json!([
        ["order_date", "DATE", false],
        ["region", "TEXT", false],
        ["amount", "DOUBLE PRECISION", true],
        ["qty", "BIGINT", true]
    ]);
    assert_eq!(
        columns(answer, "sales.orders", "columns"),
        expected,
        "{how}: {answer}"
    );
    assert_eq!(
        columns(answer, "sales.orders", "reflected"),
        expected,
        "{how}"
    );
    let mut preview = answer["preview"].as_array().cloned().unwrap_or_default();
    preview.sort_by_key(|r| r[0].to_string());
    let preview_expected = json!([
        ["2024-01-15", "north", 10.5, 1],
        ["2024-01-20", "south", 4.5, 2],
        ["2024-02-03", "north", 7.25, null],
        ["2024-03-09", "west", null, 3],
        ["2025-01-01", "south", 100.0, 4]
    ]);
    assert_eq!(Value::Array(preview), preview_expected, "{how}: {answer}");
    check_public_queries(how, answer, total);
}

/// The charts', SQL Lab's and the PROTECTED table's answers to a PUBLIC reader.
fn check_public_queries(how: &str, answer: &Value, total: &Value) {
    let virtual_columns = json!([
        ["ordered_at", "datetime"],
        ["region", "str"],
        ["amount", "float"]
    ]);
    assert_eq!(
        answer["virtual_columns"], virtual_columns,
        "{how}: {answer}"
    );
    // By month, then SUM(amount) DESC (NULL last, as every front here orders it).
    let month =
        |m: u32, region: &str, sum: Value| json!([format!("2024-0{m}-01T00:00:00"), region, sum]);
    let chart = [
        month(1, "north", json!(10.5)),
        month(2, "north", json!(7.25)),
        month(1, "south", json!(4.5)),
        month(3, "west", Value::Null),
    ];
    assert_eq!(answer["chart"], json!(chart), "{how}: {answer}");
    // The two regions with the most amounts (north, south), by the virtual dataset.
    assert_eq!(
        answer["virtual_chart"],
        json!(chart[..3]),
        "{how}: {answer}"
    );
    check_quarter_hours(how, answer);
    assert_eq!(answer["big_number"], json!([[total]]), "{how}: {answer}");
    let sql_lab = json!([["north", 2], ["south", 2], ["west", 1]]);
    assert_eq!(answer["sql_lab"], sql_lab, "{how}: {answer}");
    assert_eq!(
        steps_true(answer, &["backend_pid", "explain"]),
        2,
        "{how}: {answer}"
    );
    assert_eq!(answer["has_protected"], json!(false), "{how}: {answer}");
    assert_eq!(answer["protected"]["sqlstate"], "42P01", "{how}: {answer}");
    // Nowhere else does the PROTECTED table show: not in a list, a dataset, an error.
    let mut seen = answer.clone();
    seen.as_object_mut().unwrap().remove("protected");
    let text = seen.to_string();
    assert!(
        !text.contains("secret") && !text.contains("payroll"),
        "{how}: {text}"
    );
}

/// The 15-minute grain's chart: times 37 minutes past midnight fall at half past.
fn check_quarter_hours(how: &str, answer: &Value) {
    let quarter = |day: &str, sum: Value| json!([format!("2024-{day}T00:30:00"), sum]);
    assert_eq!(
        answer["quarter_hours"],
        json!([
            quarter("01-15", json!(10.5)),
            quarter("02-03", json!(7.25)),
            quarter("01-20", json!(4.5)),
            quarter("03-09", Value::Null)
        ]),
        "{how}: {answer}"
    );
}

fn steps_true(answer: &Value, names: &[&str]) -> usize {
    names.iter().filter(|n| answer[**n] == json!(true)).count()
}

#[test]
fn supersets_connection_check_datasets_and_charts_answer_through_both_drivers() {
    let s = server_with_data(pg_options());
    with_orders(&s);
    let (public, public_secret) = s.create_client("ss-public", &["READ_PUBLIC"]);
    let token = s.token(&public, &public_secret);
    let query = json!({"select_columns": ["sum(amount) AS total"]});
    let (status, by_http) = s.call(
        "POST",
        &format!("{ORDERS}/query"),
        Some(&token),
        Some(&query),
    );
    assert_eq!(status, StatusCode::OK, "{by_http}");
    let total = &by_http["0"]["total"];
    assert_eq!(total, &json!(122.25), "{by_http}");
    let answers = superset(&s, &public, &public_secret, true);
    assert!(answers.len() >= 2, "{answers:?}");
    for (how, answer) in &answers {
        check_public(how, answer, total);
    }

    let (reader, reader_secret) =
        s.create_client("ss-protected", &["READ_PUBLIC", "READ_PROTECTED_SECRET"]);
    // Through SQLAlchemy 2's drivers (the catalogue queries the 1.4 pins send, above).
    for (how, answer) in superset(&s, &reader, &reader_secret, false) {
        let schemas = json!(["public", "sales", "secret", "travel"]);
        assert_eq!(answer["schemas"], schemas, "{how}: {answer}");
        assert_eq!(
            answer["tables"]["secret"],
            json!(["payroll"]),
            "{how}: {answer}"
        );
        let salary = json!([["salary", "BIGINT", false]]);
        assert_eq!(
            columns(&answer, "secret.payroll", "columns"),
            salary,
            "{how}"
        );
        assert_eq!(answer["has_protected"], json!(true), "{how}: {answer}");
        assert_eq!(answer["protected"], json!([[100]]), "{how}: {answer}");
        check_quarter_hours(&how, &answer);
        assert_eq!(answer["big_number"], json!([[total]]), "{how}: {answer}");
    }
}
