//! rAPId v7's layered permission names (`READ_{LAYER}_PUBLIC`, `WRITE_{LAYER}_PROTECTED_{DOMAIN}`,
//! `{LAYER}` a configured layer or `ALL`) grant access in that layer only, next to docs/SPEC.md's names,
//! which cover every layer.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::support::{schema_json, Options, TestServer};

const INVALID_PERMISSIONS: &str =
    "One or more of the provided permissions is invalid or duplicated";

fn two_layer_server() -> TestServer {
    TestServer::start_with(Options {
        args: vec!["--layers".into(), "default,raw".into()],
        ..Default::default()
    })
}

fn schema(layer: &str, domain: &str, sensitivity: &str) -> Value {
    let mut schema = schema_json(
        domain,
        "things",
        sensitivity,
        "APPEND",
        json!([{"name": "n", "data_type": "int", "allow_null": false}]),
    );
    schema["metadata"]["layer"] = json!(layer);
    schema
}

/// (layer, domain) of every dataset the test creates, each holding one row.
const DATASETS: [(&str, &str, &str); 4] = [
    ("default", "shop", "PUBLIC"),
    ("raw", "shop", "PUBLIC"),
    ("default", "vault", "PROTECTED"),
    ("raw", "vault", "PROTECTED"),
];

fn path(layer: &str, domain: &str) -> String {
    format!("/api/datasets/{layer}/{domain}/things")
}

/// The datasets (`layer/domain`) a token may query, in DATASETS order.
fn readable(s: &TestServer, token: &str) -> Vec<String> {
    DATASETS
        .iter()
        .filter(|(l, d, _)| {
            let (status, body) =
                s.call("POST", &format!("{}/query", path(l, d)), Some(token), None);
            assert!(
                status == StatusCode::OK || status == StatusCode::FORBIDDEN,
                "{l}/{d}: {status} {body}"
            );
            status == StatusCode::OK
        })
        .map(|(l, d, _)| format!("{l}/{d}"))
        .collect()
}

fn listed(s: &TestServer, token: &str) -> Vec<String> {
    let (status, list) = s.call("POST", "/api/datasets", Some(token), None);
    assert_eq!(status, StatusCode::OK, "{list}");
    list.as_array()
        .unwrap()
        .iter()
        .map(|e| {
            format!(
                "{}/{}",
                e["layer"].as_str().unwrap(),
                e["domain"].as_str().unwrap()
            )
        })
        .collect()
}

#[test]
fn layered_names_grant_access_in_their_layer_only() {
    let s = two_layer_server();
    let admin = s.admin_token();
    let (status, body) = s.call("POST", "/api/protected_domains/vault", Some(&admin), None);
    assert_eq!(status, StatusCode::CREATED, "{body}");
    for (layer, domain, sensitivity) in DATASETS {
        s.create_schema(&schema(layer, domain, sensitivity));
        s.upload_and_wait(&admin, &path(layer, domain), "a.csv", b"n\n1\n".to_vec());
    }

    let raw_public = s.token_with("raw_public", &["READ_RAW_PUBLIC"]);
    assert_eq!(readable(&s, &raw_public), ["raw/shop"]);
    let all_public = s.token_with("all_public", &["READ_ALL_PUBLIC"]);
    assert_eq!(readable(&s, &all_public), ["default/shop", "raw/shop"]);
    let spec_public = s.token_with("spec_public", &["READ_PUBLIC"]);
    assert_eq!(readable(&s, &spec_public), ["default/shop", "raw/shop"]);
    let raw_vault = s.token_with("raw_vault", &["READ_RAW_PROTECTED_VAULT"]);
    assert_eq!(readable(&s, &raw_vault), ["raw/vault"]);
    let spec_vault = s.token_with("spec_vault", &["READ_PROTECTED_VAULT"]);
    assert_eq!(readable(&s, &spec_vault), ["default/vault", "raw/vault"]);
    let default_private = s.token_with("default_private", &["READ_DEFAULT_PRIVATE"]);
    assert_eq!(readable(&s, &default_private), ["default/shop"]);

    // Listing shows a protected dataset only in the layer the permission covers.
    assert_eq!(
        listed(&s, &raw_vault),
        ["default/shop", "raw/shop", "raw/vault"]
    );

    // WRITE works the same way.
    let writer = s.token_with(
        "raw_writer",
        &["WRITE_RAW_PUBLIC", "WRITE_DEFAULT_PROTECTED_VAULT"],
    );
    for (layer, domain, allowed) in [
        ("raw", "shop", true),
        ("default", "shop", false),
        ("default", "vault", true),
        ("raw", "vault", false),
    ] {
        let (status, body) = s.upload(&writer, &path(layer, domain), "b.csv", b"n\n2\n".to_vec());
        let expected = if allowed {
            StatusCode::ACCEPTED
        } else {
            StatusCode::FORBIDDEN
        };
        assert_eq!(status, expected, "{layer}/{domain}: {body}");
    }
}

