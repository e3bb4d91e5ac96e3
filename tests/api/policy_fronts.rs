//! The conformance suite's fronts: one statement asked through `/query` (JSON and CSV), a
//! large query's result file, `/api/sql`, the PostgreSQL listener (psql) and the web pages' CSV
//! download, each answer read into rows of text (`policy_views::Row`) to compare with DuckDB's.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::policy_views::{Row, COLUMNS};
use crate::support::TestServer;

pub(crate) const STAFF: &str = "/api/datasets/default/hr/staff";

/// Every row, every column: the statement each front is asked.
pub(crate) fn all_sql(table: &str) -> String {
    let columns: Vec<&str> = COLUMNS.iter().map(|(c, _)| *c).collect();
    format!("SELECT {} FROM {table}", columns.join(", "))
}

/// The aggregate columns (over masked values: distinct counts see a hash's classes).
pub(crate) const AGGREGATES: [&str; 6] = [
    "region",
    "count(*) AS n",
    "count(DISTINCT name) AS names",
    "count(DISTINCT salary) AS salaries",
    "min(card) AS low_card",
    "max(born) AS last_born",
];

pub(crate) fn aggregate_sql(table: &str) -> String {
    format!(
        "SELECT {} FROM {table} GROUP BY region",
        AGGREGATES.join(", ")
    )
}

/// A statement's own filter over masked values (`region` is redacted under one policy, `card`
/// under several; never a hashed column, whose text DuckDB's view keeps), ordered and cut.
pub(crate) const FILTER: &str = "id % 3 = 0 AND card IS NOT NULL AND region <> 'west'";
pub(crate) const FILTER_LIMIT: usize = 300;

pub(crate) fn filtered_sql(table: &str) -> String {
    format!(
        "{} WHERE {FILTER} ORDER BY id LIMIT {FILTER_LIMIT}",
        all_sql(table)
    )
}

pub(crate) fn filtered_body() -> Value {
    json!({"filter": FILTER, "order_by_columns": [{"column": "id"}], "limit": FILTER_LIMIT})
}

fn answer_names(columns: &[&str]) -> Vec<String> {
    columns
        .iter()
        .map(|c| c.rsplit(" AS ").next().unwrap().to_string())
        .collect()
}

fn json_text(v: Option<&Value>) -> Option<String> {
    match v {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => Some(other.to_string()),
    }
}

/// A JSON answer (an object of rows by index, or an array of rows) by column name.
pub(crate) fn json_rows(answer: &Value, names: &[String]) -> Vec<Row> {
    let rows: Vec<&Value> = match answer {
        Value::Object(m) => m.values().collect(),
        Value::Array(a) => a.iter().collect(),
        other => panic!("not rows: {other}"),
    };
    rows.into_iter()
        .map(|r| names.iter().map(|n| json_text(r.get(n))).collect())
        .collect()
}

/// A CSV answer with a header (an unnamed index column, if any, left out); empty is NULL.
pub(crate) fn csv_rows(text: &str, names: &[String]) -> Vec<Row> {
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = reader
        .headers()
        .unwrap_or_else(|e| panic!("{e}: {text:.300}"))
        .iter()
        .map(String::from)
        .collect();
    let at: Vec<usize> = names
        .iter()
        .map(|n| {
            header
                .iter()
                .position(|h| h == n)
                .unwrap_or_else(|| panic!("no column {n} in {header:?}"))
        })
        .collect();
    reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            at.iter()
                .map(|&i| Some(r[i].to_string()).filter(|v| !v.is_empty()))
                .collect()
        })
        .collect()
}

pub(crate) fn all_names() -> Vec<String> {
    COLUMNS.iter().map(|(c, _)| c.to_string()).collect()
}

pub(crate) fn aggregate_names() -> Vec<String> {
    answer_names(&AGGREGATES)
}

/// `/query` with `body`, as JSON or (with `csv`) as CSV.
pub(crate) fn query(
    s: &TestServer,
    token: &str,
    body: &Value,
    names: &[String],
    csv: bool,
) -> Vec<Row> {
    let res = s
        .request("POST", &format!("{STAFF}/query"))
        .bearer_auth(token)
        .header("Accept", if csv { "text/csv" } else { "application/json" })
        .json(body)
        .send()
        .unwrap();
    let status = res.status();
    let text = res.text().unwrap();
    assert_eq!(status, StatusCode::OK, "{text:.500}");
    match csv {
        true => csv_rows(&text, names),
        false => json_rows(&serde_json::from_str(&text).unwrap(), names),
    }
}

