//! Dataset policies (docs/API.md, "Policies, audit, events, MCP"): set, read and removed by
//! DATA_ADMIN; row filters and column masks applied to `/query` and `/api/sql` alike, compared
//! with the rows expected from the CSV uploaded; leak probes.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::support::{schema_json, Options, TestServer};

pub(crate) const STAFF: &str = "/api/datasets/default/hr/staff";
pub(crate) const TABLE: &str = "\"default\".\"hr\".\"staff\"";
pub(crate) const CSV: &str =
    "region,name,salary,card\nnorth,ann,100,1234567890\nnorth,bob,0,2222333344\n\
                   south,cid,300,9999888877\nwest,dan,400,5555444433\n";

pub(crate) struct Subject {
    pub id: String,
    pub secret: String,
    pub token: String,
}

fn server() -> TestServer {
    server_with(Options::default())
}

/// The staff dataset (CSV) on a server started with `options`.
pub(crate) fn server_with(options: Options) -> TestServer {
    let s = TestServer::start_with(options);
    s.create_schema(&schema_json(
        "hr",
        "staff",
        "PUBLIC",
        "APPEND",
        json!([
            {"name": "region", "data_type": "string", "allow_null": false},
            {"name": "name", "data_type": "string", "allow_null": false},
            {"name": "salary", "data_type": "int", "allow_null": false},
            {"name": "card", "data_type": "string", "allow_null": false}
        ]),
    ));
    let admin = s.admin_token();
    let (_, job) = s.upload_and_wait(&admin, STAFF, "staff.csv", CSV.into());
    assert_eq!(job["status"], "SUCCESS", "{job}");
    s
}

pub(crate) fn subject(s: &TestServer, name: &str, region: Option<&str>) -> Subject {
    let (id, secret) = s.create_client(name, &["READ_ALL"]);
    if let Some(region) = region {
        let (status, body) = s.call(
            "PUT",
            &format!("/api/subjects/{id}/attributes"),
            Some(&s.admin_token()),
            Some(&json!({ "region": region })),
        );
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let token = s.token(&id, &secret);
    Subject { id, secret, token }
}

pub(crate) fn put_policy(s: &TestServer, policy: &Value) -> (StatusCode, Value) {
    s.call(
        "PUT",
        &format!("{STAFF}/policy"),
        Some(&s.admin_token()),
        Some(policy),
    )
}

/// The answer's rows (a JSON answer is an object of rows by index), sorted.
pub(crate) fn rows(answer: &Value) -> Vec<Value> {
    let mut rows: Vec<Value> = match answer {
        Value::Object(m) => m.values().cloned().collect(),
        Value::Array(a) => a.clone(),
        other => panic!("not rows: {other}"),
    };
    rows.sort_by_key(|r| r.to_string());
    rows
}

/// The rows `token` sees through `/query` and through `/api/sql`, which must agree.
fn seen(s: &TestServer, token: &str) -> Vec<Value> {
    let (status, by_query) = s.call(
        "POST",
        &format!("{STAFF}/query"),
        Some(token),
        Some(&json!({})),
    );
    assert_eq!(status, StatusCode::OK, "{by_query}");
    let statement = format!("SELECT region, name, salary, card FROM {TABLE}");
    let (status, by_sql) = s.call(
        "POST",
        "/api/sql",
        Some(token),
        Some(&json!({"sql": statement})),
    );
    assert_eq!(status, StatusCode::OK, "{by_sql}");
    assert_eq!(rows(&by_query), rows(&by_sql), "/query and /api/sql differ");
    rows(&by_query)
}

/// The CSV's rows that `keep` keeps, each through `show`, sorted.
fn expected(keep: impl Fn(&Value) -> bool, show: impl Fn(Value) -> Value) -> Vec<Value> {
    let mut out: Vec<Value> = CSV
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            json!({"region": f[0], "name": f[1], "salary": f[2].parse::<i64>().unwrap(), "card": f[3]})
        })
        .filter(|r| keep(r))
        .map(show)
        .collect();
    out.sort_by_key(|r| r.to_string());
    out
}

fn same(v: Value) -> Value {
    v
}

