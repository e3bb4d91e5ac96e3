//! A stored secret or password never appears in the catalog, the logs or a later answer.

use std::os::unix::fs::PermissionsExt;

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::support::{catalog_bytes, contains_bytes, Options, TestServer, ADMIN_SECRET};

#[test]
fn secrets_and_passwords_are_not_stored_logged_or_shown_again() {
    let s = TestServer::start();
    let admin = s.admin_token();
    let (id, secret) = s.create_client("secretive", &["READ_ALL"]);
    let _ = s.token(&id, &secret);
    let (_, user) = s.call(
        "POST",
        "/api/user",
        Some(&admin),
        Some(&json!({"username": "hidden", "email": "h@example.com", "permissions": ["READ_ALL"]})),
    );
    let password = user["temporary_password"].as_str().unwrap().to_string();
    let (status, _) = s.call(
        "POST",
        "/api/oauth2/token",
        None,
        Some(&json!({"grant_type": "password", "username": "hidden", "password": password})),
    );
    assert_eq!(status, StatusCode::OK);

    let mut answers = String::new();
    for path in [
        "/api/subjects",
        &format!("/api/permissions/{id}"),
        "/api/permissions",
    ] {
        answers.push_str(&s.call("GET", path, Some(&admin), None).1.to_string());
    }
    let dir = s.stop(); // graceful: the log and the WAL are complete
    let db = catalog_bytes(&dir.path().join("data"));
    let logs = std::fs::read_to_string(dir.path().join("server.log")).unwrap();
    for needle in [secret.as_str(), password.as_str(), ADMIN_SECRET] {
        assert!(!contains_bytes(&db, needle), "a secret is in the catalog");
        assert!(!logs.contains(needle), "a secret is in the log");
        assert!(!answers.contains(needle), "a secret is in an answer");
    }
    assert!(
        contains_bytes(&db, "$argon2id$"),
        "the password is stored as an argon2id hash"
    );
}

#[test]
fn first_start_writes_admin_credentials_to_a_private_file() {
    let s = TestServer::start_with(Options {
        no_admin_override: true,
        ..Default::default()
    });
    let file = s.data_dir().join("admin-credentials.json");
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let creds: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let (id, secret) = (
        creds["client_id"].as_str().unwrap(),
        creds["client_secret"].as_str().unwrap(),
    );
    let token = s.token(id, secret);
    let perms = s
        .call("GET", &format!("/api/permissions/{id}"), Some(&token), None)
        .1;
    let ids: Vec<&str> = perms
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["DATA_ADMIN", "USER_ADMIN", "READ_ALL", "WRITE_ALL"]);
    assert!(s.logs().contains("admin-credentials.json"));
    assert!(!s.logs().contains(secret));

    // A second start finds subjects and generates nothing new.
    let s = TestServer::start_in(
        s.stop(),
        Options {
            no_admin_override: true,
            ..Default::default()
        },
    );
    let again: Value = serde_json::from_str(
        &std::fs::read_to_string(s.data_dir().join("admin-credentials.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(again, creds);
    assert_eq!(
        s.call("GET", "/api/subjects", Some(&s.token(id, secret)), None)
            .1
            .as_array()
            .unwrap()
            .len(),
        1
    );
}
