//! Operations: request ids, one JSON log line per request, readiness, and no secret in the log.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::support::{Options, TestServer, ADMIN_SECRET};

fn json_server() -> TestServer {
    TestServer::start_with(Options {
        args: vec!["--log-format".into(), "json".into()],
        ..Options::default()
    })
}

fn log_lines(s: &TestServer) -> Vec<Value> {
    s.logs()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

#[test]
fn every_request_has_an_id_echoed_and_logged_as_one_json_line() {
    let s = json_server();
    let admin = s.admin_token();
    let res = s
        .request("GET", "/api/subjects")
        .bearer_auth(&admin)
        .header("x-request-id", "ops-test-42")
        .send()
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(res.headers()["x-request-id"], "ops-test-42");
    // No id sent (or an unusable one): a new one is made and sent back.
    let res = s.request("GET", "/api/status").send().unwrap();
    let generated = res.headers()["x-request-id"].to_str().unwrap().to_string();
    assert_eq!(generated.len(), 32, "{generated}");
    let res = s
        .request("GET", "/api/status")
        .header("x-request-id", "bad id with spaces")
        .send()
        .unwrap();
    assert_ne!(res.headers()["x-request-id"], "bad id with spaces");
    let res = s.request("GET", "/api/datasets/x/y/z/info").send().unwrap();
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);

    let lines = log_lines(&s);
    let requests: Vec<&Value> = lines.iter().filter(|l| l["message"] == "request").collect();
    let tagged: Vec<&&Value> = requests
        .iter()
        .filter(|l| l["request_id"] == "ops-test-42")
        .collect();
    assert_eq!(tagged.len(), 1, "{requests:#?}");
    let line = tagged[0];
    assert_eq!(line["route"], "/api/subjects");
    assert_eq!(line["method"], "GET");
    assert_eq!(line["status"], 200);
    assert_eq!(line["subject"], "rapid-admin");
    assert!(line["ms"].as_f64().is_some(), "{line}");
    assert!(line["bytes_out"].as_u64().unwrap() > 0, "{line}");
    assert_eq!(line["span"]["request_id"], "ops-test-42", "{line}");
    assert!(requests
        .iter()
        .any(|l| l["request_id"] == generated.as_str()));
    // Route templates, not raw paths, and the refused request is logged too.
    let refused = requests
        .iter()
        .find(|l| l["path"] == "/api/datasets/x/y/z/info")
        .expect("the 401 is logged");
    assert_eq!(
        refused["route"],
        "/api/datasets/{layer}/{domain}/{dataset}/info"
    );
    assert_eq!(refused["status"], 401);
    assert_eq!(refused["subject"], "-");
}

#[test]
fn ready_needs_no_token_and_answers_when_catalog_and_disk_work() {
    let s = TestServer::start();
    let (status, body) = s.call("GET", "/api/ready", None, None);
    assert_eq!((status, body), (StatusCode::OK, json!({"status": "ready"})));
    // The data folder stops taking writes: not ready, while still alive.
    let staging = s.data_dir().join("staging");
    let _ = std::fs::remove_dir_all(&staging);
    std::fs::write(&staging, b"a file where a folder must be").unwrap();
    let (status, body) = s.call("GET", "/api/ready", None, None);
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert!(
        body["details"].as_str().unwrap().contains("not writable"),
        "{body}"
    );
    assert_eq!(s.call("GET", "/api/status", None, None).0, StatusCode::OK);
    std::fs::remove_file(&staging).unwrap();
    assert_eq!(s.call("GET", "/api/ready", None, None).0, StatusCode::OK);
}

#[test]
fn no_secret_token_or_password_reaches_the_log() {
    let s = json_server();
    let admin = s.admin_token();
    let (client_id, client_secret) = s.create_client("logged", &["READ_ALL"]);
    let client_token = s.token(&client_id, &client_secret);
    let (status, user) = s.call(
        "POST",
        "/api/user",
        Some(&admin),
        Some(&json!({"username": "loggy", "email": "loggy@example.com", "permissions": ["READ_ALL"]})),
    );
    assert_eq!(status, StatusCode::CREATED, "{user}");
    let temporary = user["temporary_password"].as_str().unwrap().to_string();
    let user_token = sign_in_token(&s, &temporary);
    let new_password = "a-brand-new-Passw0rd-for-loggy";
    let (status, body) = s.call(
        "PUT",
        "/api/user/password",
        Some(&user_token),
        Some(&json!({"current_password": temporary, "new_password": new_password})),
    );
    assert_eq!(status, StatusCode::OK, "{body}");
    sign_in_token(&s, new_password);
    // Failed sign-ins with a wrong secret and a wrong password are logged as outcomes only.
    let wrong_secret = "wrong-secret-that-must-not-be-logged-1234";
    assert_eq!(
        s.try_token(&client_id, wrong_secret).0,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        sign_in(&s, "Wrong-Pass-Not-Logged-99").0,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        s.call("GET", "/api/subjects", Some(&client_token), None).0,
        StatusCode::FORBIDDEN
    );
    // Metrics read with a token: the token is not logged either.
    let res = s
        .request("GET", "/api/metrics")
        .bearer_auth(&client_token)
        .send()
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);

    let log = s.logs();
    assert!(log.contains("\"message\":\"request\""), "{log}");
    for secret in [
        ADMIN_SECRET,
        admin.as_str(),
        client_secret.as_str(),
        client_token.as_str(),
        temporary.as_str(),
        user_token.as_str(),
        new_password,
        wrong_secret,
        "Wrong-Pass-Not-Logged-99",
    ] {
        assert!(!log.contains(secret), "the log holds a secret: {secret}");
        // Nor any large piece of it (a token's signature part, say).
        let tail = &secret[secret.len() - 16..];
        assert!(
            !log.contains(tail),
            "the log holds part of a secret: {tail}"
        );
    }
}

