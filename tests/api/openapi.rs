//! The OpenAPI document (`/api/openapi.json`) and the docs page (`/api/docs`): the document's
//! operations are exactly the router's (`rapid_rs::routes::ROUTES`, built from the same table
//! as the router), it is OpenAPI 3.1 with the security schemes and error bodies, and the docs
//! page and its assets come from the binary, without a token, under a strict CSP.

use std::collections::BTreeSet;

use reqwest::StatusCode;
use serde_json::Value;

use crate::support::TestServer;

const METHODS: &[&str] = &[
    "get", "put", "post", "delete", "patch", "head", "options", "trace",
];

fn document(server: &TestServer) -> Value {
    // No token: the document is public.
    let (status, doc) = server.call("GET", "/api/openapi.json", None, None);
    assert_eq!(status, StatusCode::OK, "{doc}");
    doc
}

fn operations(doc: &Value) -> Vec<(String, String, &Value)> {
    let mut ops = Vec::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for method in METHODS {
            if let Some(op) = item.get(*method) {
                ops.push((method.to_string(), path.clone(), op));
            }
        }
    }
    ops
}

#[test]
fn document_lists_exactly_the_routed_operations() {
    let server = TestServer::start();
    let doc = document(&server);
    let documented: BTreeSet<(String, String)> = operations(&doc)
        .into_iter()
        .map(|(m, p, _)| (m, p))
        .collect();
    let routed: BTreeSet<(String, String)> = rapid_rs::routes::ROUTES
        .iter()
        .map(|(m, p)| (m.to_string(), format!("/api{p}")))
        .collect();
    let undocumented: Vec<_> = routed.difference(&documented).collect();
    let unrouted: Vec<_> = documented.difference(&routed).collect();
    assert!(
        undocumented.is_empty() && unrouted.is_empty(),
        "routed but not in /api/openapi.json: {undocumented:?}; documented but not routed: {unrouted:?}"
    );
    assert!(routed.len() >= 30, "{} routes", routed.len());

    // And every documented operation really is served: with a token, no documented
    // (method, path) answers 404 "no such route" or 405.
    let token = server.admin_token();
    for (method, path) in &documented {
        let concrete = path
            .split('/')
            .map(|seg| match seg {
                "{version}" => "1",
                s if s.starts_with('{') => "nothing_here",
                s => s,
            })
            .collect::<Vec<_>>()
            .join("/");
        let res = server
            .request(&method.to_uppercase(), &concrete)
            .bearer_auth(&token)
            .send()
            .unwrap();
        let status = res.status();
        let body = res.text().unwrap();
        assert_ne!(
            status,
            StatusCode::METHOD_NOT_ALLOWED,
            "{method} {concrete}"
        );
        assert!(
            !body.contains("no such route"),
            "{method} {concrete}: {status} {body}"
        );
    }
}

#[test]
fn document_is_openapi_3_1_with_security_and_error_bodies() {
    let server = TestServer::start();
    let doc = document(&server);
    assert!(
        doc["openapi"].as_str().unwrap().starts_with("3.1"),
        "{}",
        doc["openapi"]
    );
    let schemes = &doc["components"]["securitySchemes"];
    assert_eq!(schemes["bearer"]["type"], "http");
    assert_eq!(schemes["bearer"]["scheme"], "bearer");
    assert_eq!(schemes["basic"]["scheme"], "basic");
    assert_eq!(doc["security"][0]["bearer"], serde_json::json!([]));
    assert!(doc["components"]["schemas"]["ErrorBody"]["properties"]["details"].is_object());

    for (method, path, op) in operations(&doc) {
        let responses = op["responses"].as_object().unwrap();
        assert!(
            responses.keys().any(|s| s.starts_with('2')),
            "{method} {path} documents no success"
        );
        // Every operation documents its errors as the JSON error body.
        let bad = &responses["400"]["content"]["application/json"]["schema"]["$ref"];
        assert_eq!(bad, "#/components/schemas/ErrorBody", "{method} {path}");
        let public = op["security"].as_array().is_some_and(|s| {
            s.iter()
                .any(|r| r.as_object().is_some_and(|o| o.is_empty()))
        });
        assert_eq!(
            responses.contains_key("401"),
            !public || path == "/api/oauth2/token",
            "{method} {path}: 401 documented exactly where a token (or credentials) is needed"
        );
        for param in op["parameters"].as_array().into_iter().flatten() {
            let name = param["name"].as_str().unwrap();
            if param["in"] == "path" {
                assert!(
                    path.contains(&format!("{{{name}}}")),
                    "{method} {path}: {name}"
                );
            }
        }
        for seg in path.split('/').filter(|s| s.starts_with('{')) {
            let name = seg.trim_matches(|c| c == '{' || c == '}');
            let declared = op["parameters"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|p| p["name"] == name && p["in"] == "path");
            assert!(
                declared,
                "{method} {path}: path parameter {name} undocumented"
            );
        }
    }

    let token = &doc["paths"]["/api/oauth2/token"]["post"];
    assert!(token["requestBody"]["content"]["application/x-www-form-urlencoded"].is_object());
    let upload = &doc["paths"]["/api/datasets/{layer}/{domain}/{dataset}"]["post"];
    let form = &upload["requestBody"]["content"]["multipart/form-data"]["schema"];
    assert!(form.is_object(), "{upload}");
    for status in ["202", "404", "413", "422"] {
        assert!(upload["responses"][status].is_object(), "upload {status}");
    }
    let query = &doc["paths"]["/api/datasets/{layer}/{domain}/{dataset}/query"]["post"];
    for media in [
        "application/json",
        "text/csv",
        "application/vnd.apache.parquet",
    ] {
        assert!(
            query["responses"]["200"]["content"][media].is_object(),
            "{media}"
        );
    }
}