#[test]
fn policy_round_trip_and_refusals() {
    let s = server();
    let admin = s.admin_token();
    let policy = json!({
        "row_filters": [{"name": "own_region", "filter": "region = subject_attr('region')",
                         "applies_to": ["*"], "except": ["DATA_ADMIN"]}],
        "column_masks": [{"column": "card", "mask": "last4", "applies_to": ["READ_ALL"], "except": []}]
    });
    let (status, body) = put_policy(&s, &policy);
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, got) = s.call(
        "GET",
        &format!("{STAFF}/policy?version=1"),
        Some(&admin),
        None,
    );
    assert_eq!(status, StatusCode::OK, "{got}");
    assert_eq!(got, policy);
    for (bad, says) in [
        (
            json!({"column_masks": [{"column": "nope", "mask": "null", "applies_to": ["*"]}]}),
            "unknown column [nope]",
        ),
        (
            json!({"column_masks": [{"column": "card", "mask": "blur", "applies_to": ["*"]}]}),
            "unknown mask [blur]",
        ),
        (
            json!({"column_masks": [{"column": "card", "mask": "year", "applies_to": ["*"]}]}),
            "date columns only",
        ),
        (
            json!({"row_filters": [{"name": "f", "filter": "region = = 'x'", "applies_to": ["*"]}]}),
            "Invalid filter",
        ),
        (
            json!({"row_filters": [{"name": "f", "filter": "nope = 1", "applies_to": ["*"]}]}),
            "unknown column [nope]",
        ),
        (
            json!({"row_filters": [{"name": "f", "filter": "region = 'x'", "applies_to": ["READ_EVERYTHING"]}]}),
            "[READ_EVERYTHING]",
        ),
        (json!({"row_masks": []}), "unknown field"),
    ] {
        let (status, body) = put_policy(&s, &bad);
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {body}");
        assert!(
            body["details"].as_str().unwrap().contains(says),
            "{bad}: {body}"
        );
    }
    let (status, _) = s.call("DELETE", &format!("{STAFF}/policy"), Some(&admin), None);
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, _) = s.call("GET", &format!("{STAFF}/policy"), Some(&admin), None);
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = s.call("DELETE", &format!("{STAFF}/policy"), Some(&admin), None);
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[test]
fn three_subjects_under_three_policies_see_the_expected_rows() {
    let s = server();
    let north = subject(&s, "north_reader", Some("north"));
    let south = subject(&s, "south_reader", Some("south"));
    let none = subject(&s, "no_region", None);
    let region_is = |r: &'static str| move |v: &Value| v["region"] == r;

    // 1: each sees its own region's rows; without the attribute, none.
    let (status, body) = put_policy(
        &s,
        &json!({"row_filters": [{"name": "own_region",
        "filter": "region = subject_attr('region')", "applies_to": ["*"], "except": ["DATA_ADMIN"]}]}),
    );
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(seen(&s, &north.token), expected(region_is("north"), same));
    assert_eq!(seen(&s, &south.token), expected(region_is("south"), same));
    assert_eq!(seen(&s, &none.token), expected(|_| false, same));
    assert_eq!(
        seen(&s, &s.admin_token()),
        expected(|_| true, same),
        "excepted"
    );

    // 2: masks only; the name redacted for one subject by its id.
    let (status, body) = put_policy(
        &s,
        &json!({"column_masks": [
        {"column": "salary", "mask": "null", "applies_to": ["*"]},
        {"column": "card", "mask": "last4", "applies_to": ["READ_ALL"]},
        {"column": "name", "mask": "redact", "applies_to": [north.id]}]}),
    );
    assert_eq!(status, StatusCode::OK, "{body}");
    let masked = |redact: bool| {
        move |mut v: Value| {
            v["salary"] = Value::Null;
            let card = v["card"].as_str().unwrap().to_string();
            v["card"] = json!(card[card.len() - 4..]);
            if redact {
                v["name"] = json!("REDACTED");
            }
            v
        }
    };
    let strip_nulls = |rows: Vec<Value>| -> Vec<Value> {
        rows.into_iter()
            .map(|mut r| {
                r.as_object_mut().unwrap().retain(|_, v| !v.is_null());
                r
            })
            .collect()
    };
    assert_eq!(
        strip_nulls(seen(&s, &north.token)),
        strip_nulls(expected(|_| true, masked(true)))
    );
    assert_eq!(
        strip_nulls(seen(&s, &south.token)),
        strip_nulls(expected(|_| true, masked(false)))
    );
    assert_eq!(
        strip_nulls(seen(&s, &none.token)),
        strip_nulls(expected(|_| true, masked(false)))
    );

    // 3: a filter by permission with an exception by id; names hashed (equal for equal names).
    let (status, body) = put_policy(
        &s,
        &json!({
        "row_filters": [{"name": "paid", "filter": "salary >= 100", "applies_to": ["READ_ALL"],
                         "except": [none.id]}],
        "column_masks": [{"column": "name", "mask": "hash", "applies_to": ["*"]}]}),
    );
    assert_eq!(status, StatusCode::OK, "{body}");
    let north_rows = seen(&s, &north.token);
    let unhash = |rows: Vec<Value>| -> Vec<Value> {
        let mut names = std::collections::HashMap::new();
        for r in expected(|_| true, same) {
            names.insert(r["salary"].clone(), r["name"].clone());
        }
        let mut out: Vec<Value> = rows
            .into_iter()
            .map(|mut r| {
                let hash = r["name"].as_str().unwrap();
                assert_eq!(hash.len(), 64, "{r}");
                assert!(hash.chars().all(|c| c.is_ascii_hexdigit()), "{r}");
                r["name"] = names[&r["salary"]].clone();
                r
            })
            .collect();
        out.sort_by_key(|r| r.to_string());
        out
    };
    let paid = |v: &Value| v["salary"].as_i64().unwrap() >= 100;
    assert_eq!(unhash(north_rows.clone()), expected(paid, same));
    assert_eq!(seen(&s, &south.token), north_rows, "same rows, same hashes");
    assert_eq!(unhash(seen(&s, &none.token)), expected(|_| true, same));
}

