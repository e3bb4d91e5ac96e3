//! Route x permission: every route of the service, called with no token, with a subject lacking
//! the permission, and with one holding it.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::support::TestServer;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Needs {
    Nothing,
    AnyToken,
    UserAdmin,
    DataAdmin,
}

fn routes() -> Vec<(&'static str, &'static str, Option<Value>, Needs)> {
    use Needs::*;
    let perms = json!({"subject_id": "nobody", "permissions": ["READ_ALL"]});
    vec![
        ("GET", "/api/status", None, Nothing),
        ("GET", "/api/layers", None, AnyToken),
        (
            "POST",
            "/api/mcp",
            Some(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})),
            AnyToken,
        ),
        (
            "PUT",
            "/api/user/password",
            Some(json!({"current_password": "x", "new_password": "y"})),
            AnyToken,
        ),
        ("GET", "/api/permissions", None, UserAdmin),
        ("GET", "/api/permissions/nobody", None, UserAdmin),
        (
            "POST",
            "/api/client",
            Some(json!({"client_name": "matrix_client", "permissions": ["READ_ALL"]})),
            UserAdmin,
        ),
        ("DELETE", "/api/client/nobody", None, UserAdmin),
        (
            "POST",
            "/api/user",
            Some(
                json!({"username": "matrix_user", "email": "m@example.com", "permissions": ["READ_ALL"]}),
            ),
            UserAdmin,
        ),
        (
            "DELETE",
            "/api/user",
            Some(json!({"username": "nobody", "user_id": "nobody"})),
            UserAdmin,
        ),
        ("GET", "/api/subjects", None, UserAdmin),
        (
            "PUT",
            "/api/subjects/permissions",
            Some(perms.clone()),
            UserAdmin,
        ),
        ("PUT", "/api/subject/permissions", Some(perms), UserAdmin),
        (
            "PUT",
            "/api/subjects/nobody/attributes",
            Some(json!({"region": "north"})),
            UserAdmin,
        ),
        (
            "PUT",
            "/api/datasets/default/nodomain/nodataset/policy",
            Some(json!({"row_filters": [], "column_masks": []})),
            DataAdmin,
        ),
        (
            "GET",
            "/api/datasets/default/nodomain/nodataset/policy",
            None,
            DataAdmin,
        ),
        (
            "DELETE",
            "/api/datasets/default/nodomain/nodataset/policy",
            None,
            DataAdmin,
        ),
        ("GET", "/api/protected_domains", None, DataAdmin),
        (
            "POST",
            "/api/protected_domains/matrixdomain",
            None,
            DataAdmin,
        ),
        (
            "DELETE",
            "/api/protected_domains/nosuchdomain",
            None,
            DataAdmin,
        ),
    ]
}

#[test]
fn every_route_enforces_its_permission() {
    let s = TestServer::start();
    let data_reader = s.token_with("data_rw", &["READ_ALL", "WRITE_ALL"]);
    let user_admin = s.token_with("user_admin", &["USER_ADMIN"]);
    let data_admin = s.token_with("data_admin", &["DATA_ADMIN"]);

    for (method, path, body, needs) in routes() {
        let call = |token: Option<&str>| s.call(method, path, token, body.as_ref());
        let denied = |status: StatusCode| {
            status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN
        };

        let (status, _) = call(None);
        if needs == Needs::Nothing {
            assert!(!denied(status), "{method} {path} without token: {status}");
            continue;
        }
        assert_eq!(
            status,
            StatusCode::UNAUTHORIZED,
            "{method} {path} without token"
        );

        let (holder, others): (&str, Vec<&str>) = match needs {
            Needs::AnyToken => (&data_reader, vec![]),
            Needs::UserAdmin => (&user_admin, vec![&data_reader, &data_admin]),
            Needs::DataAdmin => (&data_admin, vec![&data_reader, &user_admin]),
            Needs::Nothing => unreachable!(),
        };
        for other in others {
            let (status, body) = call(Some(other));
            assert_eq!(
                status,
                StatusCode::FORBIDDEN,
                "{method} {path} lacking permission: {body}"
            );
            assert!(
                body["details"].as_str().unwrap().contains("permission"),
                "{body}"
            );
        }
        let (status, body) = call(Some(holder));
        assert!(
            !denied(status),
            "{method} {path} with permission: {status} {body}"
        );
    }
}

#[test]
fn permission_change_takes_effect_on_the_next_request() {
    let s = TestServer::start();
    let (id, secret) = s.create_client("promoted", &["READ_ALL"]);
    let token = s.token(&id, &secret);
    assert_eq!(
        s.call("GET", "/api/subjects", Some(&token), None).0,
        StatusCode::FORBIDDEN
    );
    let admin = s.admin_token();
    let (status, body) = s.call(
        "PUT",
        "/api/subjects/permissions",
        Some(&admin),
        Some(&json!({"subject_id": id, "permissions": ["USER_ADMIN"]})),
    );
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        body,
        json!({"subject_id": id, "permissions": ["USER_ADMIN"]})
    );
    // Same token, no re-login.
    assert_eq!(
        s.call("GET", "/api/subjects", Some(&token), None).0,
        StatusCode::OK
    );
    let (status, _) = s.call(
        "PUT",
        "/api/subject/permissions",
        Some(&admin),
        Some(&json!({"subject_id": id, "permissions": []})),
    );
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        s.call("GET", "/api/subjects", Some(&token), None).0,
        StatusCode::FORBIDDEN
    );
}
