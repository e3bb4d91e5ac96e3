//! What the HTTP integration tests (`tests/api/support.rs`) and the benchmarks (`benches/`)
//! share: starting a `rapid-rs` process and reading its address, fetching a token the way the
//! rAPId SDK does, and waiting for a job to finish. Blocking, for test and bench threads; the
//! same requests asynchronously in [`nonblocking`], for `rapid-rs bench`. And the module-graph
//! checker ([`module_graph`]) behind every crate's layer test.

pub mod module_graph;
pub mod nonblocking;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use reqwest::blocking::Client;
use reqwest::StatusCode;
use serde_json::{json, Value};

/// Starts `cmd` (a `rapid-rs serve` with its stdout piped) and waits for its
/// `listening on http://...` line (or its JSON form, with `RAPID_LOG_FORMAT=json`); returns the
/// child and that base address. Stdout keeps being drained, so the server never blocks on a full
/// pipe. `Err` if the process ends first.
pub fn spawn_server(cmd: &mut Command) -> Result<(Child, String), String> {
    spawn_server_noting(cmd).map(|(child, base, _)| (child, base))
}

/// As [`spawn_server`], with the lines printed before the ready line (the PostgreSQL
/// listener's `postgresql listening on ADDR`, for one).
pub fn spawn_server_noting(cmd: &mut Command) -> Result<(Child, String, Vec<String>), String> {
    let mut child = cmd.spawn().map_err(|e| format!("start rapid-rs: {e}"))?;
    let stdout = child
        .stdout
        .take()
        .ok_or("rapid-rs must be started with its stdout piped")?;
    let mut lines = BufReader::new(stdout).lines();
    let mut before = Vec::new();
    let base = loop {
        match lines.next() {
            Some(Ok(line)) => {
                if let Some(addr) = listening_on(&line) {
                    break addr;
                }
                before.push(line);
            }
            _ => {
                let _ = child.wait();
                return Err("rapid-rs exited before listening".into());
            }
        }
    };
    std::thread::spawn(move || for _ in lines {});
    Ok((child, base, before))
}

/// The address of a ready line: `listening on http://…`, or with `RAPID_LOG_FORMAT=json` an object
/// whose message says so and whose `url` is the address.
fn listening_on(line: &str) -> Option<String> {
    if let Some(addr) = line.strip_prefix("listening on ") {
        return Some(addr.trim().to_string());
    }
    let object: Value = serde_json::from_str(line).ok()?;
    let message = object["message"].as_str()?;
    message.starts_with("listening on ").then_some(())?;
    Some(object["url"].as_str()?.to_string())
}

/// `POST /api/oauth2/token` with client credentials as HTTP Basic, exactly as the rAPId SDK asks
/// for it; the status and the JSON answer.
pub fn try_token(http: &Client, base: &str, id: &str, secret: &str) -> (StatusCode, Value) {
    let res = http
        .post(format!("{base}/api{TOKEN_PATH}"))
        .basic_auth(id, Some(secret))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(token_body(id))
        .send()
        .expect("token request");
    let status = res.status();
    let text = res.text().unwrap_or_default();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// The token route, under the API's base (`/api`).
pub const TOKEN_PATH: &str = "/oauth2/token";

/// The token request's body as the SDK sends it (a JSON text under a form content type: the
/// service reads the grant from the Basic credentials either way).
pub fn token_body(id: &str) -> String {
    json!({"grant_type": "client_credentials", "client_id": id}).to_string()
}

/// The access token in a token answer, or why there is none.
pub fn access_token(status: StatusCode, body: &Value) -> Result<String, String> {
    match body["access_token"].as_str() {
        Some(token) if status == StatusCode::OK => Ok(token.to_string()),
        _ => Err(format!("token request refused ({status}): {body}")),
    }
}

/// Whether a job (`GET /api/jobs/{id}`'s answer) has ended, in success or failure.
pub fn job_ended(job: &Value) -> bool {
    job["status"] != "IN PROGRESS"
}

/// A bearer token for the client; panics unless the service grants one.
pub fn token(http: &Client, base: &str, id: &str, secret: &str) -> String {
    let (status, body) = try_token(http, base, id, secret);
    access_token(status, &body).unwrap_or_else(|e| panic!("token for {id}: {e}"))
}

/// Polls `GET /api/jobs/{job_id}` every `poll` until the job is no longer IN PROGRESS, and returns
/// it. Panics on an answer other than 200, or when the job still runs after `deadline`.
pub fn wait_job(
    http: &Client,
    base: &str,
    token: &str,
    job_id: &str,
    deadline: Duration,
    poll: Duration,
) -> Value {
    let until = Instant::now() + deadline;
    loop {
        let res = http
            .get(format!("{base}/api/jobs/{job_id}"))
            .bearer_auth(token)
            .send()
            .expect("job request");
        let status = res.status();
        let job: Value = res.json().unwrap_or(Value::Null);
        assert_eq!(status, StatusCode::OK, "{job}");
        if job_ended(&job) {
            return job;
        }
        assert!(Instant::now() < until, "job {job_id} still running: {job}");
        std::thread::sleep(poll);
    }
}
