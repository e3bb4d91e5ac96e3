//! Time limits, memory limits and admission of queries: a query past its time limit is stopped
//! (its CPU use ends, its slot is free again) while cheap requests keep answering; a flood beyond
//! the pools gets 503 with Retry-After; query memory spills or is refused clearly.

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::support::{into_parts, schema_json, Options, TestServer};

const DATASET: &str = "/api/datasets/default/heavy/rows";
const QUERY: &str = "/api/datasets/default/heavy/rows/query";
const ROWS: usize = 300_000;

fn server(args: &[&str]) -> (TestServer, String) {
    let s = TestServer::start_with(Options {
        args: args.iter().map(|a| a.to_string()).collect(),
        ..Default::default()
    });
    s.create_schema(&schema_json(
        "heavy",
        "rows",
        "PUBLIC",
        "APPEND",
        json!([
            {"name": "a", "data_type": "int", "allow_null": false},
            {"name": "s", "data_type": "string", "allow_null": true}
        ]),
    ));
    let t = s.admin_token();
    let mut csv = String::with_capacity(ROWS * 16);
    csv.push_str("a,s\n");
    for i in 0..ROWS {
        csv.push_str(&format!("{i},x{i}\n"));
    }
    let (_, job) = s.upload_and_wait(&t, DATASET, "rows.csv", csv.into());
    assert_eq!(job["status"], "SUCCESS", "{job}");
    (s, t)
}

/// Sorting 300,000 rows by a string built with 45 nested calls: about 20 s of work in a debug
/// build (it is never allowed to finish here).
fn slow_query(limit: Option<u64>) -> Value {
    let mut key = "s".to_string();
    for _ in 0..45 {
        key = format!("concat({key}, s)");
    }
    let mut q = json!({"select_columns": ["a"], "order_by_columns": [{"column": key}]});
    if let Some(l) = limit {
        q["limit"] = json!(l);
    }
    q
}

/// The server's CPU time so far (user + system), from /proc.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the command name (which is in parentheses): utime and stime are 14 and 15.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    let ticks: f64 = fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap();
    ticks / 100.0
}

/// Cheap requests of every kind; each must answer well within `bound`.
fn cheap_requests(s: &TestServer, t: &str, job_id: &str, bound: Duration) {
    for _ in 0..3 {
        let calls: [(&str, String, Option<&str>); 5] = [
            ("GET", "/api/status".into(), None),
            ("POST", "/api/datasets".into(), Some(t)),
            ("GET", format!("{DATASET}/info"), Some(t)),
            ("GET", format!("/api/jobs/{job_id}"), Some(t)),
            ("GET", "/api/subjects".into(), Some(t)),
        ];
        for (method, path, token) in calls {
            let started = Instant::now();
            let (status, body) = s.call(method, &path, token, None);
            assert_eq!(status, StatusCode::OK, "{path}: {body}");
            assert!(
                started.elapsed() < bound,
                "{path} took {:?}",
                started.elapsed()
            );
        }
        let started = Instant::now();
        s.admin_token();
        assert!(
            started.elapsed() < bound,
            "token took {:?}",
            started.elapsed()
        );
    }
}

fn upload_job(s: &TestServer, t: &str) -> String {
    let (_, jobs) = s.call("GET", "/api/jobs", Some(t), None);
    jobs[0]["job_id"].as_str().unwrap().to_string()
}

