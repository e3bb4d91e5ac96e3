//! `POST /api/schema` and `PUT /api/schema`: creation, versions, the rules a stored schema follows,
//! protected domains and permissions.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::support::{Options, TestServer};

/// A valid schema with a real owner.
fn schema(domain: &str, dataset: &str, sensitivity: &str) -> Value {
    json!({
        "metadata": {
            "domain": domain,
            "dataset": dataset,
            "sensitivity": sensitivity,
            "description": "Orders placed in the shop",
            "key_value_tags": {"team": "sales"},
            "key_only_tags": ["finance"],
            "owners": [{"name": "Jane Owner", "email": "jane@example.com"}],
            "update_behaviour": "APPEND"
        },
        "columns": [
            {"name": "id", "data_type": "int", "allow_null": false, "partition_index": null},
            {"name": "customer", "data_type": "string", "allow_null": true},
            {"name": "ordered_on", "data_type": "date", "allow_null": true, "format": "%Y-%m-%d"}
        ]
    })
}

fn post(s: &TestServer, token: &str, body: &Value) -> (StatusCode, Value) {
    s.call("POST", "/api/schema", Some(token), Some(body))
}

fn put(s: &TestServer, token: &str, body: &Value) -> (StatusCode, Value) {
    s.call("PUT", "/api/schema", Some(token), Some(body))
}

/// The `details` of an error answer as a list, whether it held one message or several.
fn messages(body: &Value) -> Vec<String> {
    match &body["details"] {
        Value::String(m) => vec![m.clone()],
        Value::Array(ms) => ms
            .iter()
            .map(|m| m.as_str().expect("string message").to_string())
            .collect(),
        other => panic!("details is neither a string nor a list: {other}"),
    }
}

fn assert_mentions(body: &Value, fragment: &str) {
    let all = messages(body);
    assert!(
        all.iter().any(|m| m.contains(fragment)),
        "no message contains {fragment:?}: {all:?}"
    );
}

#[test]
fn schema_is_created_as_version_1_and_a_duplicate_is_409_in_any_case() {
    let s = TestServer::start();
    let admin = s.admin_token();
    let (status, body) = post(&s, &admin, &schema("sales", "orders", "PUBLIC"));
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["version"], 1);
    assert_eq!(
        body["details"],
        "The schema for [default/sales/orders] has been created as version 1"
    );

    let (status, body) = post(&s, &admin, &schema("sales", "orders", "PUBLIC"));
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_mentions(&body, "Schema already exists");
    assert_mentions(&body, "[orders]");

    // Dataset names compare case-insensitively: `Orders` is the same dataset.
    for dataset in ["Orders", "ORDERS"] {
        let (status, body) = post(&s, &admin, &schema("sales", dataset, "PUBLIC"));
        assert_eq!(status, StatusCode::CONFLICT, "{dataset}: {body}");
        assert_mentions(&body, "Schema already exists");
    }
    // So do domains.
    let (status, body) = post(&s, &admin, &schema("Sales", "orders", "PUBLIC"));
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
}

#[test]
fn updates_store_versions_2_and_3() {
    let s = TestServer::start();
    let admin = s.admin_token();
    let mut body = schema("sales", "orders", "PRIVATE");
    assert_eq!(post(&s, &admin, &body).0, StatusCode::CREATED);

    body["columns"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "total", "data_type": "double", "allow_null": true}));
    let (status, answer) = put(&s, &admin, &body);
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["version"], 2);
    assert_eq!(
        answer["details"],
        "The schema for [default/sales/orders] has been stored as version 2"
    );

    // The dataset may be named in another case on update.
    body["metadata"]["dataset"] = json!("Orders");
    body["metadata"]["description"] = json!("Third version");
    let (status, answer) = put(&s, &admin, &body);
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["version"], 3);
    assert!(
        answer["details"]
            .as_str()
            .unwrap()
            .ends_with("has been stored as version 3"),
        "{answer}"
    );
}

#[test]
fn update_cannot_change_the_sensitivity() {
    let s = TestServer::start();
    let admin = s.admin_token();
    assert_eq!(
        post(&s, &admin, &schema("sales", "orders", "PUBLIC")).0,
        StatusCode::CREATED
    );
    let (status, body) = put(&s, &admin, &schema("sales", "orders", "PRIVATE"));
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_mentions(
        &body,
        "You cannot change the sensitivity when updating a schema",
    );
    assert_mentions(&body, "[PRIVATE] does not match the original [PUBLIC]");

    // The refused update stored nothing: the next good one is version 2.
    let (status, body) = put(&s, &admin, &schema("sales", "orders", "PUBLIC"));
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["version"], 2);
}

#[test]
fn update_of_an_unknown_dataset_is_404() {
    let s = TestServer::start();
    let admin = s.admin_token();
    let (status, body) = put(&s, &admin, &schema("sales", "nothing_here", "PUBLIC"));
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert_mentions(&body, "Could not find the schema");
    assert_mentions(&body, "[nothing_here]");
}