fn sign_in(s: &TestServer, password: &str) -> (StatusCode, Value) {
    s.call(
        "POST",
        "/api/oauth2/token",
        None,
        Some(&json!({"grant_type": "password", "username": "loggy", "password": password})),
    )
}

fn sign_in_token(s: &TestServer, password: &str) -> String {
    let (status, body) = sign_in(s, password);
    assert_eq!(status, StatusCode::OK, "{body}");
    body["access_token"].as_str().unwrap().to_string()
}

#[test]
fn an_uploads_commit_is_logged_under_its_requests_id() {
    let s = json_server();
    let admin = s.admin_token();
    let columns = json!([{"name": "n", "data_type": "int", "allow_null": true}]);
    s.create_schema(&crate::support::schema_json(
        "logs", "commits", "PUBLIC", "APPEND", columns,
    ));
    let part = reqwest::blocking::multipart::Part::bytes(b"n\n1\n2\n3\n".to_vec())
        .file_name("three.csv".to_string());
    let res = s
        .request("POST", "/api/datasets/default/logs/commits")
        .bearer_auth(&admin)
        .header("x-request-id", "upload-trace-7")
        .multipart(reqwest::blocking::multipart::Form::new().part("file", part))
        .send()
        .unwrap();
    assert_eq!(res.status(), StatusCode::ACCEPTED);
    let body: Value = res.json().unwrap();
    let job_id = body["details"]["job_id"].as_str().unwrap().to_string();
    assert_eq!(s.wait_job(&admin, &job_id)["status"], "SUCCESS");
    // The line follows the job's SUCCESS closely; a generous bound for a loaded machine.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let committed = loop {
        let found = log_lines(&s)
            .into_iter()
            .find(|l| l["message"] == "upload committed");
        if let Some(line) = found {
            break line;
        }
        assert!(std::time::Instant::now() < deadline, "no commit line");
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert_eq!(committed["rows"], 3, "{committed}");
    assert_eq!(committed["span"]["job_id"], job_id.as_str(), "{committed}");
    let spans = committed["spans"].as_array().expect("the enclosing spans");
    assert!(
        spans.iter().any(|sp| sp["request_id"] == "upload-trace-7"),
        "{committed}"
    );
}

/// The enclosing spans of the first line saying `message`, waiting a little for it.
fn spans_of_line(s: &TestServer, message: &str) -> (Value, Vec<Value>) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        if let Some(line) = log_lines(s).into_iter().find(|l| l["message"] == message) {
            let spans = line["spans"].as_array().cloned().unwrap_or_default();
            return (line, spans);
        }
        assert!(std::time::Instant::now() < deadline, "no line {message:?}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn actor_work_is_logged_under_its_requests_id_and_names_who_changed_subjects() {
    let s = json_server();
    let admin = s.admin_token();
    let columns = json!([{"name": "n", "data_type": "int", "allow_null": true}]);
    s.create_schema(&crate::support::schema_json(
        "logs", "gone", "PUBLIC", "APPEND", columns,
    ));
    // The dataset actor deletes it, on its own thread, inside the request's span.
    let res = s
        .request("DELETE", "/api/datasets/default/logs/gone")
        .bearer_auth(&admin)
        .header("x-request-id", "delete-trace-9")
        .send()
        .unwrap();
    assert!(res.status().is_success(), "{}", res.status());
    let (line, spans) = spans_of_line(&s, "dataset deleted");
    assert!(
        spans.iter().any(|sp| sp["request_id"] == "delete-trace-9"),
        "{line}"
    );
    assert!(
        spans
            .iter()
            .any(|sp| sp["name"] == "dataset_actor" && sp["message"] == "delete_dataset"),
        "{line}"
    );

    // The auth actor's change, and the audit line naming the admin who made it.
    let res = s
        .request("POST", "/api/client")
        .bearer_auth(&admin)
        .header("x-request-id", "client-trace-3")
        .json(&json!({"client_name": "audited_client", "permissions": ["READ_ALL"]}))
        .send()
        .unwrap();
    assert_eq!(res.status(), StatusCode::CREATED);
    let (line, spans) = spans_of_line(&s, "client created");
    assert_eq!(line["by"], "rapid-admin", "{line}");
    assert_eq!(line["client"], "audited_client", "{line}");
    assert!(
        spans.iter().any(|sp| sp["request_id"] == "client-trace-3"),
        "{line}"
    );
}

/// With JSON logs the lines on stdout are JSON too: the metrics and ready lines, with their `url`.
#[test]
fn with_json_logs_the_ready_lines_are_json_too() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_rapid-rs"))
        .args(["serve", "--bind", "127.0.0.1:0", "--workers", "1"])
        .args(["--metrics-bind", "127.0.0.1:0", "--log-format", "json"])
        .arg("--data-dir")
        .arg(dir.path().join("data"))
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut read = || -> Value {
        let line = lines.next().unwrap().unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    };
    let (metrics, ready) = (read(), read());
    let _ = child.kill();
    let _ = child.wait();
    for (line, words) in [(&metrics, "metrics on "), (&ready, "listening on ")] {
        let url = line["url"].as_str().unwrap();
        assert!(url.starts_with("http://127.0.0.1:"), "{line}");
        assert_eq!(line["message"], format!("{words}{url}"));
        assert_eq!(line["level"], "INFO");
    }
}
