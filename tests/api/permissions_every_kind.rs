//! The full route x permission matrix: every route of `rapid_rs::routes::ROUTES` against every
//! permission kind (and each dataset sensitivity), with no token and with one subject per kind.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::support::TestServer;

/// What a route needs, in the full matrix: every route of `rapid_rs::routes::ROUTES`.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Gate {
    /// No token needed, and a token changes nothing (the token endpoint, result links).
    Public,
    AnyToken,
    UserAdmin,
    DataAdmin,
    /// USER_ADMIN or DATA_ADMIN (the audit log).
    AuditReader,
    /// Read or write access to the dataset in the path, whose sensitivity is the second field.
    Dataset(bool, &'static str),
}

/// (method, route pattern, concrete path, body, gate) for every route. Calls by permitted
/// subjects are harmless: unknown names, bodies that fail validation, an empty dataset.
fn all_routes() -> Vec<(&'static str, &'static str, String, Option<Value>, Gate)> {
    use Gate::*;
    let perms = json!({"subject_id": "nobody", "permissions": ["READ_ALL"]});
    let ds = |sens: &str| match sens {
        "PUBLIC" => "default/matrix/open",
        "PRIVATE" => "default/matrix/closed",
        _ => "default/secret/hidden",
    };
    let mut routes = vec![
        ("GET", "/status", "/api/status".to_string(), None, Public),
        ("GET", "/layers", "/api/layers".into(), None, AnyToken),
        ("GET", "/ready", "/api/ready".into(), None, Public),
        // Any subject holding a permission (each subject here holds one).
        ("GET", "/metrics", "/api/metrics".into(), None, AnyToken),
        (
            "POST",
            "/oauth2/token",
            "/api/oauth2/token".into(),
            None,
            Public,
        ),
        (
            "GET",
            "/permissions",
            "/api/permissions".into(),
            None,
            UserAdmin,
        ),
        (
            "GET",
            "/permissions/{subject_id}",
            "/api/permissions/nobody".into(),
            None,
            UserAdmin,
        ),
        (
            "POST",
            "/client",
            "/api/client".into(),
            Some(json!({"client_name": "m2_client"})),
            UserAdmin,
        ),
        (
            "DELETE",
            "/client/{client_id}",
            "/api/client/nobody".into(),
            None,
            UserAdmin,
        ),
        (
            "POST",
            "/user",
            "/api/user".into(),
            Some(json!({"username": "m2_user", "email": "m2@example.com"})),
            UserAdmin,
        ),
        (
            "DELETE",
            "/user",
            "/api/user".into(),
            Some(json!({"username": "nobody", "user_id": "nobody"})),
            UserAdmin,
        ),
        (
            "PUT",
            "/user/password",
            "/api/user/password".into(),
            Some(json!({"current_password": "x", "new_password": "y"})),
            AnyToken,
        ),
        ("GET", "/subjects", "/api/subjects".into(), None, UserAdmin),
        // Any subject may run SQL; it sees only the datasets it may read (tests/api/sql.rs).
        (
            "POST",
            "/sql",
            "/api/sql".into(),
            Some(json!({"sql": "SELECT 1 AS one"})),
            AnyToken,
        ),
        (
            "POST",
            "/sql/large",
            "/api/sql/large".into(),
            Some(json!({"sql": "SELECT 1 AS one"})),
            AnyToken,
        ),
        (
            "PUT",
            "/subjects/permissions",
            "/api/subjects/permissions".into(),
            Some(perms.clone()),
            UserAdmin,
        ),
        (
            "PUT",
            "/subject/permissions",
            "/api/subject/permissions".into(),
            Some(perms),
            UserAdmin,
        ),
        (
            "POST",
            "/schema",
            "/api/schema".into(),
            Some(json!({})),
            DataAdmin,
        ),
        (
            "PUT",
            "/schema",
            "/api/schema".into(),
            Some(json!({})),
            DataAdmin,
        ),
        (
            "PATCH",
            "/schema/{layer}/{domain}/{dataset}",
            "/api/schema/default/matrix/draft?version=1".into(),
            Some(json!({"description": "edited"})),
            DataAdmin,
        ),
        (
            "GET",
            "/audit",
            "/api/audit?limit=1".into(),
            None,
            AuditReader,
        ),
        (
            "GET",
            "/events",
            "/api/events?limit=1".into(),
            None,
            AnyToken,
        ),
        (
            "POST",
            "/webhooks",
            "/api/webhooks".into(),
            Some(json!({"url": "http://169.254.169.254/", "events": ["*"], "datasets": ["*"]})),
            DataAdmin,
        ),
        ("GET", "/webhooks", "/api/webhooks".into(), None, DataAdmin),
        (
            "GET",
            "/webhooks/{id}",
            "/api/webhooks/wh_none".into(),
            None,
            DataAdmin,
        ),
        (
            "DELETE",
            "/webhooks/{id}",
            "/api/webhooks/wh_none".into(),
            None,
            DataAdmin,
        ),
        (
            "POST",
            "/webhooks/{id}/redeliver",
            "/api/webhooks/wh_none/redeliver?event_id=1".into(),
            None,
            DataAdmin,
        ),
        (
            "PUT",
            "/subjects/{subject_id}/attributes",
            "/api/subjects/nobody/attributes".into(),
            Some(json!({"region": "north"})),
            UserAdmin,
        ),
        (
            "PUT",
            "/datasets/{layer}/{domain}/{dataset}/policy",
            "/api/datasets/default/matrix/draft/policy?version=1".into(),
            Some(json!({"row_filters": [], "column_masks": []})),
            DataAdmin,
        ),
        (
            "GET",
            "/datasets/{layer}/{domain}/{dataset}/policy",
            "/api/datasets/default/matrix/draft/policy?version=1".into(),
            None,
            DataAdmin,
        ),
        (
            "DELETE",
            "/datasets/{layer}/{domain}/{dataset}/policy",
            "/api/datasets/default/matrix/draft/policy?version=1".into(),
            None,
            DataAdmin,
        ),
        (
            "POST",
            "/schema/{layer}/{sensitivity}/{domain}/{dataset}/generate",
            "/api/schema/default/PUBLIC/matrix/draft/generate".into(),
            None,
            AnyToken,
        ),
        (
            "POST",
            "/schema/{domain}/{dataset}/generate",
            "/api/schema/matrix/draft/generate".into(),
            None,
            AnyToken,
        ),
        (
            "DELETE",
            "/datasets/{layer}/{domain}/{dataset}",
            "/api/datasets/default/matrix/gone".into(),
            None,
            DataAdmin,
        ),
        ("POST", "/datasets", "/api/datasets".into(), None, AnyToken),
        (
            "GET",
            "/results/{name}",
            "/api/results/nothing.csv?expires=1&signature=x".into(),
            None,
            Public,
        ),
        (
            "GET",
            "/datasets/{layer}/{domain}/{dataset}/{version}/files",
            "/api/datasets/default/matrix/open/1/files".into(),
            None,
            AnyToken,
        ),
        (
            "POST",
            "/datasets/{layer}/{domain}/{dataset}/compact",
            "/api/datasets/default/matrix/open/compact".into(),
            None,
            DataAdmin,
        ),
        (
            "POST",
            "/datasets/{layer}/{domain}/{dataset}/rollback",
            "/api/datasets/default/matrix/open/rollback?to_commit=99".into(),
            None,
            DataAdmin,
        ),
        ("GET", "/jobs", "/api/jobs".into(), None, AnyToken),
        (
            "GET",
            "/jobs/{job_id}",
            "/api/jobs/nosuchjob".into(),
            None,
            AnyToken,
        ),
        (
            "GET",
            "/protected_domains",
            "/api/protected_domains".into(),
            None,
            DataAdmin,
        ),
        (
            "POST",
            "/protected_domains/{domain}",
            "/api/protected_domains/m2domain".into(),
            None,
            DataAdmin,
        ),
        (
            "DELETE",
            "/protected_domains/{domain}",
            "/api/protected_domains/nosuchdomain".into(),
            None,
            DataAdmin,
        ),
    ];
    for sens in ["PUBLIC", "PRIVATE", "PROTECTED"] {
        let d = ds(sens);
        routes.extend([
            (
                "POST",
                "/datasets/{layer}/{domain}/{dataset}",
                format!("/api/datasets/{d}"),
                None,
                Dataset(true, sens),
            ),
            (
                "GET",
                "/datasets/{layer}/{domain}/{dataset}/info",
                format!("/api/datasets/{d}/info"),
                None,
                Dataset(false, sens),
            ),
            (
                "GET",
                "/datasets/{layer}/{domain}/{dataset}/profile",
                format!("/api/datasets/{d}/profile"),
                None,
                Dataset(false, sens),
            ),
            (
                "GET",
                "/datasets/{layer}/{domain}/{dataset}/history",
                format!("/api/datasets/{d}/history"),
                None,
                Dataset(false, sens),
            ),
            (
                "GET",
                "/datasets/{layer}/{domain}/{dataset}/changes",
                format!("/api/datasets/{d}/changes"),
                None,
                Dataset(false, sens),
            ),
            (
                "POST",
                "/datasets/{layer}/{domain}/{dataset}/query",
                format!("/api/datasets/{d}/query"),
                None,
                Dataset(false, sens),
            ),
            (
                "POST",
                "/datasets/{layer}/{domain}/{dataset}/query/large",
                format!("/api/datasets/{d}/query/large"),
                None,
                Dataset(false, sens),
            ),
            (
                "DELETE",
                "/datasets/{layer}/{domain}/{dataset}/{version}/{filename}",
                format!("/api/datasets/{d}/1/nosuchfile.csv"),
                None,
                Dataset(true, sens),
            ),
        ]);
    }
    routes
}

