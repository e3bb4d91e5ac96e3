//! A row filter on partition columns only is applied by the files a scan keeps, not row by
//! row (query/reading/policy_table.rs): the rows shown must be exactly those the filters keep
//! (one of them also reading a file column, so evaluated row by row), on `/query` and
//! `/api/sql`, and a user predicate that fails on a hidden row must still never see it.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::policies::{rows, subject};
use crate::support::{schema_json, TestServer};

const ZONES: &str = "/api/datasets/default/hr/zones";
const CSV: &str = "region,name,salary\nnorth,ann,100\nnorth,bob,0\nsouth,cid,300\neast,dan,400\n\
                   west,eve,50\n";

fn server() -> TestServer {
    let s = TestServer::start();
    s.create_schema(&schema_json(
        "hr",
        "zones",
        "PUBLIC",
        "APPEND",
        json!([
            {"name": "region", "data_type": "string", "allow_null": false, "partition_index": 0},
            {"name": "name", "data_type": "string", "allow_null": false},
            {"name": "salary", "data_type": "int", "allow_null": false}
        ]),
    ));
    let (_, job) = s.upload_and_wait(&s.admin_token(), ZONES, "zones.csv", CSV.into());
    assert_eq!(job["status"], "SUCCESS", "{job}");
    s
}

fn set_policy(s: &TestServer, policy: &Value) {
    let (status, body) = s.call(
        "PUT",
        &format!("{ZONES}/policy"),
        Some(&s.admin_token()),
        Some(policy),
    );
    assert_eq!(status, StatusCode::OK, "{body}");
}

fn names_of(answer: &Value) -> Vec<String> {
    let mut names: Vec<String> = rows(answer)
        .iter()
        .map(|r| r["name"].as_str().unwrap().to_string())
        .collect();
    names.sort();
    names
}

#[test]
fn a_partition_only_row_filter_keeps_exactly_its_rows_on_every_front() {
    let s = server();
    let policy = json!({"row_filters": [
        {"name": "not_north", "filter": "region <> 'north'", "applies_to": ["READ_ALL"],
         "except": ["DATA_ADMIN"]},
        {"name": "listed", "filter": "region IN ('south', 'west') OR salary > 1000",
         "applies_to": ["READ_ALL"], "except": ["DATA_ADMIN"]}
    ]});
    set_policy(&s, &policy);
    let (id, secret) = s.create_client("zone-reader", &["READ_ALL"]);
    let token = s.token(&id, &secret);
    // north's files are skipped whole; dan (east, 400) fails the second filter row by row.
    let (status, answer) = s.call(
        "POST",
        &format!("{ZONES}/query"),
        Some(&token),
        Some(&json!({})),
    );
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(names_of(&answer), ["cid", "eve"]);
    let sql = |statement: &str| {
        let (status, answer) = s.call(
            "POST",
            "/api/sql",
            Some(&token),
            Some(&json!({ "sql": statement })),
        );
        assert_eq!(status, StatusCode::OK, "{statement}: {answer}");
        rows(&answer)
    };
    let table = "\"default\".\"hr\".\"zones\"";
    assert_eq!(
        sql(&format!(
            "SELECT count(*) AS n, sum(salary) AS total FROM {table}"
        )),
        [json!({"n": 2, "total": 350})]
    );
    assert_eq!(
        sql(&format!(
            "SELECT count(*) AS n FROM {table} WHERE region IN ('north', 'east')"
        )),
        [json!({"n": 0})]
    );
    // bob (salary 0) is in a hidden partition: a division by his salary never runs.
    let (status, answer) = s.call(
        "POST",
        &format!("{ZONES}/query"),
        Some(&token),
        Some(&json!({"filter": "100 / salary >= 0"})),
    );
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(names_of(&answer), ["cid", "eve"]);
    // The admin, whom the filters do not name, sees every row.
    let (status, answer) = s.call(
        "POST",
        &format!("{ZONES}/query"),
        Some(&s.admin_token()),
        Some(&json!({})),
    );
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(names_of(&answer), ["ann", "bob", "cid", "dan", "eve"]);
}

/// The same statement from subjects whose attributes differ, again and again: a plan kept for
/// one subject's policy (query/reading/plan_cache.rs) is never run for another's.
#[test]
fn kept_plans_are_never_shared_between_subjects_policies() {
    let s = server();
    let policy = json!({"row_filters": [
        {"name": "own", "filter": "region = subject_attr('region')", "applies_to": ["READ_ALL"],
         "except": ["DATA_ADMIN"]}
    ]});
    set_policy(&s, &policy);
    let readers: Vec<(String, Vec<&str>)> = [("west", vec!["eve"]), ("north", vec!["ann", "bob"])]
        .into_iter()
        .map(|(region, names)| {
            let reader = subject(&s, &format!("{region}-reader"), Some(region));
            (reader.token, names)
        })
        .collect();
    let body =
        json!({"select_columns": ["name", "salary"], "order_by_columns": [{"column": "name"}]});
    for round in 0..3 {
        for (token, names) in &readers {
            let (status, answer) =
                s.call("POST", &format!("{ZONES}/query"), Some(token), Some(&body));
            assert_eq!(status, StatusCode::OK, "{answer}");
            assert_eq!(&names_of(&answer), names, "round {round}");
        }
    }
}
