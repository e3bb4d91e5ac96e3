use reqwest::StatusCode;
use serde_json::json;

use crate::support::{Options, TestServer};

#[test]
fn restart_keeps_subjects_permissions_domains_and_tokens() {
    let s = TestServer::start();
    let admin = s.admin_token();
    assert_eq!(
        s.call("POST", "/api/protected_domains/sea", Some(&admin), None)
            .0,
        StatusCode::CREATED
    );
    let (id, secret) = s.create_client("survivor", &["READ_PROTECTED_SEA", "USER_ADMIN"]);
    let token = s.token(&id, &secret);
    let (_, user) = s.call(
        "POST",
        "/api/user",
        Some(&admin),
        Some(
            &json!({"username": "stayer", "email": "s@example.com", "permissions": ["WRITE_ALL"]}),
        ),
    );
    let before = s.call("GET", "/api/subjects", Some(&admin), None).1;

    let s = TestServer::start_in(s.stop(), Options::default());
    // A token issued before the restart is still valid: the signing key is persisted.
    let (status, after) = s.call("GET", "/api/subjects", Some(&token), None);
    assert_eq!(status, StatusCode::OK);
    assert_eq!(before, after);
    let admin = s.admin_token();
    assert_eq!(
        s.call("GET", &format!("/api/permissions/{id}"), Some(&admin), None)
            .1,
        json!([
            {"id": "READ_PROTECTED_SEA", "type": "READ", "sensitivity": "PROTECTED", "domain": "SEA", "layer": "ALL"},
            {"id": "USER_ADMIN", "type": "USER_ADMIN", "sensitivity": null, "domain": null, "layer": null},
        ])
    );
    assert_eq!(
        s.call(
            "GET",
            &format!("/api/permissions/{}", user["user_id"].as_str().unwrap()),
            Some(&admin),
            None
        )
        .1[0]["id"],
        "WRITE_ALL"
    );
    assert_eq!(
        s.call("GET", "/api/protected_domains", Some(&admin), None)
            .1,
        json!(["sea"])
    );
    // The client secret still works (token() asserts a 200).
    s.token(&id, &secret);
}

#[test]
fn sigterm_stops_the_server_cleanly() {
    let s = TestServer::start();
    let dir = s.stop();
    let log = std::fs::read_to_string(dir.path().join("server.log")).unwrap();
    assert!(!log.contains("panicked"), "{log}");
    assert!(log.contains("shutdown signal received"), "{log}");
    assert!(log.contains("accept thread stopped"), "{log}");
}
