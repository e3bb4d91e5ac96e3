//! Every route of `rapid_rs::routes::ROUTES` with what it needs and a harmless call to make of it:
//! the table the full permission matrix (`permissions_every_kind.rs`) runs.

use serde_json::{json, Value};

/// What a route needs, in the full matrix: every route of `rapid_rs::routes::ROUTES`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Gate {
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
pub(crate) fn all_routes() -> Vec<(&'static str, &'static str, String, Option<Value>, Gate)> {
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
