//! Operations: Prometheus metrics change as uploads and queries happen; who may read them.

use reqwest::StatusCode;
use serde_json::json;

use crate::support::{schema_json, Options, TestServer};

const UPLOAD: &str = "/api/datasets/default/ops/visits";
const QUERY_SERIES: &str = r#"rapid_http_requests_total{method="POST",route="/api/datasets/{layer}/{domain}/{dataset}/query",status="200"}"#;

fn scrape(s: &TestServer, token: &str) -> String {
    let res = s
        .request("GET", "/api/metrics")
        .bearer_auth(token)
        .send()
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert!(res.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/plain"));
    res.text().unwrap()
}

/// The value of one series (name with its labels exactly as written), 0 when absent.
/// A scrape once `series` reaches `at_least`, or after 5 s: the stored totals are counted when
/// the commit's reply comes back from the dataset's actor, a moment after the job reads SUCCESS.
fn scrape_when(s: &TestServer, token: &str, series: &str, at_least: f64) -> String {
    let mut text = scrape(s, token);
    for _ in 0..100 {
        if value(&text, series) >= at_least {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
        text = scrape(s, token);
    }
    text
}

fn value(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|l| {
            l.strip_prefix(series)
                .and_then(|rest| rest.strip_prefix(' '))
        })
        .map_or(0.0, |v| v.trim().parse().unwrap())
}

fn with_schema() -> TestServer {
    let s = TestServer::start();
    s.create_schema(&schema_json(
        "ops",
        "visits",
        "PUBLIC",
        "APPEND",
        json!([
            {"name": "city", "data_type": "string", "allow_null": false},
            {"name": "n", "data_type": "int", "allow_null": false},
        ]),
    ));
    s
}

#[test]
fn metrics_count_uploads_queries_jobs_and_requests_by_route_template() {
    let s = with_schema();
    let admin = s.admin_token();
    let before = scrape(&s, &admin);
    assert!(
        before.contains("# TYPE rapid_http_request_duration_seconds histogram"),
        "{before}"
    );
    assert_eq!(value(&before, "rapid_upload_rows_total"), 0.0);

    let csv = b"city,n\nLeeds,1\nYork,2\nHull,3\n".to_vec();
    let len = csv.len() as f64;
    let (_, job) = s.upload_and_wait(&admin, UPLOAD, "v.csv", csv);
    assert_eq!(job["status"], "SUCCESS", "{job}");
    let (status, body) = s.call(
        "POST",
        &format!("{UPLOAD}/query"),
        Some(&admin),
        Some(&json!({})),
    );
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, _) = s.upload(
        &admin,
        UPLOAD,
        "bad.csv",
        b"city,n\nLeeds,notanumber\n".to_vec(),
    );
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);

    let after = scrape_when(&s, &admin, "rapid_upload_rows_total", 3.0);
    assert_eq!(value(&after, "rapid_upload_rows_total"), 3.0, "{after}");
    assert_eq!(value(&after, "rapid_upload_bytes_total"), len);
    assert_eq!(value(&after, "rapid_upload_validation_failures_total"), 1.0);
    assert_eq!(
        value(&after, r#"rapid_jobs{kind="UPLOAD",status="SUCCESS"}"#),
        1.0,
        "{after}"
    );
    assert_eq!(
        value(&after, r#"rapid_jobs{kind="UPLOAD",status="FAILED"}"#),
        1.0
    );
    assert_eq!(
        value(&after, r#"rapid_catalog_objects{object="stored_rows"}"#),
        3.0
    );
    assert_eq!(
        value(&after, r#"rapid_catalog_objects{object="datasets"}"#),
        1.0
    );
    assert!(value(&after, "rapid_catalog_file_bytes") > 0.0);
    assert_eq!(value(&before, QUERY_SERIES), 0.0);
    assert_eq!(value(&after, QUERY_SERIES), 1.0, "{after}");
    let count = QUERY_SERIES.replace(
        "rapid_http_requests_total",
        "rapid_http_request_duration_seconds_count",
    );
    assert_eq!(value(&after, &count), 1.0);
    // Route templates only: no raw dataset path as a label.
    assert!(
        !after.contains("route=\"/api/datasets/default/ops/visits"),
        "{after}"
    );
    assert_eq!(value(&after, r#"rapid_queries_running{pool="sync"}"#), 0.0);
    assert!(
        after.contains(r#"rapid_queries_refused_total{pool="sync"} 0"#),
        "{after}"
    );
    assert_eq!(value(&after, "rapid_upload_commits_pending"), 0.0);
    let upload_202 = r#"rapid_http_requests_total{method="POST",route="/api/datasets/{layer}/{domain}/{dataset}",status="202"}"#;
    assert_eq!(value(&after, upload_202), 1.0);
}

#[test]
fn metrics_need_a_token_with_some_permission_unless_on_their_own_address() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let s = TestServer::start_with(Options {
        args: vec!["--metrics-bind".into(), format!("127.0.0.1:{port}")],
        ..Options::default()
    });
    assert_eq!(
        s.call("GET", "/api/metrics", None, None).0,
        StatusCode::UNAUTHORIZED
    );
    // A subject left with no permission at all.
    let (id, secret) = s.create_client("nothing", &["READ_PUBLIC"]);
    let (status, body) = s.call(
        "PUT",
        "/api/subjects/permissions",
        Some(&s.admin_token()),
        Some(&json!({"subject_id": id, "permissions": []})),
    );
    assert_eq!(status, StatusCode::OK, "{body}");
    let none = s.token(&id, &secret);
    assert_eq!(
        s.call("GET", "/api/metrics", Some(&none), None).0,
        StatusCode::FORBIDDEN
    );
    let reader = s.token_with("reader", &["READ_PUBLIC"]);
    assert!(scrape(&s, &reader).contains("rapid_http_requests_total"));
    // The separate address answers without a token, and only /metrics.
    let open = reqwest::blocking::get(format!("http://127.0.0.1:{port}/metrics")).unwrap();
    assert_eq!(open.status(), StatusCode::OK);
    assert!(open.text().unwrap().contains(r#"status="403""#));
    let other = reqwest::blocking::get(format!("http://127.0.0.1:{port}/api/subjects")).unwrap();
    assert_eq!(other.status(), StatusCode::NOT_FOUND);
}
