//! The change feed (`GET .../changes`): the rows each commit removed and added, checked by
//! replaying it: applied in order, its deletes and inserts turn each commit into the next, as
//! `as_of_commit` reads them, for the admin and for a reader under a row filter and a mask.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::support::{schema_json, Options, TestServer};

const ORDERS: &str = "/api/datasets/default/shop/orders";

fn rows(answer: &Value) -> Vec<Value> {
    let rows: Vec<Value> = match answer {
        Value::Object(m) => m.values().cloned().collect(),
        Value::Array(a) => a.clone(),
        other => panic!("not rows: {other}"),
    };
    rows
}

fn sorted(mut rows: Vec<Value>) -> Vec<Value> {
    rows.sort_by_key(|r| r.to_string());
    rows
}

/// The rows `token` reads at commit `n`.
fn at_commit(s: &TestServer, token: &str, n: i64) -> Vec<Value> {
    let path = format!("{ORDERS}/query?as_of_commit={n}");
    let (status, answer) = s.call("POST", &path, Some(token), Some(&json!({})));
    assert_eq!(status, StatusCode::OK, "{answer}");
    sorted(rows(&answer))
}

fn changes(s: &TestServer, token: &str, query: &str) -> (StatusCode, Value) {
    s.call(
        "GET",
        &format!("{ORDERS}/changes{query}"),
        Some(token),
        None,
    )
}

fn upload(s: &TestServer, token: &str, csv: &str) -> String {
    let (accepted, job) = s.upload_and_wait(token, ORDERS, "o.csv", csv.as_bytes().to_vec());
    assert_eq!(job["status"], "SUCCESS", "{job}");
    accepted["raw_filename"].as_str().unwrap().to_string()
}

#[test]
fn replaying_the_changes_gives_every_commit() {
    let s = TestServer::start_with(Options {
        env: vec![("RAPID_HISTORY_KEEP_COMMITS".into(), "100".into())],
        ..Default::default()
    });
    s.create_schema(&schema_json(
        "shop",
        "orders",
        "PUBLIC",
        "APPEND",
        json!([
            {"name": "region", "data_type": "string", "allow_null": false},
            {"name": "id", "data_type": "int", "allow_null": false},
            {"name": "card", "data_type": "string", "allow_null": true}
        ]),
    ));
    let admin = s.admin_token();
    let first = upload(
        &s,
        &admin,
        "region,id,card\nnorth,1,4000111122223333\nsouth,2,4000222233334444\nnorth,1,4000111122223333\n",
    );
    upload(
        &s,
        &admin,
        "region,id,card\nsouth,3,\nnorth,4,4000444455556666\n",
    );
    let (status, body) = s.call("DELETE", &format!("{ORDERS}/1/{first}"), Some(&admin), None);
    assert_eq!(status, StatusCode::OK, "{body}");
    upload(&s, &admin, "region,id,card\nnorth,5,4000555566667777\n");
    let reader = s.token_with("changes-reader", &["READ_PUBLIC"]);
    let policy = json!({
        "row_filters": [{"name": "north", "filter": "region = 'north'", "applies_to": ["changes-reader"]}],
        "column_masks": [{"column": "card", "mask": "last4", "applies_to": ["*"], "except": ["DATA_ADMIN"]}]
    });
    let (status, body) = s.call(
        "PUT",
        &format!("{ORDERS}/policy"),
        Some(&admin),
        Some(&policy),
    );
    assert_eq!(status, StatusCode::OK, "{body}");

    for token in [&admin, &reader] {
        let (status, feed) = changes(&s, token, "");
        assert_eq!(status, StatusCode::OK, "{feed}");
        let feed = rows(&feed);
        let commits: Vec<i64> = feed
            .iter()
            .map(|r| r["_commit"].as_i64().unwrap())
            .collect();
        assert!(
            commits.windows(2).all(|w| w[0] <= w[1]),
            "in commit order: {commits:?}"
        );
        // Replay: start empty, apply each commit's deletes then inserts.
        let mut state: Vec<Value> = Vec::new();
        for n in 1..=4 {
            for r in feed.iter().filter(|r| r["_commit"] == n) {
                let mut row = r.as_object().unwrap().clone();
                let kind = row.remove("_change_type").unwrap();
                row.remove("_commit");
                let row = Value::Object(row);
                match kind.as_str().unwrap() {
                    "insert" => state.push(row),
                    "delete" => {
                        let at = state.iter().position(|x| *x == row);
                        state.remove(at.unwrap_or_else(|| panic!("deleted {row} never inserted")));
                    }
                    other => panic!("change type {other}"),
                }
            }
            assert_eq!(sorted(state.clone()), at_commit(&s, token, n), "commit {n}");
        }
    }
    let (_, reader_feed) = changes(&s, &reader, "");
    for r in rows(&reader_feed) {
        assert_eq!(r["region"], "north", "the row filter applies: {r}");
        assert!(
            r["card"].is_null() || r["card"].as_str().unwrap().len() == 4,
            "{r}"
        );
    }
    let (_, one) = changes(&s, &admin, "?from_commit=3&to_commit=3");
    let one = rows(&one);
    assert_eq!(
        one.len(),
        3,
        "the deletion of the first file's 3 rows: {one:?}"
    );
    assert!(one
        .iter()
        .all(|r| r["_change_type"] == "delete" && r["_commit"] == 3));
    // As /query answers CSV: an index column first.
    let csv = s
        .request("GET", &format!("{ORDERS}/changes?from_commit=4"))
        .bearer_auth(&admin)
        .header("accept", "text/csv")
        .send()
        .unwrap()
        .text()
        .unwrap();
    assert_eq!(
        csv.lines().next().unwrap(),
        ",region,id,card,_change_type,_commit",
        "{csv}"
    );
    assert_eq!(
        csv.lines().nth(1).unwrap(),
        "0,north,5,4000555566667777,insert,4"
    );

    for bad in [
        "?from_commit=3&to_commit=2",
        "?to_commit=99",
        "?from_commit=0",
        "?from_commit=x",
        "?since=1",
    ] {
        let (status, body) = changes(&s, &admin, bad);
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {body}");
    }
    let (status, _) = changes(&s, &admin, "?version=7");
    assert_eq!(status, StatusCode::NOT_FOUND);
    let none = s.token_with("no-reader", &["WRITE_ALL"]);
    let (status, _) = changes(&s, &none, "");
    assert_eq!(status, StatusCode::FORBIDDEN);
}
