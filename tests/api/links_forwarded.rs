//! Links the service builds (a large query's `result_url`) behind a balancer: the public URL
//! setting wins, a trusted proxy's forwarded host and scheme are used, anyone else's are not.

use reqwest::StatusCode;
use serde_json::json;

use crate::support::{schema_json, Options, TestServer};

fn one_row_dataset(s: &TestServer, t: &str) {
    s.create_schema(&schema_json(
        "links",
        "rows",
        "PUBLIC",
        "APPEND",
        json!([{"name": "n", "data_type": "int", "allow_null": false}]),
    ));
    let (_, job) = s.upload_and_wait(
        t,
        "/api/datasets/default/links/rows",
        "r.csv",
        b"n\n7\n".to_vec(),
    );
    assert_eq!(job["status"], "SUCCESS", "{job}");
}

/// Starts a large query with `headers` added; the finished job's `result_url`.
fn result_url(s: &TestServer, t: &str, headers: &[(&str, String)]) -> String {
    let mut req = s
        .request("POST", "/api/datasets/default/links/rows/query/large")
        .bearer_auth(t)
        .json(&json!({}));
    for (name, value) in headers {
        req = req.header(*name, value);
    }
    let res = req.send().unwrap();
    assert_eq!(res.status(), StatusCode::ACCEPTED);
    let body: serde_json::Value = res.json().unwrap();
    let job = s.wait_job(t, body["details"]["job_id"].as_str().unwrap());
    assert_eq!(job["status"], "SUCCESS", "{job}");
    job["result_url"].as_str().unwrap().to_string()
}

fn port_of(s: &TestServer) -> u16 {
    s.base.rsplit(':').next().unwrap().parse().unwrap()
}

#[test]
fn forwarded_headers_from_an_untrusted_peer_never_reach_a_link() {
    let s = TestServer::start();
    let t = s.admin_token();
    one_row_dataset(&s, &t);
    let spoofed = [
        ("x-forwarded-host", "evil.example:9999".to_string()),
        ("x-forwarded-proto", "https".to_string()),
        ("forwarded", "host=evil2.example;proto=https".to_string()),
    ];
    let url = result_url(&s, &t, &spoofed);
    assert!(!url.contains("evil"), "{url}");
    assert!(
        url.starts_with(&format!("{}/api/results/", s.base)),
        "{url}"
    );
    assert_eq!(
        reqwest::blocking::get(&url).unwrap().status(),
        StatusCode::OK
    );
}

#[test]
fn a_trusted_proxy_forwards_host_with_port_and_the_link_downloads() {
    let s = TestServer::start_with(Options {
        args: vec!["--trusted-proxies".into(), "127.0.0.1".into()],
        ..Default::default()
    });
    let t = s.admin_token();
    one_row_dataset(&s, &t);
    // The "balancer" is this test: its public name is localhost on the node's own port, which
    // the Host header it sends the node does not carry.
    let public = format!("localhost:{}", port_of(&s));
    let url = result_url(
        &s,
        &t,
        &[
            ("host", "node-internal".to_string()),
            ("x-forwarded-host", public.clone()),
            ("x-forwarded-proto", "http".to_string()),
        ],
    );
    assert!(
        url.starts_with(&format!("http://{public}/api/results/")),
        "{url}"
    );
    let res = reqwest::blocking::get(&url).unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert!(res.text().unwrap().contains(",7"));

    // RFC 7239 `Forwarded` is read as well, and preferred.
    let url = result_url(
        &s,
        &t,
        &[
            ("x-forwarded-host", "ignored:1".to_string()),
            (
                "forwarded",
                format!("for=10.1.1.1;host=\"{public}\";proto=https"),
            ),
        ],
    );
    assert!(
        url.starts_with(&format!("https://{public}/api/results/")),
        "{url}"
    );
}

#[test]
fn the_public_url_setting_wins_over_every_header() {
    let s = TestServer::start_with(Options {
        args: vec![
            "--trusted-proxies".into(),
            "127.0.0.1".into(),
            "--public-url".into(),
            "https://data.example.com/rapid/".into(),
        ],
        ..Default::default()
    });
    let t = s.admin_token();
    one_row_dataset(&s, &t);
    let url = result_url(
        &s,
        &t,
        &[("x-forwarded-host", "proxy.example:81".to_string())],
    );
    assert!(
        url.starts_with("https://data.example.com/rapid/api/results/"),
        "{url}"
    );
}
