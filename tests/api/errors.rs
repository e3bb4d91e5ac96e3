use reqwest::StatusCode;
use serde_json::json;

use crate::support::TestServer;

#[test]
fn unknown_route_is_404_json_and_wrong_method_is_405_json() {
    let s = TestServer::start();
    let t = s.admin_token();
    let (status, body) = s.call("GET", "/api/nothing/here", Some(&t), None);
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(body["details"].is_string());
    let (status, body) = s.call("PATCH", "/api/client", Some(&t), None);
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    assert!(body["details"].is_string());
}

#[test]
fn malformed_and_ill_typed_json_bodies_are_400_json() {
    let s = TestServer::start();
    let t = s.admin_token();
    let res = s
        .request("POST", "/api/client")
        .bearer_auth(&t)
        .header("Content-Type", "application/json")
        .body("{\"client_name\": ")
        .send()
        .unwrap();
    let (status, body) = crate::support::into_parts(res);
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body["details"]
        .as_str()
        .unwrap()
        .starts_with("Malformed JSON body"));

    let (status, body) = s.call(
        "POST",
        "/api/client",
        Some(&t),
        Some(&json!({"client_name": 5})),
    );
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        body["details"].as_str().unwrap().contains("invalid type"),
        "{body}"
    );

    let (status, body) = s.call(
        "POST",
        "/api/client",
        Some(&t),
        Some(&json!({"client_name": "abc", "permissions": ["READ_ALL"], "surprise": 1})),
    );
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        body["details"].as_str().unwrap().contains("surprise"),
        "{body}"
    );
}

#[test]
fn oversized_json_body_is_413() {
    let s = TestServer::start();
    let name = "a".repeat(5 * 1024 * 1024);
    let (status, body) = s.call(
        "POST",
        "/api/client",
        Some(&s.admin_token()),
        Some(&json!({"client_name": name})),
    );
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert!(body["details"].is_string());
}

#[test]
fn trailing_slashes_are_accepted() {
    let s = TestServer::start();
    let t = s.admin_token();
    assert_eq!(
        s.call("GET", "/api/subjects/", Some(&t), None).0,
        StatusCode::OK
    );
    let (id, _) = s.create_client("trailing", &["READ_ALL"]);
    let (status, _) = s.call("DELETE", &format!("/api/client/{id}/"), Some(&t), None);
    assert_eq!(status, StatusCode::OK);
}

#[test]
fn status_needs_no_token() {
    let s = TestServer::start();
    let (status, body) = s.call("GET", "/api/status", None, None);
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["status"], "deployed");
}