pub(crate) fn aggregate_body() -> Value {
    json!({"select_columns": AGGREGATES, "group_by_columns": ["region"]})
}

/// A large query's result file (a job, then its link).
pub(crate) fn large(s: &TestServer, token: &str) -> Vec<Row> {
    let (status, body) = s.call(
        "POST",
        &format!("{STAFF}/query/large"),
        Some(token),
        Some(&json!({})),
    );
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let job_id = body["details"]["job_id"].as_str().unwrap();
    let http = reqwest::blocking::Client::new();
    let job = rapid_testkit::wait_job(
        &http,
        &s.base,
        token,
        job_id,
        Duration::from_secs(120),
        Duration::from_millis(25),
    );
    assert_eq!(job["status"], "SUCCESS", "{job}");
    let res = http
        .get(job["result_url"].as_str().unwrap())
        .send()
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    csv_rows(&res.text().unwrap(), &all_names())
}

/// `/api/sql` with `statement`.
pub(crate) fn api_sql(s: &TestServer, token: &str, statement: &str, names: &[String]) -> Vec<Row> {
    let (status, body) = s.call(
        "POST",
        "/api/sql",
        Some(token),
        Some(&json!({ "sql": statement })),
    );
    assert_eq!(status, StatusCode::OK, "{statement}: {body:.500}");
    json_rows(&body, names)
}

/// psql's CSV output of `statement` signed in as the client `id`.
pub(crate) fn wire(
    s: &TestServer,
    id: &str,
    secret: &str,
    statement: &str,
    names: &[String],
) -> Vec<Row> {
    let mut cmd = crate::sql_wire::psql_command(s, id, secret, &[statement]);
    // `-t` (from psql_command) drops the header: put it back, as CSV.
    cmd.args(["--csv", "-P", "tuples_only=off"]);
    let out = cmd.output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{statement}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    csv_rows(&text, names)
}

/// The web query page's CSV download (every row, no index column) for a signed-in visitor.
pub(crate) fn web_csv(visitor: &mut crate::web_pages::Visitor) -> Vec<Row> {
    let (status, _, res) = visitor.get("/datasets/default/hr/staff/query?action=csv");
    assert_eq!(status, StatusCode::OK);
    let text = res.text().unwrap();
    csv_rows(&text, &all_names())
}

/// Rows in one order, with each hashed column (`hashed`: indexes) checked to be a hex SHA-256 and
/// `engine`: replaced by its equality class (`h0`, `h1`, ... in the order of the id column, the
/// first), so a keyed hash and DuckDB's unhashed text compare as the same partition of rows.
pub(crate) fn canonical(mut rows: Vec<Row>, hashed: &[usize], engine: bool) -> Vec<Row> {
    if !hashed.is_empty() {
        let id = |r: &Row| r[0].as_deref().unwrap().parse::<i64>().unwrap();
        rows.sort_by_key(id);
        for &c in hashed {
            let mut classes = std::collections::HashMap::new();
            for r in rows.iter_mut() {
                if let Some(v) = r[c].take() {
                    if engine {
                        assert!(
                            v.len() == 64 && v.chars().all(|c| c.is_ascii_hexdigit()),
                            "not a hash: {v}"
                        );
                    }
                    let next = classes.len();
                    r[c] = Some(format!("h{}", classes.entry(v).or_insert(next)));
                }
            }
        }
    }
    rows.sort();
    rows
}

/// `None` when equal; else how many rows differ and a few of them.
pub(crate) fn differences(got: &[Row], want: &[Row]) -> Option<String> {
    if got == want {
        return None;
    }
    let extra: Vec<&Row> = got.iter().filter(|r| !want.contains(r)).collect();
    let missing: Vec<&Row> = want.iter().filter(|r| !got.contains(r)).collect();
    Some(format!(
        "{} rows, {} expected; {} not expected (first {:?}), {} missing (first {:?})",
        got.len(),
        want.len(),
        extra.len(),
        extra.iter().take(2).collect::<Vec<_>>(),
        missing.len(),
        missing.iter().take(2).collect::<Vec<_>>()
    ))
}