#[test]
fn integer_is_accepted_as_int() {
    let s = TestServer::start();
    let admin = s.admin_token();
    let mut body = schema("sales", "orders", "PUBLIC");
    body["columns"][0]["data_type"] = json!("integer");
    let (status, answer) = post(&s, &admin, &body);
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    let (status, answer) = put(&s, &admin, &body);
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["version"], 2);

    // The column is an int column: uploads are judged against `int`.
    let path = "/api/datasets/default/sales/orders";
    let (status, answer) = s.upload(
        &admin,
        path,
        "o.csv",
        b"id,customer,ordered_on\n2.5,x,\n".to_vec(),
    );
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{answer}");
    assert_mentions(
        &answer,
        "Column [id] has an incorrect data type. Expected int",
    );
    let (_, job) = s.upload_and_wait(
        &admin,
        path,
        "o.csv",
        b"id,customer,ordered_on\n7,x,\n".to_vec(),
    );
    assert_eq!(job["status"], "SUCCESS", "{job}");
}

#[test]
fn unknown_metadata_keys_are_ignored_and_the_version_is_assigned() {
    let s = TestServer::start();
    let admin = s.admin_token();
    let mut body = schema("sales", "orders", "PUBLIC");
    body["metadata"]["is_latest_version"] = json!(true);
    body["metadata"]["version"] = json!(7);
    body["metadata"]["tags"] = json!({"old": "style"});
    body["columns"][1]["statistics"] = Value::Null;
    let (status, answer) = post(&s, &admin, &body);
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    assert_eq!(answer["version"], 1);

    // A version in an update is ignored too ...
    let (status, answer) = put(&s, &admin, &body);
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["version"], 2);
    // ... and so is `version: null`, as the SDK sends it.
    body["metadata"]["version"] = Value::Null;
    let (status, answer) = put(&s, &admin, &body);
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["version"], 3);
}

#[test]
fn an_invalid_schema_reports_every_problem() {
    let s = TestServer::start();
    let admin = s.admin_token();
    let body = json!({
        "metadata": {
            "domain": "sales",
            "dataset": "bad-name",
            "sensitivity": "SECRET",
            "owners": [{"name": "Jane", "email": "jane@example.com"}],
            "update_behaviour": "REPLACE"
        },
        "columns": [
            {"name": "Order ID", "data_type": "int", "allow_null": true},
            {"name": "ordered_on", "data_type": "date", "allow_null": true, "format": "%Y%m%d"},
            {"name": "amount", "data_type": "float", "allow_null": true}
        ]
    });
    let (status, answer) = post(&s, &admin, &body);
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    let list = answer["details"]
        .as_array()
        .unwrap_or_else(|| panic!("expected a list of messages: {answer}"));
    assert!(list.len() >= 6, "{answer}");
    for fragment in [
        "Column name [Order ID] must be lower case",
        "Column [ordered_on] has an invalid date format [%Y%m%d]",
        "Column [amount] has an unaccepted data type [float]",
        "The value set for dataset [bad-name] can only contain alphanumeric",
        "You must specify a valid sensitivity level",
        "You must specify a valid update behaviour",
    ] {
        assert_mentions(&answer, fragment);
    }
}

#[test]
fn the_placeholder_owner_is_refused() {
    let s = TestServer::start();
    let admin = s.admin_token();
    let mut body = schema("sales", "orders", "PUBLIC");
    body["metadata"]["owners"] = json!([{"name": "change_me", "email": "change_me@email.com"}]);
    let (status, answer) = post(&s, &admin, &body);
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert_eq!(answer["details"], "You must change the default owner");

    // Replacing only the name is not enough either.
    body["metadata"]["owners"] = json!([{"name": "Jane", "email": "change_me@email.com"}]);
    let (status, answer) = post(&s, &admin, &body);
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert_mentions(&answer, "You must change the default owner");

    body["metadata"]["owners"] = json!([]);
    let (status, answer) = post(&s, &admin, &body);
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert_mentions(&answer, "You must specify at least one owner");
}

#[test]
fn protected_schema_needs_its_protected_domain_which_then_cannot_be_deleted() {
    let s = TestServer::start();
    let admin = s.admin_token();
    let body = schema("land", "parcels", "PROTECTED");
    let (status, answer) = post(&s, &admin, &body);
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert_eq!(
        answer["details"],
        "The protected domain 'land' does not exist."
    );

    let (status, answer) = s.call("POST", "/api/protected_domains/Land", Some(&admin), None);
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    let (status, answer) = post(&s, &admin, &body);
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    assert_eq!(answer["version"], 1);

    let (status, answer) = s.call("DELETE", "/api/protected_domains/land", Some(&admin), None);
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert_mentions(&answer, "Cannot delete protected domain [land]");
    assert_mentions(&answer, "default/land/parcels");
    // The domain is still there, so are its permissions.
    assert_eq!(
        s.call("GET", "/api/protected_domains", Some(&admin), None)
            .1,
        json!(["land"])
    );
}

