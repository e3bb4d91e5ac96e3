use reqwest::StatusCode;
use serde_json::json;

use crate::support::TestServer;

#[test]
fn protected_domain_lifecycle_controls_its_permissions() {
    let s = TestServer::start();
    let admin = s.admin_token();
    let (status, body) = s.call("POST", "/api/protected_domains/Land", Some(&admin), None);
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(
        body["details"],
        "Successfully created protected domain for land"
    );

    let (status, body) = s.call("POST", "/api/protected_domains/land", Some(&admin), None);
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(
        body["details"],
        "The protected domain, [LAND] already exists"
    );

    assert_eq!(
        s.call("GET", "/api/protected_domains", Some(&admin), None)
            .1,
        json!(["land"])
    );
    let names = s.call("GET", "/api/permissions", Some(&admin), None).1;
    assert!(names
        .as_array()
        .unwrap()
        .contains(&json!("READ_PROTECTED_LAND")));

    // Its permissions are now grantable.
    let (id, _) = s.create_client(
        "lander",
        &["READ_PROTECTED_LAND", "WRITE_PROTECTED_LAND", "READ_PUBLIC"],
    );

    let (status, body) = s.call("DELETE", "/api/protected_domains/land", Some(&admin), None);
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    assert_eq!(body["details"], "land has been deleted.");
    assert_eq!(
        s.call("GET", "/api/protected_domains", Some(&admin), None)
            .1,
        json!([])
    );
    // Deleting the domain took its permissions away from every subject.
    let perms = s
        .call("GET", &format!("/api/permissions/{id}"), Some(&admin), None)
        .1;
    assert_eq!(perms.as_array().unwrap().len(), 1, "{perms}");
    assert_eq!(perms[0]["id"], "READ_PUBLIC");
    let (status, body) = s.call(
        "POST",
        "/api/client",
        Some(&admin),
        Some(&json!({"client_name": "late", "permissions": ["READ_PROTECTED_LAND"]})),
    );
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
}

#[test]
fn invalid_or_unknown_protected_domains_are_refused() {
    let s = TestServer::start();
    let admin = s.admin_token();
    for bad in ["1land", "_land", "la-nd", "l%20and"] {
        let (status, body) = s.call(
            "POST",
            &format!("/api/protected_domains/{bad}"),
            Some(&admin),
            None,
        );
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}");
        assert!(
            body["details"]
                .as_str()
                .unwrap()
                .contains("can only contain alphanumeric"),
            "{body}"
        );
    }
    let (status, body) = s.call("DELETE", "/api/protected_domains/ghost", Some(&admin), None);
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(
        body["details"],
        "The protected domain, [ghost] does not exist."
    );
}