#[test]
fn layered_names_are_listed_validated_and_described() {
    let s = two_layer_server();
    let admin = s.admin_token();
    s.call("POST", "/api/protected_domains/vault", Some(&admin), None);
    let (status, names) = s.call("GET", "/api/permissions", Some(&admin), None);
    assert_eq!(status, StatusCode::OK);
    let names: Vec<&str> = names
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    for expected in [
        "READ_ALL",
        "READ_PUBLIC",
        "READ_PROTECTED_VAULT",
        "READ_ALL_PUBLIC",
        "READ_ALL_PRIVATE",
        "READ_DEFAULT_PUBLIC",
        "READ_RAW_PRIVATE",
        "READ_RAW_PROTECTED_VAULT",
        "WRITE_ALL_PROTECTED_VAULT",
        "WRITE_DEFAULT_PRIVATE",
        "DATA_ADMIN",
        "USER_ADMIN",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    assert_eq!(names.len(), 2 * (1 + 4 * 3) + 2, "{names:?}");

    for bad in [
        vec!["READ_CURATED_PUBLIC"],
        vec!["READ_RAW_PROTECTED_NOPE"],
        vec!["READ_raw_PUBLIC"],
        vec!["READ_RAW_PUBLIC", "READ_RAW_PUBLIC"],
    ] {
        let (status, body) = s.call(
            "POST",
            "/api/client",
            Some(&admin),
            Some(&json!({"client_name": "bad_perms", "permissions": bad})),
        );
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad:?}");
        assert_eq!(body["details"], INVALID_PERMISSIONS);
    }

    // A rAPId v7 script's user, created unchanged.
    let (status, user) = s.call(
        "POST",
        "/api/user",
        Some(&admin),
        Some(&json!({"username": "v7.user", "email": "v7@example.com",
                     "permissions": ["READ_DEFAULT_PUBLIC", "WRITE_ALL_PRIVATE", "READ_RAW_PROTECTED_VAULT"]})),
    );
    assert_eq!(status, StatusCode::CREATED, "{user}");
    assert_eq!(
        user["permissions"],
        json!([
            "READ_DEFAULT_PUBLIC",
            "WRITE_ALL_PRIVATE",
            "READ_RAW_PROTECTED_VAULT"
        ])
    );
    let id = user["user_id"].as_str().unwrap();
    let (status, items) = s.call("GET", &format!("/api/permissions/{id}"), Some(&admin), None);
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        items,
        json!([
            {"id": "READ_DEFAULT_PUBLIC", "type": "READ", "sensitivity": "PUBLIC", "domain": null, "layer": "DEFAULT"},
            {"id": "WRITE_ALL_PRIVATE", "type": "WRITE", "sensitivity": "PRIVATE", "domain": null, "layer": "ALL"},
            {"id": "READ_RAW_PROTECTED_VAULT", "type": "READ", "sensitivity": "PROTECTED", "domain": "VAULT", "layer": "RAW"},
        ])
    );

    // Deleting the protected domain takes its permissions, layered ones included, from everyone.
    let (status, body) = s.call("DELETE", "/api/protected_domains/vault", Some(&admin), None);
    assert!(status.is_success(), "{body}");
    let items = s
        .call("GET", &format!("/api/permissions/{id}"), Some(&admin), None)
        .1;
    let ids: Vec<&str> = items
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["READ_DEFAULT_PUBLIC", "WRITE_ALL_PRIVATE"]);
}

#[test]
fn layered_permissions_survive_a_restart() {
    let s = two_layer_server();
    let (id, _) = s.create_client("raw_writer", &["WRITE_RAW_PRIVATE"]);
    let dir = s.stop();
    let s = TestServer::start_in(
        dir,
        Options {
            args: vec!["--layers".into(), "default,raw".into()],
            ..Default::default()
        },
    );
    let admin = s.admin_token();
    let items = s
        .call("GET", &format!("/api/permissions/{id}"), Some(&admin), None)
        .1;
    assert_eq!(items[0]["id"], "WRITE_RAW_PRIVATE", "{items}");
    assert_eq!(items[0]["layer"], "RAW");
}