#[test]
fn docs_page_and_assets_are_served_offline_under_a_strict_csp() {
    let server = TestServer::start();
    for path in ["/api/docs", "/api/docs/"] {
        let res = server.request("GET", path).send().unwrap();
        assert_eq!(res.status(), StatusCode::OK, "{path}");
        let csp = res.headers()["content-security-policy"]
            .to_str()
            .unwrap()
            .to_string();
        assert!(csp.contains("script-src 'self'"), "{csp}");
        assert!(!csp.contains("script-src 'self' 'unsafe-inline'"), "{csp}");
        assert!(!csp.contains("unsafe-eval"), "{csp}");
        let html = res.text().unwrap();
        assert!(html.contains("swagger-ui"), "{html}");
        assert!(
            !html.contains("http://") && !html.contains("https://"),
            "{html}"
        );
        // No inline script: every <script> has a src.
        assert_eq!(
            html.matches("<script").count(),
            html.matches("<script src=").count()
        );

        let assets: Vec<&str> = html
            .split(['"', '\''])
            .filter(|s| s.starts_with("/api/docs/"))
            .collect();
        assert!(assets.len() >= 5, "{assets:?}");
        for asset in assets {
            let res = server.request("GET", asset).send().unwrap();
            assert_eq!(res.status(), StatusCode::OK, "{asset}");
            assert!(res.bytes().unwrap().len() > 100, "{asset}");
        }
    }
    let init = server
        .request("GET", "/api/docs/swagger-initializer.js")
        .send()
        .unwrap()
        .text()
        .unwrap();
    assert!(init.contains("/api/openapi.json"), "{init}");

    // Swagger UI's files are stored gzipped: sent as they are to a browser that accepts gzip,
    // unpacked for a client that does not (the loop above: reqwest here sends no
    // Accept-Encoding).
    let plain = server
        .request("GET", "/api/docs/swagger-ui-bundle.js")
        .send()
        .unwrap();
    assert!(plain.headers().get("content-encoding").is_none());
    let plain = plain.bytes().unwrap();
    assert!(
        plain.starts_with(b"/*!") || plain.starts_with(b"!function"),
        "not the script"
    );
    for accept in ["gzip, deflate, br", "br;q=1.0, gzip;q=0.5", "*"] {
        let zipped = server
            .request("GET", "/api/docs/swagger-ui-bundle.js")
            .header("accept-encoding", accept)
            .send()
            .unwrap();
        assert_eq!(zipped.headers()["content-encoding"], "gzip", "{accept}");
        assert_eq!(zipped.headers()["vary"], "Accept-Encoding");
        let zipped = zipped.bytes().unwrap();
        assert_eq!(&zipped[..2], &[0x1f, 0x8b], "{accept}");
        assert!(
            zipped.len() * 2 < plain.len(),
            "{} of {}",
            zipped.len(),
            plain.len()
        );
    }
    let refused = server
        .request("GET", "/api/docs/swagger-ui.css")
        .header("accept-encoding", "gzip;q=0, identity")
        .send()
        .unwrap();
    assert!(refused.headers().get("content-encoding").is_none());
    assert!(String::from_utf8(refused.bytes().unwrap().to_vec())
        .unwrap()
        .contains(".swagger-ui"));

    let (status, body) = server.call("GET", "/api/docs/no-such-file.js", None, None);
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(body["details"].is_string(), "{body}");
}