#[test]
fn a_layer_not_among_the_instance_layers_is_refused() {
    let s = TestServer::start();
    let admin = s.admin_token();
    let mut body = schema("sales", "orders", "PUBLIC");
    body["metadata"]["layer"] = json!("raw");
    let (status, answer) = post(&s, &admin, &body);
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert_eq!(
        answer["details"],
        "The layer [raw] does not exist. Accepted layers: default"
    );
    drop(s);

    let s = TestServer::start_with(Options {
        args: vec!["--layers".into(), "raw,curated".into()],
        ..Default::default()
    });
    let admin = s.admin_token();
    let (status, answer) = post(&s, &admin, &body);
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    assert_eq!(
        answer["details"],
        "The schema for [raw/sales/orders] has been created as version 1"
    );
    body["metadata"]["layer"] = json!("gold");
    let (status, answer) = post(&s, &admin, &body);
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert_mentions(&answer, "Accepted layers: raw, curated");
}

#[test]
fn schema_routes_need_data_admin_and_a_token() {
    let s = TestServer::start();
    let writer = s.token_with("writer", &["WRITE_ALL", "READ_ALL"]);
    let body = schema("sales", "orders", "PUBLIC");
    for method in ["POST", "PUT"] {
        let (status, answer) = s.call(method, "/api/schema", Some(&writer), Some(&body));
        assert_eq!(status, StatusCode::FORBIDDEN, "{method}: {answer}");
        assert!(answer["details"].is_string(), "{answer}");
        let (status, answer) = s.call(method, "/api/schema", None, Some(&body));
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{method}: {answer}");
        assert!(answer["details"].is_string(), "{answer}");
    }
    // Neither stored anything.
    let admin = s.admin_token();
    let (status, answer) = post(&s, &admin, &body);
    assert_eq!(status, StatusCode::CREATED, "{answer}");
}

/// A protected domain deleted while a schema for it is being created: one of the two wins, never
/// both (which would leave a PROTECTED dataset in a domain that no longer exists).
#[test]
fn protected_schema_creation_racing_domain_deletion_never_orphans_a_dataset() {
    let s = TestServer::start();
    let admin = s.admin_token();
    for i in 0..150 {
        let domain = format!("race{i}");
        let path = format!("/api/protected_domains/{domain}");
        let (status, answer) = s.call("POST", &path, Some(&admin), None);
        assert_eq!(status, StatusCode::CREATED, "{answer}");
        let body = schema(&domain, "parcels", "PROTECTED");
        let (created, deleted) = std::thread::scope(|scope| {
            let create = scope.spawn(|| post(&s, &admin, &body));
            let delete = scope.spawn(|| s.call("DELETE", &path, Some(&admin), None));
            (create.join().unwrap(), delete.join().unwrap())
        });
        match (created.0, deleted.0) {
            (StatusCode::CREATED, StatusCode::BAD_REQUEST) => {
                assert_mentions(&deleted.1, "Cannot delete protected domain");
            }
            (StatusCode::BAD_REQUEST, StatusCode::ACCEPTED) => {
                assert_eq!(
                    created.1["details"],
                    format!("The protected domain '{domain}' does not exist.")
                );
            }
            other => panic!("round {i}: {other:?}: {} / {}", created.1, deleted.1),
        }
    }
}

#[test]
fn concurrent_creates_and_updates_get_one_winner_and_distinct_versions() {
    let s = TestServer::start();
    let admin = s.admin_token();
    let body = schema("sales", "orders", "PUBLIC");
    let created: Vec<StatusCode> = std::thread::scope(|scope| {
        let posts: Vec<_> = (0..4)
            .map(|_| scope.spawn(|| post(&s, &admin, &body).0))
            .collect();
        posts.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(
        created
            .iter()
            .filter(|&&c| c == StatusCode::CREATED)
            .count(),
        1,
        "{created:?}"
    );
    assert!(
        created
            .iter()
            .all(|&c| c == StatusCode::CREATED || c == StatusCode::CONFLICT),
        "{created:?}"
    );

    let mut versions: Vec<i64> = std::thread::scope(|scope| {
        let puts: Vec<_> = (0..5)
            .map(|_| {
                scope.spawn(|| {
                    let (status, answer) = put(&s, &admin, &body);
                    assert_eq!(status, StatusCode::OK, "{answer}");
                    answer["version"].as_i64().unwrap()
                })
            })
            .collect();
        puts.into_iter().map(|h| h.join().unwrap()).collect()
    });
    versions.sort_unstable();
    assert_eq!(versions, [2, 3, 4, 5, 6]);
}
