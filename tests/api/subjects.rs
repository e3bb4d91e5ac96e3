use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::support::{TestServer, ADMIN_ID};

const INVALID_PERMISSIONS: &str =
    "One or more of the provided permissions is invalid or duplicated";

fn create_client(s: &TestServer, body: Value) -> (StatusCode, Value) {
    s.call("POST", "/api/client", Some(&s.admin_token()), Some(&body))
}

fn create_user(s: &TestServer, name: &str, email: &str) -> (StatusCode, Value) {
    s.call(
        "POST",
        "/api/user",
        Some(&s.admin_token()),
        Some(&json!({"username": name, "email": email, "permissions": ["READ_PUBLIC"]})),
    )
}

#[test]
fn client_is_created_with_id_and_secret() {
    let s = TestServer::start();
    let (status, body) = create_client(
        &s,
        json!({"client_name": "etl.job-1", "permissions": ["READ_ALL", "WRITE_PUBLIC"]}),
    );
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(body["client_name"], "etl.job-1");
    assert_eq!(body["permissions"], json!(["READ_ALL", "WRITE_PUBLIC"]));
    assert_eq!(body["client_id"].as_str().unwrap().len(), 26);
    assert!(body["client_secret"].as_str().unwrap().len() >= 40);
}

#[test]
fn client_without_permissions_gets_read_public() {
    let s = TestServer::start();
    let (status, body) = create_client(&s, json!({"client_name": "defaulted"}));
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["permissions"], json!(["READ_PUBLIC"]));
}

#[test]
fn client_name_rules_are_enforced() {
    let s = TestServer::start();
    for bad in ["ab", "1client", "has space", "bad!", &"x".repeat(129)] {
        let (status, body) =
            create_client(&s, json!({"client_name": bad, "permissions": ["READ_ALL"]}));
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}");
        let msg = body["details"].as_str().unwrap();
        assert!(msg.starts_with("Invalid client name provided"), "{msg}");
        assert!(msg.contains(&format!("[{bad}]")), "{msg}");
    }
}

#[test]
fn duplicate_client_name_is_400_already_exists() {
    let s = TestServer::start();
    assert_eq!(
        create_client(
            &s,
            json!({"client_name": "twin", "permissions": ["READ_ALL"]})
        )
        .0,
        StatusCode::CREATED
    );
    let (status, body) = create_client(
        &s,
        json!({"client_name": "TWIN", "permissions": ["READ_ALL"]}),
    );
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["details"], "Client name 'TWIN' already exists");
}

#[test]
fn invalid_duplicated_or_empty_permissions_are_refused() {
    let s = TestServer::start();
    for perms in [
        json!(["READ_EVERYTHING"]),
        json!(["READ_ALL", "READ_ALL"]),
        json!(["READ_PROTECTED_NOPE"]),
    ] {
        let (status, body) =
            create_client(&s, json!({"client_name": "perms", "permissions": perms}));
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_eq!(body["details"], INVALID_PERMISSIONS);
    }
    let (status, body) = create_client(&s, json!({"client_name": "perms", "permissions": []}));
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["details"], "At least one permission must be provided");
    // Nothing was half-created.
    assert_eq!(
        create_client(
            &s,
            json!({"client_name": "perms", "permissions": ["READ_ALL"]})
        )
        .0,
        StatusCode::CREATED
    );
}

#[test]
fn deleting_an_unknown_client_is_404() {
    let s = TestServer::start();
    let (status, body) = s.call(
        "DELETE",
        "/api/client/doesnotexist",
        Some(&s.admin_token()),
        None,
    );
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(body["details"], "The client 'doesnotexist' does not exist");
}

#[test]
fn user_is_created_with_id_and_one_time_password() {
    let s = TestServer::start();
    let (status, body) = create_user(&s, "grace.h", "Grace@Example.COM");
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["username"], "grace.h");
    assert_eq!(body["email"], "Grace@example.com");
    assert_eq!(body["permissions"], json!(["READ_PUBLIC"]));
    assert_eq!(body["user_id"].as_str().unwrap().len(), 36);
    assert_eq!(body["temporary_password"].as_str().unwrap().len(), 24);
}

#[test]
fn user_email_rules_are_enforced() {
    let s = TestServer::start();
    for (email, fragment) in [
        ("no-at-sign", "is not a valid address"),
        ("a@b@example.com", "is not a valid address"),
        ("x@evil.com", "is not an allowed email domain"),
        ("x@ample.com", "is not an allowed email domain"),
        ("x@sub.example.com", "is not an allowed email domain"),
    ] {
        let (status, body) = create_user(&s, "someone", email);
        assert_eq!(status, StatusCode::BAD_REQUEST, "{email}");
        let msg = body["details"].as_str().unwrap();
        assert!(msg.starts_with("Invalid email provided"), "{msg}");
        assert!(msg.contains(fragment), "{email}: {msg}");
    }
    assert_eq!(
        create_user(&s, "someone", "x@test.org").0,
        StatusCode::CREATED
    );
}