pub(crate) fn sql(s: &TestServer, token: &str, statement: &str) -> (StatusCode, Value) {
    s.call(
        "POST",
        "/api/sql",
        Some(token),
        Some(&json!({"sql": statement})),
    )
}

#[test]
fn leak_probes_find_nothing() {
    let s = server();
    let north = subject(&s, "north_reader", Some("north"));
    let (status, body) = put_policy(
        &s,
        &json!({
        "row_filters": [{"name": "own_region", "filter": "region = subject_attr('region')",
                         "applies_to": ["*"], "except": ["DATA_ADMIN"]}],
        "column_masks": [{"column": "name", "mask": "redact", "applies_to": ["*"], "except": ["DATA_ADMIN"]}]}),
    );
    assert_eq!(status, StatusCode::OK, "{body}");
    let admin = s.admin_token();

    // A division by zero on a hidden row only (cid, salary 300): an error for the excepted
    // admin, none for the subject who cannot see the row.
    let divide = json!({"filter": "1 / (salary - 300) > 0"});
    let query = format!("{STAFF}/query");
    let (status, body) = s.call("POST", &query, Some(&admin), Some(&divide));
    assert_eq!(
        status,
        StatusCode::BAD_REQUEST,
        "the probe divides by zero: {body}"
    );
    let (status, body) = s.call("POST", &query, Some(&north.token), Some(&divide));
    assert_eq!(status, StatusCode::OK, "{body}");
    let by_sql = format!("SELECT name FROM {TABLE} WHERE 1 / (salary - 300) > 0");
    assert_eq!(sql(&s, &admin, &by_sql).0, StatusCode::BAD_REQUEST);
    let (status, body) = sql(&s, &north.token, &by_sql);
    assert_eq!(status, StatusCode::OK, "{body}");

    // A filter on a masked column sees the masked value.
    let (status, body) = s.call(
        "POST",
        &query,
        Some(&north.token),
        Some(&json!({"filter": "name = 'ann'"})),
    );
    assert_eq!((status, rows(&body).len()), (StatusCode::OK, 0), "{body}");
    let (status, body) = sql(
        &s,
        &north.token,
        &format!("SELECT count(*) AS n FROM {TABLE} WHERE name = 'REDACTED'"),
    );
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(rows(&body)[0]["n"], 2, "{body}");

    // Counts are the visible rows'.
    let count = json!({"select_columns": ["count(*) AS n"]});
    let (_, body) = s.call("POST", &query, Some(&north.token), Some(&count));
    assert_eq!(rows(&body)[0]["n"], 2, "{body}");
    let (_, body) = sql(
        &s,
        &north.token,
        &format!("SELECT count(*) AS n FROM {TABLE}"),
    );
    assert_eq!(rows(&body)[0]["n"], 2, "{body}");

    // Figures and profiles are over every row: refused to a subject under the policy.
    for what in ["info", "profile"] {
        let path = format!("{STAFF}/{what}");
        let (status, body) = s.call("GET", &path, Some(&north.token), None);
        assert_eq!(status, StatusCode::FORBIDDEN, "{what}: {body}");
        assert!(!body.to_string().contains('4'), "no count: {body}");
        assert_eq!(
            s.call("GET", &path, Some(&admin), None).0,
            StatusCode::OK,
            "{what}"
        );
    }

    // EXPLAIN names the policy, never its filter or the subject's attribute.
    let (status, body) = sql(
        &s,
        &north.token,
        &format!("EXPLAIN SELECT * FROM {TABLE} WHERE salary > 1"),
    );
    assert_eq!(status, StatusCode::OK, "{body}");
    let text = body.to_string();
    assert!(
        text.contains("PolicyExec: policies=[own_region, mask:name]"),
        "{text}"
    );
    assert!(
        !text.contains("north") && !text.contains("subject_attr"),
        "{text}"
    );
}
