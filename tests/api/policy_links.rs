//! A large query's result link is checked again at download against what its reader may see
//! now (docs/API.md: "a result link made before a permission or policy change re-checks at
//! download"): a policy set after the query, an attribute changed, a permission revoked, a
//! subject deleted each refuse it; the policy removed again lets it through.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::support::{schema_json, TestServer};

const STAFF: &str = "/api/datasets/default/hr/staff";
const CSV: &str = "region,name\nnorth,ann\nnorth,bob\nsouth,cid\n";

fn download(url: &str) -> (StatusCode, String) {
    let res = reqwest::blocking::get(url).unwrap();
    (res.status(), res.text().unwrap())
}

fn large_query(s: &TestServer, token: &str) -> String {
    let (status, body) = s.call(
        "POST",
        &format!("{STAFF}/query/large"),
        Some(token),
        Some(&json!({})),
    );
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let job = s.wait_job(token, body["details"]["job_id"].as_str().unwrap());
    assert_eq!(job["status"], "SUCCESS", "{job}");
    job["result_url"].as_str().unwrap().to_string()
}

fn policy(s: &TestServer, method: &str, body: Option<&Value>) {
    let (status, answer) = s.call(
        method,
        &format!("{STAFF}/policy"),
        Some(&s.admin_token()),
        body,
    );
    assert!(status.is_success(), "{answer}");
}

#[test]
fn a_result_link_follows_what_its_reader_may_see_now() {
    let s = TestServer::start();
    s.create_schema(&schema_json(
        "hr",
        "staff",
        "PUBLIC",
        "APPEND",
        json!([
            {"name": "region", "data_type": "string", "allow_null": false},
            {"name": "name", "data_type": "string", "allow_null": false}
        ]),
    ));
    let (_, job) = s.upload_and_wait(&s.admin_token(), STAFF, "staff.csv", CSV.into());
    assert_eq!(job["status"], "SUCCESS", "{job}");
    let (id, secret) = s.create_client("reader", &["READ_ALL"]);
    let token = s.token(&id, &secret);
    let set_region = |region: &str| {
        let (status, body) = s.call(
            "PUT",
            &format!("/api/subjects/{id}/attributes"),
            Some(&s.admin_token()),
            Some(&json!({ "region": region })),
        );
        assert_eq!(status, StatusCode::OK, "{body}");
    };
    set_region("north");

    // Made with no policy: fine until a policy applies to the reader.
    let url = large_query(&s, &token);
    let (status, text) = download(&url);
    assert_eq!(
        (status, text.lines().count()),
        (StatusCode::OK, 4),
        "{text}"
    );
    let by_region = json!({"row_filters": [{"name": "own_region",
        "filter": "region = subject_attr('region')", "applies_to": ["reader"]}]});
    policy(&s, "PUT", Some(&by_region));
    let (status, text) = download(&url);
    assert_eq!(status, StatusCode::FORBIDDEN, "{text}");
    assert!(
        text.contains("run the query again") && !text.contains("bob"),
        "{text}"
    );
    policy(&s, "DELETE", None);
    assert_eq!(download(&url).0, StatusCode::OK);

    // Made under the policy: its own link holds until the reader's attribute changes.
    policy(&s, "PUT", Some(&by_region));
    let url = large_query(&s, &token);
    let (status, text) = download(&url);
    assert_eq!(
        (status, text.lines().count()),
        (StatusCode::OK, 3),
        "{text}"
    );
    set_region("south");
    assert_eq!(download(&url).0, StatusCode::FORBIDDEN);
    set_region("north");
    assert_eq!(download(&url).0, StatusCode::OK);

    // A link whose binding was changed by hand does not verify.
    let forged = url.replace("bound=", "bound=0");
    assert_eq!(download(&forged).0, StatusCode::FORBIDDEN);

    // Permission taken away, then the subject deleted.
    let (status, body) = s.call(
        "PUT",
        "/api/subjects/permissions",
        Some(&s.admin_token()),
        Some(&json!({"subject_id": id, "permissions": []})),
    );
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(download(&url).0, StatusCode::FORBIDDEN);
    let (status, body) = s.call(
        "DELETE",
        &format!("/api/client/{id}"),
        Some(&s.admin_token()),
        None,
    );
    assert!(status.is_success(), "{body}");
    let (status, text) = download(&url);
    assert_eq!(status, StatusCode::FORBIDDEN, "{text}");
    assert!(text.contains("no longer exists"), "{text}");
}

