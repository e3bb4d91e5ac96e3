//! SQL over HTTP (`POST /api/sql`, `/api/sql/large`): the same answers as the JSON query, only
//! the datasets the subject may read, read-only. The PostgreSQL protocol's tests are in
//! `sql_wire.rs` and share the datasets made here.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::support::{schema_json, Options, TestServer};

const TRIPS: &str = "/api/datasets/default/travel/trips";
const PAYROLL: &str = "/api/datasets/default/secret/payroll";

/// A PUBLIC dataset `default/travel/trips` and a PROTECTED one `default/secret/payroll`.
pub(crate) fn server_with_data(options: Options) -> TestServer {
    let s = TestServer::start_with(options);
    let admin = s.admin_token();
    let (status, body) = s.call("POST", "/api/protected_domains/secret", Some(&admin), None);
    assert_eq!(status, StatusCode::CREATED, "{body}");
    s.create_schema(&schema_json(
        "travel",
        "trips",
        "PUBLIC",
        "APPEND",
        json!([
            {"name": "region", "data_type": "string", "allow_null": false, "partition_index": 0},
            {"name": "year", "data_type": "int", "allow_null": false},
            {"name": "price", "data_type": "double", "allow_null": true}
        ]),
    ));
    let csv = "region,year,price\nnorth,2017,10.5\nnorth,2018,20\nsouth,2018,5\nwest,2021,\n";
    let (_, job) = s.upload_and_wait(&admin, TRIPS, "trips.csv", csv.into());
    assert_eq!(job["status"], "SUCCESS", "{job}");
    s.create_schema(&schema_json(
        "secret",
        "payroll",
        "PROTECTED",
        "APPEND",
        json!([{"name": "salary", "data_type": "int", "allow_null": false}]),
    ));
    let (_, job) = s.upload_and_wait(&admin, PAYROLL, "p.csv", "salary\n100\n".into());
    assert_eq!(job["status"], "SUCCESS", "{job}");
    s
}

fn sql(s: &TestServer, token: &str, statement: &str) -> (StatusCode, Value) {
    s.call(
        "POST",
        "/api/sql",
        Some(token),
        Some(&json!({"sql": statement})),
    )
}

#[test]
fn sql_answers_as_the_json_query_does() {
    let s = server_with_data(Options::default());
    let t = s.token_with("reader", &["READ_PUBLIC"]);
    let query = json!({
        "select_columns": ["region", "count(*) AS n", "sum(price) AS total"],
        "group_by_columns": ["region"],
        "order_by_columns": [{"column": "region", "direction": "ASC"}]
    });
    let (status, by_query) = s.call("POST", &format!("{TRIPS}/query"), Some(&t), Some(&query));
    assert_eq!(status, StatusCode::OK, "{by_query}");
    let (status, by_sql) = sql(
        &s,
        &t,
        "SELECT region, count(*) AS n, sum(price) AS total FROM \"default\".\"travel\".\"trips\" \
         GROUP BY region ORDER BY region ASC",
    );
    assert_eq!(status, StatusCode::OK, "{by_sql}");
    assert_eq!(by_sql, by_query);

    let res = s
        .request("POST", "/api/sql")
        .bearer_auth(&t)
        .header("Accept", "text/csv")
        .json(&json!({"sql": "SELECT year FROM \"default\".travel.trips ORDER BY year"}))
        .send()
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    // The query endpoint's CSV: a leading index column, as rAPId's.
    assert_eq!(
        res.text().unwrap(),
        ",year\n0,2017\n1,2018\n2,2018\n3,2021\n"
    );
}

#[test]
fn sql_sees_only_readable_datasets_and_never_writes() {
    let s = server_with_data(Options::default());
    let public = s.token_with("public-reader", &["READ_PUBLIC"]);
    let secret = s.token_with("secret-reader", &["READ_PROTECTED_SECRET"]);
    let payroll = "SELECT sum(salary) AS s FROM \"default\".\"secret\".\"payroll\"";
    let (status, body) = sql(&s, &public, payroll);
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(
        body["details"].as_str().unwrap().contains("not found"),
        "{body}"
    );
    let (status, body) = sql(&s, &secret, payroll);
    assert_eq!(
        (status, &body["0"]["s"]),
        (StatusCode::OK, &json!(100)),
        "{body}"
    );
    let listing = "SELECT table_name FROM information_schema.tables \
                   WHERE table_catalog = 'default' AND table_schema <> 'information_schema' \
                   ORDER BY table_name";
    let (_, body) = sql(&s, &public, listing);
    assert_eq!(body, json!({"0": {"table_name": "trips"}}));

    for write in [
        "INSERT INTO \"default\".travel.trips VALUES ('x', 1, 1.0)",
        "CREATE TABLE t (a int)",
        "COPY (SELECT 1) TO '/tmp/out.csv'",
        "SELECT * FROM read_csv('/etc/passwd')",
        "SELECT 1; SELECT 2",
    ] {
        let (status, body) = sql(&s, &secret, write);
        assert_eq!(status, StatusCode::BAD_REQUEST, "{write}: {body}");
    }
}

