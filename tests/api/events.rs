//! Change events (docs/API.md, "Webhooks", "Pull feed"): signed CloudEvents delivered to a real
//! receiver on loopback and verified by the Standard Webhooks reference library; retries, the
//! dead-letter state and redelivery; refused receivers and subscriptions; the pull feed showing
//! each subject only what it may read, page by page without gap or repeat.

use std::process::{Command, Stdio};
use std::sync::atomic::Ordering;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::pyarrow_readback::python;
use crate::receiver::{Delivery, Receiver};
use crate::support::{schema_json, Options, TestServer};

const SALES: &str = "/api/datasets/default/shop/sales";
const CSV: &str = "region,amount\nnorth,1\nsouth,2\nnorth,3\n";

fn with_sales(options: Options) -> TestServer {
    let s = TestServer::start_with(options);
    s.create_schema(&schema_json(
        "shop",
        "sales",
        "PUBLIC",
        "APPEND",
        json!([
            {"name": "region", "data_type": "string", "allow_null": false},
            {"name": "amount", "data_type": "int", "allow_null": false}
        ]),
    ));
    s
}

fn subscribe(s: &TestServer, url: &str, events: Value, datasets: Value) -> (String, String) {
    let body = json!({"url": url, "events": events, "datasets": datasets});
    let (status, made) = s.call("POST", "/api/webhooks", Some(&s.admin_token()), Some(&body));
    assert_eq!(status, StatusCode::CREATED, "{made}");
    let secret = made["secret"].as_str().unwrap().to_string();
    assert!(secret.starts_with("whsec_"), "{made}");
    (made["id"].as_str().unwrap().to_string(), secret)
}

/// Verifies every delivery with the `standardwebhooks` package; answers how many it verified.
fn verified_by_reference(secret: &str, deliveries: &[Delivery]) -> usize {
    let mut child = Command::new(python())
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/python/verify_webhooks.py"
        ))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("python");
    let mut input = String::new();
    for d in deliveries {
        let headers: serde_json::Map<String, Value> =
            ["webhook-id", "webhook-timestamp", "webhook-signature"]
                .iter()
                .map(|h| {
                    (
                        h.to_string(),
                        json!(d.headers.get(*h).cloned().unwrap_or_default()),
                    )
                })
                .collect();
        input.push_str(&json!({"secret": secret, "headers": headers, "body": d.body}).to_string());
        input.push('\n');
    }
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "verification failed: {text}");
    text.trim().parse().unwrap()
}

fn webhook(s: &TestServer, id: &str) -> Value {
    let (status, hook) = s.call(
        "GET",
        &format!("/api/webhooks/{id}"),
        Some(&s.admin_token()),
        None,
    );
    assert_eq!(status, StatusCode::OK, "{hook}");
    hook
}