/// A `/api/sql/large` job's link, made as `token`, for `statement`.
fn large_sql(s: &TestServer, token: &str, statement: &str) -> String {
    let (status, body) = s.call(
        "POST",
        "/api/sql/large",
        Some(token),
        Some(&json!({ "sql": statement })),
    );
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let job = s.wait_job(token, body["details"]["job_id"].as_str().unwrap());
    assert_eq!(job["status"], "SUCCESS", "{job}");
    job["result_url"].as_str().unwrap().to_string()
}

#[test]
fn a_sql_result_link_follows_each_dataset_its_statement_read() {
    let s = TestServer::start();
    s.create_schema(&schema_json(
        "hr",
        "staff",
        "PUBLIC",
        "APPEND",
        json!([
            {"name": "region", "data_type": "string", "allow_null": false},
            {"name": "name", "data_type": "string", "allow_null": false}
        ]),
    ));
    let (_, job) = s.upload_and_wait(&s.admin_token(), STAFF, "staff.csv", CSV.into());
    assert_eq!(job["status"], "SUCCESS", "{job}");
    let (id, secret) = s.create_client("reader", &["READ_ALL"]);
    let token = s.token(&id, &secret);
    let region = |r: &str| {
        let path = format!("/api/subjects/{id}/attributes");
        let body = json!({ "region": r });
        let (status, answer) = s.call("PUT", &path, Some(&s.admin_token()), Some(&body));
        assert_eq!(status, StatusCode::OK, "{answer}");
    };
    region("north");
    let by_region = json!({"row_filters": [{"name": "own_region",
        "filter": "region = subject_attr('region')", "applies_to": ["reader"]}]});
    // A join of the dataset with itself: one dataset read, bound once.
    let statement = "SELECT a.region, a.name FROM \"default\".hr.staff a \
                     JOIN (SELECT DISTINCT region FROM \"default\".hr.staff) b ON a.region = b.region";

    // Made with no policy: refused once one applies, fine again once it is gone.
    let url = large_sql(&s, &token, statement);
    assert!(url.contains("bound=sql-default.hr.staff.1.0&"), "{url}");
    assert_eq!(download(&url).0, StatusCode::OK);
    policy(&s, "PUT", Some(&by_region));
    let (status, text) = download(&url);
    assert_eq!(status, StatusCode::FORBIDDEN, "{text}");
    assert!(
        text.contains("run the statement again") && !text.contains("bob"),
        "{text}"
    );
    policy(&s, "DELETE", None);
    assert_eq!(download(&url).0, StatusCode::OK);

    // Made under the policy: its own rows, until the attribute changes or the policy goes.
    policy(&s, "PUT", Some(&by_region));
    let url = large_sql(&s, &token, statement);
    let (status, text) = download(&url);
    assert_eq!(
        (status, text.lines().count()),
        (StatusCode::OK, 3),
        "{text}"
    );
    region("south");
    assert_eq!(download(&url).0, StatusCode::FORBIDDEN);
    region("north");
    assert_eq!(download(&url).0, StatusCode::OK);
    policy(&s, "DELETE", None);
    assert_eq!(download(&url).0, StatusCode::FORBIDDEN);
    policy(&s, "PUT", Some(&by_region));
    assert_eq!(download(&url).0, StatusCode::OK);
    // The binding is signed: a link naming no dataset does not verify.
    let forged = url.replace("bound=sql-default.hr.staff.1.", "bound=sql&x=");
    assert_eq!(download(&forged).0, StatusCode::FORBIDDEN);

    // A statement that reads no dataset is bound to its subject only; the permission taken
    // away refuses the dataset's link and keeps that one.
    let constant = large_sql(&s, &token, "SELECT 1 AS one");
    assert!(constant.contains("bound=sql&"), "{constant}");
    let body = json!({"subject_id": id, "permissions": []});
    let (status, answer) = s.call(
        "PUT",
        "/api/subjects/permissions",
        Some(&s.admin_token()),
        Some(&body),
    );
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(download(&url).0, StatusCode::FORBIDDEN);
    assert_eq!(download(&constant).0, StatusCode::OK);
    let (status, _) = s.call(
        "DELETE",
        &format!("/api/client/{id}"),
        Some(&s.admin_token()),
        None,
    );
    assert!(status.is_success());
    assert_eq!(download(&constant).0, StatusCode::FORBIDDEN);
}