/// Every kind of permission a subject can hold (docs/SPEC.md's names and rAPId's layered ones).
const KINDS: &[&str] = &[
    "READ_ALL",
    "WRITE_ALL",
    "READ_PUBLIC",
    "WRITE_PUBLIC",
    "READ_PRIVATE",
    "WRITE_PRIVATE",
    "READ_PROTECTED_SECRET",
    "WRITE_PROTECTED_SECRET",
    "READ_DEFAULT_PUBLIC",
    "WRITE_ALL_PRIVATE",
    "READ_DEFAULT_PROTECTED_SECRET",
    "USER_ADMIN",
    "DATA_ADMIN",
];

/// Whether a subject holding only `kind` may pass `gate` (the rules of docs/SPEC.md's permissions).
fn allows(kind: &str, gate: Gate) -> bool {
    match gate {
        Gate::Public | Gate::AnyToken => true,
        Gate::UserAdmin => kind == "USER_ADMIN",
        Gate::DataAdmin => kind == "DATA_ADMIN",
        Gate::AuditReader => kind == "USER_ADMIN" || kind == "DATA_ADMIN",
        Gate::Dataset(write, sensitivity) => {
            let verb = if write { "WRITE_" } else { "READ_" };
            let Some(rest) = kind.strip_prefix(verb) else {
                return false;
            };
            // Drop a layer part (`ALL_`, `DEFAULT_`): the dataset is in layer `default`.
            let level = ["ALL_", "DEFAULT_"]
                .iter()
                .find_map(|l| rest.strip_prefix(l))
                .unwrap_or(rest);
            match level {
                "ALL" => true,
                "PUBLIC" => sensitivity == "PUBLIC",
                "PRIVATE" => sensitivity != "PROTECTED",
                "PROTECTED_SECRET" => sensitivity == "PROTECTED",
                _ => false,
            }
        }
    }
}

