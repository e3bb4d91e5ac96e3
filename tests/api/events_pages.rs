//! The webhook pages (DATA_ADMIN): subscribe (the secret shown once), see deliveries and their
//! state, send one again, remove; a refused receiver is shown in words; others may not look.

use reqwest::StatusCode;
use serde_json::json;

use crate::receiver::Receiver;
use crate::support::{schema_json, TestServer, ADMIN_ID, ADMIN_SECRET};
use crate::web_pages::Visitor;

fn page(v: &mut Visitor, path: &str) -> (StatusCode, String) {
    let (status, _, res) = v.get(path);
    (status, res.text().unwrap())
}

#[test]
fn an_admin_subscribes_watches_deliveries_and_sends_one_again() {
    let s = TestServer::start();
    s.create_schema(&schema_json(
        "shop",
        "sales",
        "PUBLIC",
        "APPEND",
        json!([
            {"name": "region", "data_type": "string", "allow_null": false}
        ]),
    ));
    let receiver = Receiver::start();
    let mut v = Visitor::new(&s);
    v.sign_in_client(ADMIN_ID, ADMIN_SECRET);
    let (status, html) = page(&mut v, "/webhooks");
    assert_eq!(status, StatusCode::OK);
    assert!(html.contains("No webhooks."), "{html}");
    assert!(html.contains("href=\"/webhooks\""), "in the navigation");

    let csrf = v.csrf_of("/webhooks");
    let refused = [
        ("csrf", csrf.as_str()),
        ("url", "http://169.254.169.254/latest"),
        ("events", "*"),
        ("datasets", "*"),
    ];
    let (status, html, _) = v.post("/webhooks", &refused);
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        html.contains("may not be sent to 169.254.169.254"),
        "{html}"
    );
    assert!(
        html.contains("value=\"http://169.254.169.254/latest\""),
        "kept in the form"
    );

    let form = [
        ("csrf", csrf.as_str()),
        ("url", receiver.url.as_str()),
        ("events", "dataset.committed"),
        ("events", "upload.rejected"),
        ("datasets", "default/shop/sales"),
    ];
    let (status, html, _) = v.post("/webhooks", &form);
    assert_eq!(status, StatusCode::OK, "{html}");
    assert!(html.contains("whsec_"), "the secret, once: {html}");

    let (_, hooks) = s.call("GET", "/api/webhooks", Some(&s.admin_token()), None);
    let id = hooks[0]["id"].as_str().unwrap().to_string();
    assert_eq!(
        hooks[0]["events"],
        json!(["dataset.committed", "upload.rejected"])
    );
    let (_, job) = s.upload_and_wait(
        &s.admin_token(),
        "/api/datasets/default/shop/sales",
        "a.csv",
        "region\nnorth\n".into(),
    );
    assert_eq!(job["status"], "SUCCESS");
    let first = receiver.wait_for(1);
    let (status, html) = page(&mut v, &format!("/webhooks/{id}"));
    assert_eq!(status, StatusCode::OK);
    assert!(
        html.contains("DELIVERED") || html.contains("PENDING"),
        "{html}"
    );
    let event_id = first[0].headers["webhook-id"].clone();
    assert!(html.contains(&event_id), "{html}");

    let csrf = v.csrf_of(&format!("/webhooks/{id}"));
    let again = [("csrf", csrf.as_str()), ("event_id", event_id.as_str())];
    let (status, _, location) = v.post(&format!("/webhooks/{id}/redeliver"), &again);
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert!(location.unwrap().starts_with(&format!("/webhooks/{id}")));
    let twice = receiver.wait_for(2);
    assert_eq!(
        twice[1].headers["webhook-id"], event_id,
        "the same event again"
    );

    let (_, html) = page(&mut v, "/webhooks");
    assert!(html.contains(&receiver.url), "{html}");
    let confirm = [("csrf", csrf.as_str()), ("confirm", "yes")];
    let (status, _, _) = v.post(&format!("/webhooks/{id}/delete"), &confirm);
    assert_eq!(status, StatusCode::SEE_OTHER);
    let (_, html) = page(&mut v, "/webhooks");
    assert!(html.contains("No webhooks."), "{html}");

    let (reader_id, reader_secret) = s.create_client("webhook-page-reader", &["READ_ALL"]);
    let mut r = Visitor::new(&s);
    r.sign_in_client(&reader_id, &reader_secret);
    let (status, _) = page(&mut r, "/webhooks");
    assert_eq!(status, StatusCode::FORBIDDEN);
}
