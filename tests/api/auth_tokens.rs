use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine;
use reqwest::StatusCode;
use serde_json::json;

use crate::support::{into_parts, Options, TestServer, ADMIN_ID, ADMIN_SECRET};

#[test]
fn token_is_issued_for_sdk_style_request_and_works() {
    let s = TestServer::start();
    let (status, body) = s.try_token(ADMIN_ID, ADMIN_SECRET);
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["token_type"], "Bearer");
    assert_eq!(body["expires_in"], 3600);
    let token = body["access_token"].as_str().unwrap();
    let (status, layers) = s.call("GET", "/api/layers", Some(token), None);
    assert_eq!(status, StatusCode::OK);
    assert_eq!(layers, json!(["default"]));
}

#[test]
fn token_accepts_form_and_json_bodies_with_credentials_inside() {
    let s = TestServer::start();
    let form = s
        .request("POST", "/api/oauth2/token")
        .form(&[
            ("grant_type", "client_credentials"),
            ("client_id", ADMIN_ID),
            ("client_secret", ADMIN_SECRET),
        ])
        .send()
        .unwrap();
    let (status, body) = into_parts(form);
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body["access_token"].is_string());

    let (status, body) = s.call(
        "POST",
        "/api/oauth2/token",
        None,
        Some(&json!({"grant_type": "client_credentials", "client_id": ADMIN_ID, "client_secret": ADMIN_SECRET})),
    );
    assert_eq!(status, StatusCode::OK, "{body}");
}

#[test]
fn bad_secret_and_unknown_client_are_401_with_the_same_message() {
    let s = TestServer::start();
    let res = s
        .request("POST", "/api/oauth2/token")
        .basic_auth(ADMIN_ID, Some("wrong"))
        .send()
        .unwrap();
    assert_eq!(res.headers().get("www-authenticate").unwrap(), "Bearer");
    let (status, wrong_secret) = into_parts(res);
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, unknown) = s.try_token("nobody", ADMIN_SECRET);
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(wrong_secret, unknown);
    assert_eq!(unknown["details"], "Invalid client credentials");
}

#[test]
fn missing_credentials_and_unknown_grant_are_rejected() {
    let s = TestServer::start();
    let (status, _) = s.call("POST", "/api/oauth2/token", None, None);
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, body) = s.call(
        "POST",
        "/api/oauth2/token",
        None,
        Some(&json!({"grant_type": "magic"})),
    );
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body["details"].as_str().unwrap().contains("magic"));
}

#[test]
fn expired_token_is_rejected() {
    let s = TestServer::start_with(Options {
        args: vec!["--token-ttl-seconds".into(), "1".into()],
        ..Default::default()
    });
    let token = s.admin_token();
    assert_eq!(
        s.call("GET", "/api/layers", Some(&token), None).0,
        StatusCode::OK
    );
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let (status, body) = s.call("GET", "/api/layers", Some(&token), None);
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(body["details"], "The token has expired");
}

#[test]
fn tampered_token_is_rejected() {
    let s = TestServer::start();
    let (id, secret) = s.create_client("reader", &["READ_PUBLIC"]);
    let token = s.token(&id, &secret);
    // Claim to be the admin, keeping the reader's signature.
    let parts: Vec<&str> = token.split('.').collect();
    let claims =
        B64.encode(json!({"sub": ADMIN_ID, "iat": 0, "exp": 9_999_999_999i64}).to_string());
    let forged = format!("{}.{}.{}", parts[0], claims, parts[2]);
    let (status, _) = s.call("GET", "/api/subjects", Some(&forged), None);
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    // One flipped signature character.
    let mut bad = token.clone();
    let last = bad.pop().unwrap();
    bad.push(if last == 'A' { 'B' } else { 'A' });
    assert_eq!(
        s.call("GET", "/api/layers", Some(&bad), None).0,
        StatusCode::UNAUTHORIZED
    );
    for garbage in ["", "abc", "a.b.c", "Bearer"] {
        assert_eq!(
            s.call("GET", "/api/layers", Some(garbage), None).0,
            StatusCode::UNAUTHORIZED
        );
    }
}

#[test]
fn missing_or_non_bearer_authorization_is_401() {
    let s = TestServer::start();
    let (status, body) = s.call("GET", "/api/layers", None, None);
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(body["details"].as_str().unwrap().contains("Bearer"));
    let res = s
        .request("GET", "/api/layers")
        .basic_auth(ADMIN_ID, Some(ADMIN_SECRET))
        .send()
        .unwrap();
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
}

#[test]
fn deleted_client_token_stops_working_at_once() {
    let s = TestServer::start();
    let (id, secret) = s.create_client("shortlived", &["READ_ALL"]);
    let token = s.token(&id, &secret);
    assert_eq!(
        s.call("GET", "/api/layers", Some(&token), None).0,
        StatusCode::OK
    );
    let (status, body) = s.call(
        "DELETE",
        &format!("/api/client/{id}"),
        Some(&s.admin_token()),
        None,
    );
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body["message"],
        format!("The client '{id}' has been deleted")
    );
    assert_eq!(body["details"], body["message"]);
    assert_eq!(
        s.call("GET", "/api/layers", Some(&token), None).0,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(s.try_token(&id, &secret).0, StatusCode::UNAUTHORIZED);
}

#[test]
fn user_logs_in_with_temporary_password_then_changes_it() {
    let s = TestServer::start();
    let admin = s.admin_token();
    let (status, user) = s.call(
        "POST",
        "/api/user",
        Some(&admin),
        Some(&json!({"username": "ada", "email": "ada@example.com", "permissions": ["READ_ALL"]})),
    );
    assert_eq!(status, StatusCode::CREATED, "{user}");
    let temp = user["temporary_password"].as_str().unwrap().to_string();
    let login = |password: &str| {
        s.call(
            "POST",
            "/api/oauth2/token",
            None,
            Some(&json!({"grant_type": "password", "username": "ada", "password": password})),
        )
    };
    let (status, body) = login(&temp);
    assert_eq!(status, StatusCode::OK, "{body}");
    let token = body["access_token"].as_str().unwrap().to_string();

    let change = |current: &str, new: &str| {
        s.call(
            "PUT",
            "/api/user/password",
            Some(&token),
            Some(&json!({"current_password": current, "new_password": new})),
        )
    };
    let (status, body) = change("not it", "a much better password");
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["details"], "The current password is not correct");
    let (status, body) = change(&temp, "short");
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body["details"].as_str().unwrap().contains("at least 12"));
    let (status, body) = change(&temp, "a much better password");
    assert_eq!(status, StatusCode::OK, "{body}");

    assert_eq!(login(&temp).0, StatusCode::UNAUTHORIZED);
    assert_eq!(login("a much better password").0, StatusCode::OK);
    let (status, body) = login("wrong password!");
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(body["details"], "Invalid username or password");
    // Clients have no password to change.
    let (status, _) = s.call(
        "PUT",
        "/api/user/password",
        Some(&admin),
        Some(&json!({"current_password": ADMIN_SECRET, "new_password": "whatever whatever"})),
    );
    assert_eq!(status, StatusCode::BAD_REQUEST);
}