/// Polls the webhook until `done` holds of it (at most 30 s).
fn wait_webhook(s: &TestServer, id: &str, done: impl Fn(&Value) -> bool) -> Value {
    let until = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let hook = webhook(s, id);
        if done(&hook) || std::time::Instant::now() > until {
            assert!(done(&hook), "never: {hook:#}");
            return hook;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn commits_and_refusals_arrive_signed_as_cloud_events() {
    let s = with_sales(Options::default());
    let receiver = Receiver::start();
    let (only_sales, secret) = subscribe(
        &s,
        &receiver.url,
        json!(["dataset.committed", "upload.rejected"]),
        json!(["default/shop/sales"]),
    );
    let other = Receiver::start();
    let (_, other_secret) = subscribe(&s, &other.url, json!(["schema.created"]), json!(["*"]));
    let token = s.admin_token();
    let (_, job) = s.upload_and_wait(&token, SALES, "a.csv", CSV.into());
    assert_eq!(job["status"], "SUCCESS", "{job}");
    let (status, body) = s.upload(&token, SALES, "b.csv", "region,amount\nnorth,x\n".into());
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");

    let got = receiver.wait_for(2);
    let bodies: Vec<Value> = got.iter().map(Delivery::json).collect();
    let committed = bodies
        .iter()
        .find(|b| b["type"] == "dataset.committed")
        .expect("committed");
    assert_eq!(committed["specversion"], "1.0");
    assert_eq!(committed["subject"], "default/shop/sales");
    assert_eq!(committed["data"]["rows_added"], 3);
    assert_eq!(committed["data"]["rows_removed"], 0);
    assert_eq!(committed["data"]["operation"], "APPEND");
    assert_eq!(committed["data"]["commit"], 1);
    assert_eq!(committed["data"]["version"], 1);
    assert!(committed["source"]
        .as_str()
        .unwrap()
        .ends_with("/api/datasets/default/shop/sales"));
    let rejected = bodies
        .iter()
        .find(|b| b["type"] == "upload.rejected")
        .expect("rejected");
    let job_id = rejected["data"]["job_id"]
        .as_str()
        .expect("the refused upload's job");
    let (_, refused) = s.call("GET", &format!("/api/jobs/{job_id}"), Some(&token), None);
    assert_eq!(refused["status"], "FAILED", "{refused}");
    for d in &got {
        assert_eq!(d.path, "/hook");
        assert_eq!(d.headers["webhook-id"], d.json()["id"].as_str().unwrap());
        assert!(d.headers["content-type"].starts_with("application/cloudevents+json"));
    }
    assert_eq!(verified_by_reference(&secret, &got), got.len());
    // The schema was created before the second subscription: it is owed nothing yet.
    std::thread::sleep(Duration::from_millis(600));
    assert!(other.deliveries().is_empty(), "{:?}", other.deliveries());
    s.create_schema(&schema_json(
        "shop",
        "items",
        "PUBLIC",
        "APPEND",
        json!([
            {"name": "sku", "data_type": "string", "allow_null": false}
        ]),
    ));
    let created = other.wait_for(1);
    assert_eq!(created[0].json()["type"], "schema.created");
    assert_eq!(created[0].json()["subject"], "default/shop/items");
    assert_eq!(verified_by_reference(&other_secret, &created), 1);

    let hook = wait_webhook(&s, &only_sales, |h| h["counts"]["delivered"] == 2);
    assert_eq!(hook["counts"]["pending"], 0);
    assert_eq!(hook["deliveries"][0]["state"], "DELIVERED");
    assert_eq!(hook["deliveries"][0]["last_status"], 204);
    let (status, all) = s.call("GET", "/api/webhooks", Some(&token), None);
    assert_eq!(status, StatusCode::OK);
    assert_eq!(all.as_array().unwrap().len(), 2);
    assert!(
        !all.to_string().contains("whsec_"),
        "secrets are shown once: {all}"
    );
}

#[test]
fn a_failing_receiver_is_retried_then_dead_and_redelivered_on_demand() {
    let s = with_sales(Options {
        env: vec![("RAPID_WEBHOOK_RETRY_SECS".into(), "3".into())],
        ..Default::default()
    });
    let failing = Receiver::start();
    failing.answer.store(503, Ordering::SeqCst);
    let healthy = Receiver::start();
    let (dead_id, _) = subscribe(&s, &failing.url, json!(["dataset.committed"]), json!(["*"]));
    subscribe(&s, &healthy.url, json!(["dataset.committed"]), json!(["*"]));
    let token = s.admin_token();
    let (_, job) = s.upload_and_wait(&token, SALES, "a.csv", CSV.into());
    assert_eq!(job["status"], "SUCCESS");
    // The healthy receiver is not held up by the failing one.
    healthy.wait_for(1);
    let hook = wait_webhook(&s, &dead_id, |h| h["counts"]["dead"] == 1);
    let d = &hook["deliveries"][0];
    assert_eq!(d["state"], "DEAD", "{hook}");
    assert_eq!(d["last_status"], 503);
    let attempts = d["attempts"].as_i64().unwrap();
    assert!(attempts >= 2, "retried before giving up: {d}");
    assert_eq!(failing.deliveries().len() as i64, attempts);
    let tries = failing.deliveries();
    assert!(
        tries[1].at - tries[0].at >= Duration::from_millis(900),
        "backed off"
    );

    failing.answer.store(200, Ordering::SeqCst);
    let event_id = d["event_id"].as_str().unwrap().to_string();
    let path = format!("/api/webhooks/{dead_id}/redeliver?event_id={event_id}");
    let (status, body) = s.call("POST", &path, Some(&token), None);
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let hook = wait_webhook(&s, &dead_id, |h| h["counts"]["delivered"] == 1);
    assert_eq!(hook["counts"]["dead"], 0);
    let last = failing.deliveries().last().unwrap().clone();
    assert_eq!(
        last.headers["webhook-id"], event_id,
        "the same id: receivers deduplicate"
    );
}

#[test]
fn a_quarantined_upload_is_an_event_with_its_commit() {
    let s = with_sales(Options::default());
    let receiver = Receiver::start();
    subscribe(
        &s,
        &receiver.url,
        json!(["*"]),
        json!(["default/shop/sales"]),
    );
    let token = s.admin_token();
    let csv = "region,amount\nnorth,1\nsouth,lots\nnorth,3\n";
    let path = format!("{SALES}?on_error=quarantine");
    let (_, job) = s.upload_and_wait(&token, &path, "q.csv", csv.into());
    assert_eq!(job["status"], "SUCCESS", "{job}");
    let mut got: Vec<Value> = receiver.wait_for(2).iter().map(Delivery::json).collect();
    // Both written by the commit's transaction, in that order (deliveries may cross).
    got.sort_by_key(|e| e["id"].as_str().unwrap().parse::<i64>().unwrap());
    assert_eq!(got[0]["type"], "dataset.committed");
    assert_eq!(got[0]["data"]["rows_added"], 2);
    assert_eq!(got[1]["type"], "upload.quarantined");
    assert_eq!(got[1]["data"]["rows_rejected"], 1, "{}", got[1]);
    assert_eq!(got[1]["data"]["job_id"], job["job_id"]);
}

/// A receiver that takes every request and never answers in time holds at most a few attempts
/// (each until the time limit), while uploads go on and another receiver gets every event.
#[test]
fn a_hanging_receiver_holds_up_neither_uploads_nor_other_receivers() {
    let s = with_sales(Options {
        env: vec![("RAPID_WEBHOOK_TIMEOUT_SECS".into(), "20".into())],
        ..Default::default()
    });
    let hanging = Receiver::start();
    hanging.delay_ms.store(25_000, Ordering::SeqCst);
    let healthy = Receiver::start();
    subscribe(&s, &hanging.url, json!(["dataset.committed"]), json!(["*"]));
    subscribe(&s, &healthy.url, json!(["dataset.committed"]), json!(["*"]));
    let token = s.admin_token();
    let started = std::time::Instant::now();
    for _ in 0..8 {
        let (_, job) = s.upload_and_wait(&token, SALES, "a.csv", CSV.into());
        assert_eq!(job["status"], "SUCCESS", "{job}");
    }
    healthy.wait_for(8);
    // Had the hanging receiver's attempts stood in the queue, the healthy one would have waited
    // for them (20 s each).
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "the healthy receiver waited {:?}",
        started.elapsed()
    );
    let held = hanging.deliveries().len();
    assert!(
        (1..=4).contains(&held),
        "{held} attempts held at once by one receiver"
    );
}

#[test]
fn subscriptions_and_receivers_are_checked() {
    let s = with_sales(Options::default());
    let admin = s.admin_token();
    let reader = s.token_with("events-reader", &["READ_ALL"]);
    let good = json!({"url": "http://127.0.0.1:9/x", "events": ["*"], "datasets": ["*"]});
    let refused = [
        json!({"url": "http://169.254.169.254/latest/meta-data", "events": ["*"], "datasets": ["*"]}),
        json!({"url": "http://[fe80::1]/", "events": ["*"], "datasets": ["*"]}),
        json!({"url": "file:///etc/passwd", "events": ["*"], "datasets": ["*"]}),
        json!({"url": "http://u:p@example.com/", "events": ["*"], "datasets": ["*"]}),
        json!({"url": "http://127.0.0.1:9/x", "events": ["dataset.exploded"], "datasets": ["*"]}),
        json!({"url": "http://127.0.0.1:9/x", "events": [], "datasets": ["*"]}),
        json!({"url": "http://127.0.0.1:9/x", "events": ["*"], "datasets": ["shop/sales"]}),
        json!({"url": "http://127.0.0.1:9/x", "events": ["*"], "datasets": ["*"], "extra": 1}),
        json!({"events": ["*"], "datasets": ["*"]}),
    ];
    for body in &refused {
        let (status, answer) = s.call("POST", "/api/webhooks", Some(&admin), Some(body));
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body} -> {answer}");
        assert!(answer["details"].is_string(), "{answer}");
    }
    let (status, _) = s.call("POST", "/api/webhooks", Some(&reader), Some(&good));
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _) = s.call("POST", "/api/webhooks", None, Some(&good));
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, _) = s.call("GET", "/api/webhooks", Some(&reader), None);
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (id, _) = subscribe(&s, "http://127.0.0.1:9/x", json!(["*"]), json!(["*"]));
    for (method, path) in [
        ("GET", "/api/webhooks/wh_none".to_string()),
        ("DELETE", "/api/webhooks/wh_none".to_string()),
        (
            "POST",
            "/api/webhooks/wh_none/redeliver?event_id=1".to_string(),
        ),
        (
            "POST",
            format!("/api/webhooks/{id}/redeliver?event_id=999999"),
        ),
        ("POST", format!("/api/webhooks/{id}/redeliver?event_id=abc")),
    ] {
        let (status, body) = s.call(method, &path, Some(&admin), None);
        assert_eq!(status, StatusCode::NOT_FOUND, "{method} {path}: {body}");
    }
    let (status, _) = s.call("DELETE", &format!("/api/webhooks/{id}"), Some(&admin), None);
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, _) = s.call("GET", &format!("/api/webhooks/{id}"), Some(&admin), None);
    assert_eq!(status, StatusCode::NOT_FOUND);
}

