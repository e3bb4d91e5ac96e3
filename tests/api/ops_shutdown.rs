//! Operations: SIGTERM during uploads. An upload whose body arrives within the shutdown timeout
//! is stored; one still arriving at the timeout fails cleanly: job FAILED, no file of it kept.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::support::{schema_json, Options, TestServer};

const UPLOAD: &str = "/api/datasets/default/ops/slow";

/// Sends an upload's head and the first half of its body; the rest is sent by `finish`.
struct SlowUpload {
    stream: TcpStream,
    rest: Vec<u8>,
}

impl SlowUpload {
    fn start(s: &TestServer, token: &str, filename: &str, csv: &str) -> SlowUpload {
        let boundary = "opsBoundary7";
        let body = format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{filename}\"\r\n\
             Content-Type: text/csv\r\n\r\n{csv}\r\n--{boundary}--\r\n"
        )
        .into_bytes();
        let addr = s.base.trim_start_matches("http://").to_string();
        let mut stream = TcpStream::connect(&addr).unwrap();
        let head = format!(
            "POST {UPLOAD} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\n\
             Content-Type: multipart/form-data; boundary={boundary}\r\nContent-Length: {}\r\n\
             Connection: close\r\n\r\n",
            body.len()
        );
        let split = body.len() / 2;
        stream.write_all(head.as_bytes()).unwrap();
        stream.write_all(&body[..split]).unwrap();
        stream.flush().unwrap();
        SlowUpload {
            stream,
            rest: body[split..].to_vec(),
        }
    }

    /// Sends the rest and returns the answer's status line and body.
    fn finish(mut self) -> String {
        self.stream.write_all(&self.rest).unwrap();
        let mut answer = String::new();
        let _ = self.stream.read_to_string(&mut answer);
        answer
    }
}

fn rows(n: usize, city: &str) -> String {
    let mut csv = String::from("city,n\n");
    for i in 0..n {
        csv.push_str(&format!("{city},{i}\n"));
    }
    csv
}

fn jobs(s: &TestServer, token: &str) -> Vec<Value> {
    let (status, body) = s.call("GET", "/api/jobs", Some(token), None);
    assert_eq!(status, StatusCode::OK, "{body}");
    body.as_array().unwrap().clone()
}

#[test]
fn sigterm_lets_running_uploads_finish_until_the_timeout_and_fails_the_rest_cleanly() {
    let s = TestServer::start_with(Options {
        args: vec!["--shutdown-timeout-seconds".into(), "8".into()],
        ..Options::default()
    });
    s.create_schema(&schema_json(
        "ops",
        "slow",
        "PUBLIC",
        "APPEND",
        json!([
            {"name": "city", "data_type": "string", "allow_null": false},
            {"name": "n", "data_type": "int", "allow_null": false},
        ]),
    ));
    let admin = s.admin_token();
    let finishing = SlowUpload::start(&s, &admin, "finishing.csv", &rows(500, "Leeds"));
    let stalled = SlowUpload::start(&s, &admin, "stalled.csv", &rows(500, "York"));
    // Both uploads have begun (each has its job) before the signal.
    let deadline = Instant::now() + Duration::from_secs(30);
    while jobs(&s, &admin).len() < 2 {
        assert!(Instant::now() < deadline, "uploads did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = s.pid().to_string();
    assert!(std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap()
        .success());
    // Inside the timeout: the first upload's body completes and is answered 202.
    std::thread::sleep(Duration::from_millis(300));
    let answer = finishing.finish();
    assert!(answer.starts_with("HTTP/1.1 202"), "{answer}");
    let logs_dir = s.stop(); // waits for the exit (after the 8 s timeout)
    drop(stalled);

    let s = TestServer::start_in(logs_dir, Options::default());
    let log = s.logs();
    assert!(log.contains("unfinished jobs failed"), "{log}");
    let admin = s.admin_token();
    let all = jobs(&s, &admin);
    let by_file = |f: &str| all.iter().find(|j| j["filename"] == f).unwrap().clone();
    assert_eq!(by_file("finishing.csv")["status"], "SUCCESS", "{all:#?}");
    let failed = by_file("stalled.csv");
    assert_eq!(failed["status"], "FAILED");
    assert!(
        failed["errors"].to_string().contains("shut down"),
        "{failed}"
    );
    // Exactly the finished upload's rows, and no file of the other anywhere.
    let (status, body) = s.call(
        "POST",
        &format!("{UPLOAD}/query"),
        Some(&admin),
        Some(&json!({"select_columns": ["city", "count(*) AS k"], "group_by_columns": ["city"]})),
    );
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body, json!({"0": {"city": "Leeds", "k": 500}}));
    let staging: Vec<_> = std::fs::read_dir(s.data_dir().join("staging"))
        .unwrap()
        .collect();
    assert!(staging.is_empty(), "{staging:?}");
    let raw: Vec<_> = std::fs::read_dir(s.data_dir().join("raw/default/ops/slow/1"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(raw.len(), 1, "{raw:?}");
    assert!(raw[0].ends_with("finishing.csv"), "{raw:?}");
}
