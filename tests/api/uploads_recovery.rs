//! Uploads cut off: by the client (a truncated body) and by the server dying mid-upload.

use std::io::Write;
use std::net::TcpStream;
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::json;

use crate::stored::parquet_files;
use crate::support::{schema_json, Options, TestServer};

const PATH: &str = "/api/datasets/default/crash/logs";

fn start_with_schema() -> TestServer {
    let s = TestServer::start();
    s.create_schema(&schema_json(
        "crash",
        "logs",
        "PUBLIC",
        "APPEND",
        json!([{"name": "n", "data_type": "int", "allow_null": false}]),
    ));
    s
}

/// Opens an upload by hand and sends only the start of its body; returns the open connection.
fn start_partial_upload(s: &TestServer, token: &str, rows: usize) -> TcpStream {
    let addr = s.base.trim_start_matches("http://");
    let mut conn = TcpStream::connect(addr).unwrap();
    let boundary = "XBOUNDARYX";
    let mut body = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"part.csv\"\r\nContent-Type: text/csv\r\n\r\nn\n"
    );
    for i in 0..rows {
        body.push_str(&format!("{i}\n"));
    }
    let head = format!(
        "POST {PATH} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: multipart/form-data; boundary={boundary}\r\nContent-Length: {}\r\n\r\n",
        body.len() + 10_000_000
    );
    conn.write_all(head.as_bytes()).unwrap();
    conn.write_all(body.as_bytes()).unwrap();
    conn.flush().unwrap();
    conn
}

fn wait_for_job(s: &TestServer, token: &str, status: &str) -> serde_json::Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (_, jobs) = s.call("GET", "/api/jobs", Some(token), None);
        if let Some(job) = jobs.as_array().and_then(|j| j.first()) {
            if job["status"] == status {
                return job.clone();
            }
        }
        assert!(Instant::now() < deadline, "no {status} job: {jobs}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_truncated_body_fails_the_job_and_the_server_stays_up() {
    let s = start_with_schema();
    let token = s.admin_token();
    let conn = start_partial_upload(&s, &token, 1000);
    wait_for_job(&s, &token, "IN PROGRESS");
    drop(conn); // the client goes away mid-body
    let job = wait_for_job(&s, &token, "FAILED");
    assert!(
        job["errors"][0]
            .as_str()
            .unwrap()
            .contains("multipart body could not be read"),
        "{job}"
    );
    assert!(parquet_files(&s.data_dir().join("data")).is_empty());
    assert_eq!(s.call("GET", "/api/status", None, None).0, StatusCode::OK);
    // Staging is cleaned once the upload is given up.
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::fs::read_dir(s.data_dir().join("staging"))
        .unwrap()
        .count()
        > 0
    {
        assert!(Instant::now() < deadline, "staging not cleaned");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_restart_in_the_middle_of_an_upload_fails_the_job_and_leaves_no_data() {
    let s = start_with_schema();
    let token = s.admin_token();
    let _conn = start_partial_upload(&s, &token, 200_000);
    let job = wait_for_job(&s, &token, "IN PROGRESS");
    // Wait until the upload has written into staging, then crash the server.
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::fs::read_dir(s.data_dir().join("staging"))
        .unwrap()
        .count()
        == 0
    {
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(20));
    }
    let dir = s.kill();
    // A stray file left where a commit would have put one is cleaned at start-up too.
    let stray = dir
        .path()
        .join("data/data/default/crash/logs/1/stray.parquet");
    std::fs::create_dir_all(stray.parent().unwrap()).unwrap();
    std::fs::write(&stray, b"left by a commit that never happened").unwrap();

    let s = TestServer::start_in(dir, Options::default());
    let token = s.admin_token();
    let (_, after) = s.call(
        "GET",
        &format!("/api/jobs/{}", job["job_id"].as_str().unwrap()),
        Some(&token),
        None,
    );
    assert_eq!(after["status"], "FAILED");
    assert_eq!(
        after["errors"],
        json!(["The job was interrupted by a restart of the service"])
    );
    assert!(!stray.exists());
    assert!(parquet_files(&s.data_dir().join("data")).is_empty());
    assert_eq!(
        std::fs::read_dir(s.data_dir().join("staging"))
            .unwrap()
            .count(),
        0
    );
    // And the dataset takes uploads again.
    assert_eq!(
        s.upload_and_wait(&token, PATH, "ok.csv", b"n\n1\n".to_vec())
            .1["status"],
        "SUCCESS"
    );
}
