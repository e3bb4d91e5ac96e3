//! Metadata edited in place (issue 54; docs/API.md, schemas): `PATCH /api/schema/{layer}/{domain}/
//! {dataset}?version=` changes description, owners, tags and history retention of a version
//! without a new version, so the data stays what every default read shows.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::support::{schema_json, TestServer};

const DATASET: &str = "/api/datasets/default/shop/visits";
const SCHEMA: &str = "/api/schema/default/shop/visits";

fn count(s: &TestServer, t: &str) -> (Value, Value) {
    let q = json!({"select_columns": ["count(*) AS n"]});
    let (status, by_query) = s.call("POST", &format!("{DATASET}/query"), Some(t), Some(&q));
    assert_eq!(status, StatusCode::OK, "{by_query}");
    let sql = json!({"sql": "SELECT count(*) AS n FROM \"default\".\"shop\".\"visits\""});
    let (status, by_sql) = s.call("POST", "/api/sql", Some(t), Some(&sql));
    assert_eq!(status, StatusCode::OK, "{by_sql}");
    (by_query["0"]["n"].clone(), by_sql["0"]["n"].clone())
}

#[test]
fn a_metadata_edit_keeps_the_version_and_its_rows_visible() {
    let s = TestServer::start();
    let t = s.admin_token();
    s.create_schema(&schema_json(
        "shop",
        "visits",
        "PUBLIC",
        "APPEND",
        json!([{"name": "id", "data_type": "int", "allow_null": false}]),
    ));
    let (_, job) = s.upload_and_wait(&t, DATASET, "v.csv", b"id\n1\n2\n3\n".to_vec());
    assert_eq!(job["status"], "SUCCESS", "{job}");

    let patch = json!({
        "description": "Visits, edited in place",
        "key_value_tags": {"team": "web"},
        "key_only_tags": ["daily"],
        "owners": [{"name": "New Owner", "email": "new@example.com"}],
        "history": {"keep_commits": 5},
    });
    let (status, body) = s.call(
        "PATCH",
        &format!("{SCHEMA}?version=1"),
        Some(&t),
        Some(&patch),
    );
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["metadata"]["version"], 1, "{body}");
    assert_eq!(body["metadata"]["description"], "Visits, edited in place");
    assert_eq!(body["metadata"]["history"]["keep_commits"], 5);
    assert_eq!(body["columns"][0]["name"], "id", "columns untouched");

    // No new version: the latest is still 1, with its rows, for every reader.
    let (status, info) = s.call("GET", &format!("{DATASET}/info"), Some(&t), None);
    assert_eq!(status, StatusCode::OK, "{info}");
    assert_eq!(info["metadata"]["version"], 1, "{info}");
    assert_eq!(info["metadata"]["description"], "Visits, edited in place");
    assert_eq!(info["metadata"]["key_value_tags"]["team"], "web");
    assert_eq!(count(&s, &t), (json!(3), json!(3)));
    let (status, _) = s.call("GET", &format!("{DATASET}/info?version=2"), Some(&t), None);
    assert_eq!(status, StatusCode::NOT_FOUND, "no version 2");

    // A second edit changes only what it names; `history: null` returns to the service's.
    let (status, body) = s.call("PATCH", SCHEMA, Some(&t), Some(&json!({"history": null})));
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body["metadata"].get("history").is_none(), "{body}");
    assert_eq!(body["metadata"]["description"], "Visits, edited in place");
}

#[test]
fn sensitivity_columns_unknown_keys_and_non_admins_are_refused() {
    let s = TestServer::start();
    let t = s.admin_token();
    s.create_schema(&schema_json(
        "shop",
        "visits",
        "PUBLIC",
        "APPEND",
        json!([{"name": "id", "data_type": "int", "allow_null": false}]),
    ));
    for (body, word) in [
        (json!({"sensitivity": "PRIVATE"}), "sensitivity"),
        (json!({"columns": []}), "new schema version"),
        (json!({"update_behaviour": "OVERWRITE"}), "update_behaviour"),
        (json!({"description": "x".repeat(2001)}), "at most 2000"),
        (
            json!({"owners": [{"name": "change_me", "email": "change_me@email.com"}]}),
            "owner",
        ),
        (json!({}), "Nothing to change"),
    ] {
        let (status, answer) = s.call("PATCH", SCHEMA, Some(&t), Some(&body));
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body} -> {answer}");
        let details = answer["details"].to_string();
        assert!(details.contains(word), "{body}: {details}");
    }
    let (status, info) = s.call("GET", "/api/schema/default/shop/visits", Some(&t), None);
    assert_ne!(status, StatusCode::OK, "no GET here: {info}");
    let reader = s.token_with("reader", &["READ_ALL"]);
    let edit = json!({"description": "mine"});
    let (status, _) = s.call("PATCH", SCHEMA, Some(&reader), Some(&edit));
    assert_eq!(status, StatusCode::FORBIDDEN);
    let missing = "/api/schema/default/shop/nowhere";
    let (status, _) = s.call("PATCH", missing, Some(&t), Some(&edit));
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = s.call(
        "PATCH",
        &format!("{SCHEMA}?version=7"),
        Some(&t),
        Some(&edit),
    );
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (_, doc) = s.call("GET", "/api/openapi.json", None, None);
    let path = &doc["paths"]["/api/schema/{layer}/{domain}/{dataset}"]["patch"];
    assert!(path.is_object(), "in the OpenAPI document");
}