/// Every event of the feed for `token`, read `limit` at a time.
fn feed(s: &TestServer, token: &str, limit: usize) -> Vec<Value> {
    let (mut all, mut after) = (Vec::new(), 0);
    loop {
        let path = format!("/api/events?after={after}&limit={limit}");
        let (status, page) = s.call("GET", &path, Some(token), None);
        assert_eq!(status, StatusCode::OK, "{page}");
        let events = page["events"].as_array().unwrap().clone();
        let next = page["next"].as_i64().unwrap();
        // Done when a page neither shows an event nor moves on past ones this subject may
        // not see.
        if events.is_empty() && next == after {
            return all;
        }
        after = next;
        all.extend(events);
    }
}

#[test]
fn the_pull_feed_shows_each_subject_what_it_may_read_without_gaps() {
    let s = with_sales(Options::default());
    s.create_schema(&schema_json(
        "hr",
        "pay",
        "PRIVATE",
        "APPEND",
        json!([
            {"name": "region", "data_type": "string", "allow_null": false},
            {"name": "amount", "data_type": "int", "allow_null": false}
        ]),
    ));
    let admin = s.admin_token();
    for _ in 0..3 {
        s.upload_and_wait(&admin, SALES, "a.csv", CSV.into());
        s.upload_and_wait(&admin, "/api/datasets/default/hr/pay", "p.csv", CSV.into());
    }
    let reader = s.token_with("public-reader", &["READ_PUBLIC"]);
    let everyone = s.token_with("all-reader", &["READ_ALL", "USER_ADMIN"]);

    let mine = feed(&s, &reader, 100);
    let types: Vec<&str> = mine.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "schema.created",
            "dataset.committed",
            "dataset.committed",
            "dataset.committed"
        ]
    );
    assert!(
        mine.iter().all(|e| e["subject"] == "default/shop/sales"),
        "{mine:#?}"
    );
    let commits: Vec<i64> = mine[1..]
        .iter()
        .map(|e| e["data"]["commit"].as_i64().unwrap())
        .collect();
    assert_eq!(commits, [1, 2, 3], "in commit order");

    let all = feed(&s, &everyone, 100);
    let of = |t: &str| all.iter().filter(|e| e["type"] == t).count();
    assert_eq!(of("dataset.committed"), 6);
    assert_eq!(of("schema.created"), 2);
    assert!(
        of("permission.changed") >= 2,
        "USER_ADMIN sees subjects' changes: {all:#?}"
    );
    let one_by_one = feed(&s, &everyone, 1);
    assert_eq!(one_by_one, all, "pages of one lose and repeat nothing");
    let ids: Vec<i64> = all
        .iter()
        .map(|e| e["id"].as_str().unwrap().parse().unwrap())
        .collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");

    for bad in [
        "/api/events?limit=0",
        "/api/events?limit=5000",
        "/api/events?after=-1",
        "/api/events?after=x",
        "/api/events?cursor=1",
    ] {
        let (status, body) = s.call("GET", bad, Some(&reader), None);
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {body}");
    }
    let (status, _) = s.call("GET", "/api/events", None, None);
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}