/// Nested function calls double sqlparser's work per level: past the parse budget the statement
/// is refused at once (unbounded, 40 levels would parse for about a year), on both endpoints.
#[test]
fn a_statement_too_complex_to_parse_is_refused_at_once() {
    let s = server_with_data(Options::default());
    let t = s.token_with("nesting-reader", &["READ_PUBLIC"]);
    let deep = format!("SELECT {}'x'{}", "upper(".repeat(40), ")".repeat(40));
    for path in ["/api/sql", "/api/sql/large"] {
        let (status, body) = s.call("POST", path, Some(&t), Some(&json!({"sql": deep})));
        assert_eq!(status, StatusCode::BAD_REQUEST, "{path}: {body}");
        let details = body["details"].as_str().unwrap_or_default();
        assert!(details.contains("too complex to parse"), "{body}");
    }
    let fits = format!("SELECT {}'x'{} AS v", "upper(".repeat(16), ")".repeat(16));
    let (status, body) = sql(&s, &t, &fits);
    assert_eq!(
        (status, &body["0"]["v"]),
        (StatusCode::OK, &json!("X")),
        "{body}"
    );
}

/// `POST /api/sql/large`: a QUERY job whose result link downloads the whole answer as CSV; a
/// statement that does not plan is refused before any job.
#[test]
fn a_large_sql_statement_runs_as_a_query_job() {
    let s = server_with_data(Options::default());
    let t = s.token_with("large-reader", &["READ_PUBLIC"]);
    let (status, body) = s.call(
        "POST",
        "/api/sql/large",
        Some(&t),
        Some(&json!({"sql": "SELECT year FROM \"default\".travel.trips ORDER BY year"})),
    );
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let job = s.wait_job(&t, body["details"]["job_id"].as_str().unwrap());
    assert_eq!(job["status"], "SUCCESS", "{job}");
    assert_eq!(
        (&job["type"], &job["rows_processed"]),
        (&json!("QUERY"), &json!(4))
    );
    let csv = reqwest::blocking::get(job["result_url"].as_str().unwrap()).unwrap();
    assert_eq!(
        csv.text().unwrap(),
        ",year\n0,2017\n1,2018\n2,2018\n3,2021\n"
    );
    let (status, body) = s.call(
        "POST",
        "/api/sql/large",
        Some(&t),
        Some(&json!({"sql": "SELECT * FROM \"default\".secret.payroll"})),
    );
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
}

#[test]
fn explain_answers_its_plan_and_a_write_is_refused_in_http_words() {
    let s = TestServer::start();
    let t = s.admin_token();
    let explain = json!({"sql": "EXPLAIN SELECT 1 AS one"});
    let (status, body) = s.call("POST", "/api/sql", Some(&t), Some(&explain));
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body["0"]["plan_type"].is_string(), "{body}");
    let write = json!({"sql": "DELETE FROM \"default\".shop.sales"});
    let (status, body) = s.call("POST", "/api/sql", Some(&t), Some(&write));
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let details = body["details"].as_str().unwrap_or_default();
    assert!(
        details.starts_with("Only one SELECT (or EXPLAIN of one) runs here: DELETE"),
        "{details}"
    );
    assert!(!details.contains("SHOW"), "{details}");
}

#[test]
fn select_star_lists_the_columns_in_the_schema_s_order() {
    // `region` is the partition column, first in the schema: first in `SELECT *` too.
    let s = server_with_data(Options::default());
    let t = s.token_with("star_reader", &["READ_PUBLIC"]);
    let (status, body) = sql(
        &s,
        &t,
        "SELECT * FROM \"default\".travel.trips ORDER BY year, price LIMIT 1",
    );
    assert_eq!(status, StatusCode::OK, "{body}");
    let columns: Vec<&String> = body["0"].as_object().unwrap().keys().collect();
    assert_eq!(columns, ["region", "year", "price"], "{body}");
}

/// What the listener answers for Superset's time ranges and grains, `/api/sql` answers too:
/// PostgreSQL's `to_date`/`to_timestamp` patterns and an interval times a number.
#[test]
fn postgresql_time_patterns_and_interval_products_answer_over_http() {
    let s = server_with_data(Options::default());
    let t = s.token_with("reader", &["READ_PUBLIC"]);
    let (status, body) = sql(
        &s,
        &t,
        "SELECT TO_DATE('2024-03-09', 'YYYY-MM-DD') AS d, \
         TO_TIMESTAMP('2024-03-09 10:37:05.000000', 'YYYY-MM-DD HH24:MI:SS.US') AS ts, \
         DATE_TRUNC('hour', TIMESTAMP '2024-03-09 10:37:05') \
         + INTERVAL '15 minutes' * FLOOR(37 / 15) AS grain",
    );
    assert_eq!(status, StatusCode::OK, "{body}");
    let row = &body["0"];
    assert_eq!(row["d"], "2024-03-09", "{body}");
    assert!(
        row["ts"]
            .as_str()
            .unwrap()
            .starts_with("2024-03-09T10:37:05")
            || row["ts"]
                .as_str()
                .unwrap()
                .starts_with("2024-03-09 10:37:05"),
        "{body}"
    );
    assert!(
        row["grain"].as_str().unwrap().contains("10:30:00"),
        "{body}"
    );
}