/// A finding of schemathesis: serde reads a struct from a JSON array by position, so `[null,
/// null]` used to run as an empty query (200, every row). A query body is an object or nothing.
#[test]
fn a_query_body_that_is_not_an_object_is_refused() {
    let server = TestServer::start();
    let token = server.admin_token();
    server.create_schema(&crate::support::schema_json(
        "demo",
        "visits",
        "PUBLIC",
        "APPEND",
        serde_json::json!([{"name": "city", "data_type": "string", "allow_null": false}]),
    ));
    let path = "/api/datasets/default/demo/visits";
    server.upload_and_wait(&token, path, "v.csv", b"city\nLeeds\n".to_vec());
    for suffix in ["/query", "/query/large"] {
        for body in [
            serde_json::json!([null, null]),
            serde_json::json!("x"),
            serde_json::json!(3),
        ] {
            let (status, answer) = server.call(
                "POST",
                &format!("{path}{suffix}"),
                Some(&token),
                Some(&body),
            );
            assert_eq!(status, StatusCode::BAD_REQUEST, "{suffix} {body}: {answer}");
            assert!(
                answer["details"].as_str().unwrap().contains("JSON object"),
                "{answer}"
            );
        }
    }
    let (status, rows) = server.call(
        "POST",
        &format!("{path}/query"),
        Some(&token),
        Some(&serde_json::json!({})),
    );
    assert_eq!(status, StatusCode::OK, "{rows}");
    assert_eq!(rows["0"]["city"], "Leeds");
}

/// The same finding on the dataset listing: its filter is an object or nothing.
#[test]
fn a_listing_filter_that_is_an_array_is_refused() {
    let server = TestServer::start();
    let token = server.admin_token();
    let (status, answer) = server.call(
        "POST",
        "/api/datasets",
        Some(&token),
        Some(&serde_json::json!([null])),
    );
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert!(
        answer["details"].as_str().unwrap().contains("JSON object"),
        "{answer}"
    );
}

/// The document states the rules the service enforces (so that schemathesis's
/// positive_data_acceptance holds): the engine's own name patterns, enums, bodies never null.
#[test]
fn document_states_the_rules_of_requests() {
    use rapid_actors::auth::names::{DOMAIN_NAME_PATTERN, MAX_DOMAIN_LEN, SUBJECT_NAME_PATTERN};
    let server = TestServer::start();
    let doc = document(&server);
    let schemas = &doc["components"]["schemas"];
    for (body, field) in [
        ("CreateClientRequest", "client_name"),
        ("CreateUserRequest", "username"),
    ] {
        let rule = &schemas[body]["properties"][field];
        assert_eq!(rule["pattern"], SUBJECT_NAME_PATTERN, "{body}.{field}");
    }
    for field in ["domain", "dataset"] {
        let rule = &schemas["SchemaMetadata"]["properties"][field];
        assert_eq!(rule["pattern"], DOMAIN_NAME_PATTERN, "{field}");
        assert_eq!(rule["maxLength"], MAX_DOMAIN_LEN, "{field}");
    }
    // A dataset's own history retention (docs/guide.md, History), with its bounds.
    let history = &schemas["SchemaHistory"]["properties"];
    assert_eq!(history["keep_commits"]["minimum"], 1, "{history}");
    assert_eq!(history["keep_commits"]["maximum"], 1_000_000, "{history}");
    assert_eq!(history["keep_seconds"]["minimum"], 0, "{history}");
    let meta = serde_json::to_string(&schemas["SchemaMetadata"]["properties"]["history"]).unwrap();
    assert!(meta.contains("SchemaHistory"), "{meta}");
    for method in ["post", "delete"] {
        let op = &doc["paths"]["/api/protected_domains/{domain}"][method];
        let rule = &op["parameters"][0]["schema"];
        assert_eq!(rule["pattern"], DOMAIN_NAME_PATTERN, "{method}");
    }
    let sensitivities = serde_json::json!(["PUBLIC", "PRIVATE", "PROTECTED"]);
    assert_eq!(schemas["Sensitivity"]["enum"], sensitivities);
    let grants = &schemas["TokenRequest"]["properties"]["grant_type"]["enum"];
    assert_eq!(
        grants,
        &serde_json::json!(["client_credentials", "password"])
    );
    for column in ["int", "double", "string", "date", "boolean"] {
        let types = schemas["DataType"]["enum"].as_array().unwrap();
        assert!(types.iter().any(|t| t == column), "{column}");
    }
    // The 400s the rAPId SDK expects where 404 or 409 would be usual are named.
    for (method, path) in [
        ("delete", "/api/datasets/{layer}/{domain}/{dataset}"),
        ("delete", "/api/user"),
        ("post", "/api/client"),
        ("post", "/api/user"),
    ] {
        let bad = &doc["paths"][path][method]["responses"]["400"]["description"];
        assert!(
            bad.as_str().unwrap().contains("rAPId SDK"),
            "{method} {path}"
        );
    }
    // Optional bodies are left out, never sent as null.
    for path in [
        "/api/datasets",
        "/api/datasets/{layer}/{domain}/{dataset}/query",
        "/api/datasets/{layer}/{domain}/{dataset}/query/large",
    ] {
        let body = &doc["paths"][path]["post"]["requestBody"];
        assert_eq!(body["required"], false, "{path}");
        let schema = &body["content"]["application/json"]["schema"];
        assert!(schema["$ref"].is_string(), "{path}: {schema}");
    }
}
