//! The full route x permission matrix: every route of `rapid_rs::routes::ROUTES` against every
//! permission kind (and each dataset sensitivity), with no token and with one subject per kind.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::route_gates::{all_routes, Gate};
use crate::support::TestServer;

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