/// `TestServer::call`, except that an answer that is not JSON (the metrics' text) comes back as
/// a JSON string.
fn any_call(
    s: &TestServer,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<&Value>,
) -> (StatusCode, Value) {
    let mut req = s.request(method, path);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    if let Some(b) = body {
        req = req.json(b);
    }
    let res = req.send().unwrap();
    let status = res.status();
    let text = res.text().unwrap();
    let value = serde_json::from_str(&text).unwrap_or(Value::String(text));
    (status, value)
}

#[test]
fn every_route_and_every_permission_kind() {
    let s = TestServer::start();
    let admin = s.admin_token();
    let (status, _) = s.call("POST", "/api/protected_domains/secret", Some(&admin), None);
    assert_eq!(status, StatusCode::CREATED);
    let columns = json!([{"name": "n", "data_type": "int", "allow_null": true}]);
    for (domain, dataset, sens) in [
        ("matrix", "open", "PUBLIC"),
        ("matrix", "closed", "PRIVATE"),
        ("secret", "hidden", "PROTECTED"),
    ] {
        s.create_schema(&crate::support::schema_json(
            domain,
            dataset,
            sens,
            "APPEND",
            columns.clone(),
        ));
    }
    let tokens: Vec<(&str, String)> = KINDS
        .iter()
        .map(|k| {
            (
                *k,
                s.token_with(&format!("kind_{}", k.to_lowercase()), &[k]),
            )
        })
        .collect();

    for (method, _, path, body, gate) in all_routes() {
        let (status, answer) = any_call(&s, method, &path, None, body.as_ref());
        if gate == Gate::Public {
            // No token is asked for, and a token changes nothing.
            assert!(
                !answer.to_string().contains("bearer"),
                "{method} {path}: {answer}"
            );
            for (kind, token) in &tokens {
                let (with_token, _) = any_call(&s, method, &path, Some(token), body.as_ref());
                assert_eq!(with_token, status, "{method} {path} with {kind}");
            }
            continue;
        }
        assert_eq!(
            status,
            StatusCode::UNAUTHORIZED,
            "{method} {path} without token"
        );
        for (kind, token) in &tokens {
            let (status, answer) = any_call(&s, method, &path, Some(token), body.as_ref());
            if allows(kind, gate) {
                assert!(
                    status != StatusCode::UNAUTHORIZED && status != StatusCode::FORBIDDEN,
                    "{method} {path} with {kind}: {status} {answer}"
                );
            } else {
                assert_eq!(
                    status,
                    StatusCode::FORBIDDEN,
                    "{method} {path} with {kind}: {answer}"
                );
                assert!(
                    answer["details"].as_str().unwrap().contains("permission"),
                    "{answer}"
                );
            }
        }
    }
}

#[test]
fn the_matrix_names_every_route() {
    let routed: std::collections::BTreeSet<(String, String)> = rapid_rs::routes::ROUTES
        .iter()
        .map(|(m, p)| (m.to_uppercase(), p.to_string()))
        .collect();
    let tested: std::collections::BTreeSet<(String, String)> = all_routes()
        .into_iter()
        .map(|(m, p, ..)| (m.to_string(), p.to_string()))
        .collect();
    assert_eq!(routed, tested);
}
