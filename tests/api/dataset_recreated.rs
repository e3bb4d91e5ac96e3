//! A dataset deleted and created again under the same name while an upload to it is on its way
//! is another dataset (its own schema, its own files): the upload, validated against the old
//! one, is not committed into the new one.

use std::io::Write;

use serde_json::json;

use crate::hostile_http::{connect, read_answer, upload_head};
use crate::support::{schema_json, TestServer};

#[test]
fn an_upload_is_not_committed_into_a_dataset_recreated_under_its_name() {
    let s = TestServer::start();
    let admin = s.admin_token();
    let schema = schema_json(
        "shop",
        "recreated",
        "PUBLIC",
        "APPEND",
        json!([{"name": "id", "data_type": "int", "allow_null": true}]),
    );
    s.create_schema(&schema);
    let start = "--x\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.csv\"\r\n\r\nid\n1\n2\n";
    let end = "\r\n--x--\r\n";
    let mut stream = connect(&s);
    let framing = format!("Content-Length: {}", start.len() + end.len());
    let head = upload_head(
        "/api/datasets/default/shop/recreated",
        Some(&admin),
        &framing,
    );
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(start.as_bytes()).unwrap();

    // While the body is still open: the dataset goes, and a new one takes its name.
    let (status, body) = s.call(
        "DELETE",
        "/api/datasets/default/shop/recreated",
        Some(&admin),
        None,
    );
    assert!(status.is_success(), "{status}: {body}");
    s.create_schema(&schema);

    stream.write_all(end.as_bytes()).unwrap();
    let (status, _, answer) = read_answer(&mut stream);
    assert!(matches!(status, 202 | 404), "{status}: {answer}");
    if status == 202 {
        let job_id = answer["details"]["job_id"].as_str().unwrap();
        let job = s.wait_job(&admin, job_id);
        assert_eq!(job["status"], "FAILED", "{job}");
        assert!(job.to_string().contains("was deleted"), "{job}");
    }
    let (status, rows) = s.call(
        "POST",
        "/api/datasets/default/shop/recreated/query",
        Some(&admin),
        Some(&json!({})),
    );
    assert_eq!(status, 200, "{rows}");
    assert_eq!(
        rows,
        json!({}),
        "the new dataset holds no row of the old upload"
    );
}