#[test]
fn username_rules_are_enforced() {
    let s = TestServer::start();
    for bad in ["ab", "9lives", "white space", "semi;colon"] {
        let (status, body) = create_user(&s, bad, "u@example.com");
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(
            body["details"]
                .as_str()
                .unwrap()
                .starts_with("This username is invalid"),
            "{body}"
        );
    }
}

#[test]
fn duplicate_username_or_email_is_400() {
    let s = TestServer::start();
    assert_eq!(
        create_user(&s, "alan", "alan@example.com").0,
        StatusCode::CREATED
    );
    let (status, body) = create_user(&s, "Alan", "other@example.com");
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        body["details"],
        "The user 'Alan' or email 'other@example.com' already exist"
    );
    let (status, _) = create_user(&s, "alan2", "alan@EXAMPLE.com");
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[test]
fn user_deletion_needs_matching_name_and_id() {
    let s = TestServer::start();
    let (_, user) = create_user(&s, "margaret", "m@example.com");
    let id = user["user_id"].as_str().unwrap();
    let admin = s.admin_token();
    let (status, _) = s.call(
        "DELETE",
        "/api/user",
        Some(&admin),
        Some(&json!({"username": "someoneelse", "user_id": id})),
    );
    // 400, as rAPId: the SDK's delete_user maps it to SubjectNotFoundException.
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, body) = s.call(
        "DELETE",
        "/api/user",
        Some(&admin),
        Some(&json!({"username": "margaret", "user_id": id})),
    );
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["message"], "The user 'margaret' has been deleted");
    let subjects = s.call("GET", "/api/subjects", Some(&admin), None).1;
    assert!(!subjects.to_string().contains("margaret"));
}

#[test]
fn subjects_lists_clients_then_users() {
    let s = TestServer::start();
    let (client_id, _) = s.create_client("lister", &["READ_ALL"]);
    let (_, user) = create_user(&s, "listed", "l@example.com");
    let (status, body) = s.call("GET", "/api/subjects", Some(&s.admin_token()), None);
    assert_eq!(status, StatusCode::OK);
    let list = body.as_array().unwrap();
    assert_eq!(list.len(), 3);
    assert_eq!(list[0]["type"], "CLIENT");
    assert!(list
        .iter()
        .any(|x| x["subject_id"] == client_id.as_str() && x["subject_name"] == "lister"));
    let u = list.last().unwrap();
    assert_eq!(u["type"], "USER");
    assert_eq!(u["subject_id"], user["user_id"]);
    assert_eq!(u["email"], "l@example.com");
    assert!(list.iter().any(|x| x["subject_id"] == ADMIN_ID));
}

#[test]
fn permissions_of_unknown_subject_are_404_and_invalid_ones_400() {
    let s = TestServer::start();
    let admin = s.admin_token();
    let (status, _) = s.call(
        "PUT",
        "/api/subjects/permissions",
        Some(&admin),
        Some(&json!({"subject_id": "ghost", "permissions": ["READ_ALL"]})),
    );
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, body) = s.call(
        "PUT",
        "/api/subjects/permissions",
        Some(&admin),
        Some(&json!({"subject_id": ADMIN_ID, "permissions": ["NOT_A_PERMISSION"]})),
    );
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["details"], INVALID_PERMISSIONS);
    let (status, perms) = s.call(
        "GET",
        &format!("/api/permissions/{ADMIN_ID}"),
        Some(&admin),
        None,
    );
    assert_eq!(status, StatusCode::OK);
    let ids: Vec<&str> = perms
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["DATA_ADMIN", "USER_ADMIN", "READ_ALL", "WRITE_ALL"]);
    assert_eq!(
        s.call("GET", "/api/permissions/ghost", Some(&admin), None)
            .0,
        StatusCode::NOT_FOUND
    );
}

#[test]
fn permission_list_names_every_valid_permission() {
    let s = TestServer::start();
    let (status, body) = s.call("GET", "/api/permissions", Some(&s.admin_token()), None);
    assert_eq!(status, StatusCode::OK);
    let names: Vec<&str> = body
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    for p in [
        "READ_ALL",
        "READ_PUBLIC",
        "READ_PRIVATE",
        "WRITE_ALL",
        "WRITE_PUBLIC",
        "WRITE_PRIVATE",
        "DATA_ADMIN",
        "USER_ADMIN",
    ] {
        assert!(names.contains(&p), "{p}");
    }
}