#[test]
fn queries_past_their_time_limit_are_stopped_while_cheap_requests_answer() {
    let (s, t) = server(&[
        "--query-timeout-seconds",
        "2",
        "--large-query-timeout-seconds",
        "1",
    ]);
    let job_id = upload_job(&s, &t);
    let slow = |s: &TestServer| {
        let started = Instant::now();
        let answer = s.call("POST", QUERY, Some(&t), Some(&slow_query(Some(5))));
        (answer, Instant::now(), started.elapsed())
    };
    let (answers, cheap_done) = std::thread::scope(|scope| {
        let runs: Vec<_> = (0..2).map(|_| scope.spawn(|| slow(&s))).collect();
        std::thread::sleep(Duration::from_millis(300));
        cheap_requests(&s, &t, &job_id, Duration::from_millis(1500));
        let cheap_done = Instant::now();
        let answers: Vec<_> = runs.into_iter().map(|r| r.join().unwrap()).collect();
        (answers, cheap_done)
    });
    for ((status, body), finished, took) in &answers {
        assert_eq!(*status, StatusCode::BAD_REQUEST, "{body}");
        let details = body["details"].as_str().unwrap();
        assert!(
            details.contains("RAPID_QUERY_TIMEOUT_SECONDS")
                && details.contains("/api/datasets/default/heavy/rows/query/large"),
            "{details}"
        );
        assert!(cheap_done < *finished, "cheap requests answered first");
        assert!(
            *took < Duration::from_secs(30),
            "stopped at its limit: {took:?}"
        );
    }
    // The work really stopped: the server is idle now (it would burn about 2 CPU seconds a
    // second if the sorts went on), and a query gets a slot and answers.
    let before = cpu_seconds(s.pid());
    std::thread::sleep(Duration::from_secs(2));
    let used = cpu_seconds(s.pid()) - before;
    assert!(used < 0.5, "the server used {used} s of CPU while idle");
    let (status, answer) = s.call("POST", QUERY, Some(&t), Some(&json!({"filter": "a < 3"})));
    assert_eq!(status, StatusCode::OK, "{answer}");

    // A large-query job past its own limit fails, naming it, and leaves no partial result.
    let (status, body) = s.call(
        "POST",
        &format!("{QUERY}/large"),
        Some(&t),
        Some(&slow_query(None)),
    );
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let job = s.wait_job(&t, body["details"]["job_id"].as_str().unwrap());
    assert_eq!(job["status"], "FAILED", "{job}");
    assert!(
        job.to_string()
            .contains("RAPID_LARGE_QUERY_TIMEOUT_SECONDS"),
        "{job}"
    );
    // The job is answered FAILED at its limit; the stopped work removes its partial file when it
    // is dropped, which on a loaded machine may come a little later.
    let results = s.data_dir().join("results");
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let left = loop {
        let left: Vec<_> = std::fs::read_dir(&results)
            .map(|d| d.flatten().map(|e| e.file_name()).collect())
            .unwrap_or_default();
        if left.is_empty() || std::time::Instant::now() > deadline {
            break left;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_flood_beyond_the_query_pools_gets_503_with_retry_after_and_the_server_stays_healthy() {
    let (s, t) = server(&[
        "--query-concurrency",
        "1",
        "--large-query-concurrency",
        "1",
        "--query-queue-wait-ms",
        "200",
        "--query-timeout-seconds",
        "2",
        "--large-query-timeout-seconds",
        "2",
    ]);
    let send = |body: &Value, path: &str| {
        let res = s
            .request("POST", path)
            .bearer_auth(&t)
            .json(body)
            .send()
            .unwrap();
        let retry = res
            .headers()
            .get("retry-after")
            .map(|v| v.to_str().unwrap().to_string());
        let (status, body) = into_parts(res);
        (status, body, retry)
    };
    let answers: Vec<_> = std::thread::scope(|scope| {
        let runs: Vec<_> = (0..6)
            .map(|_| scope.spawn(|| send(&slow_query(Some(5)), QUERY)))
            .collect();
        let (status, _) = s.call("GET", "/api/status", None, None);
        assert_eq!(status, StatusCode::OK);
        runs.into_iter().map(|r| r.join().unwrap()).collect()
    });
    let busy: Vec<_> = answers
        .iter()
        .filter(|(status, _, _)| *status == StatusCode::SERVICE_UNAVAILABLE)
        .collect();
    assert!(!busy.is_empty() && busy.len() < 6, "{answers:?}");
    for (_, body, retry) in &busy {
        assert_eq!(retry.as_deref(), Some("1"));
        assert!(
            body["details"]
                .as_str()
                .unwrap()
                .contains("RAPID_QUERY_CONCURRENCY"),
            "{body}"
        );
    }
    let (status, answer) = s.call("POST", QUERY, Some(&t), Some(&json!({"filter": "a < 3"})));
    assert_eq!(status, StatusCode::OK, "{answer}");

    // Large-query jobs: one runs, the next is refused before any job exists.
    let large = format!("{QUERY}/large");
    let (status, first, _) = send(&slow_query(None), &large);
    assert_eq!(status, StatusCode::ACCEPTED, "{first}");
    let (status, body, retry) = send(&slow_query(None), &large);
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(retry.as_deref(), Some("1"));
    assert!(body["details"]
        .as_str()
        .unwrap()
        .contains("RAPID_LARGE_QUERY_CONCURRENCY"));
    let job = s.wait_job(&t, first["details"]["job_id"].as_str().unwrap());
    assert_eq!(job["status"], "FAILED", "{job}");
    // The job is answered at its limit; its slot comes back once the work has really stopped
    // (a sort of buffered rows is one step DataFusion does not interrupt).
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (status, body, _) = send(&json!({"filter": "a < 3"}), &large);
        if status == StatusCode::ACCEPTED {
            break;
        }
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
        assert!(Instant::now() < deadline, "the slot never came back");
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn query_memory_is_bounded_with_a_clear_refusal() {
    let (s, t) = server(&["--query-memory-bytes", "4194304"]);
    // Keeping the top 100,000 rows of a sort in memory needs more than 4 MiB (and cannot spill).
    let (status, answer) = s.call(
        "POST",
        QUERY,
        Some(&t),
        Some(
            &json!({"select_columns": ["s", "a", "concat(s, s, s) AS x"], "filter": "a < 100000",
                     "order_by_columns": [{"column": "s", "direction": "DESC"}]}),
        ),
    );
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    let details = answer["details"].as_str().unwrap();
    assert!(
        details.contains("the limit of 4 MiB for queries allows (RAPID_QUERY_MEMORY_BYTES"),
        "{answer}"
    );
    // The same as a large-query job: FAILED with the same explanation.
    let (status, body) = s.call(
        "POST",
        &format!("{QUERY}/large"),
        Some(&t),
        Some(
            &json!({"select_columns": ["s", "a", "concat(s, s, s, s) AS x"],
                     "order_by_columns": [{"column": "s", "direction": "DESC"}]}),
        ),
    );
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let job = s.wait_job(&t, body["details"]["job_id"].as_str().unwrap());
    assert_eq!(job["status"], "FAILED", "{job}");
    assert!(
        job.to_string().contains("RAPID_QUERY_MEMORY_BYTES"),
        "{job}"
    );
    // Small queries still fit.
    let (status, answer) = s.call("POST", QUERY, Some(&t), Some(&json!({"filter": "a < 3"})));
    assert_eq!(status, StatusCode::OK, "{answer}");

    // The spill folder is emptied at every start (the engine then makes its own folder there).
    let spill = s.data_dir().join("spill");
    assert!(spill.is_dir());
    std::fs::write(spill.join("left-over"), b"x").unwrap();
    let dir = s.stop();
    let s = TestServer::start_in(dir, Options::default());
    assert!(!s.data_dir().join("spill/left-over").exists());
}
