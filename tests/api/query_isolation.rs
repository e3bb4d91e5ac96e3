//! Time limits, memory limits and admission of queries: a query past its time limit is stopped
//! (its slot and memory are free again once its work has ended) while cheap requests keep
//! answering; a flood beyond
//! the pools gets 503 with Retry-After; query memory spills or is refused clearly.

use std::sync::atomic::{AtomicBool, Ordering};
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

const SYNC_RUNNING: &str = "rapid_queries_running{pool=\"sync\"}";
const QUERY_MEMORY: &str = "rapid_query_memory_reserved_bytes";

/// Polls the metrics until `done` holds of them, for as long as a loaded machine could need.
fn wait_for_metrics(s: &TestServer, t: &str, what: &str, done: impl Fn(f64, f64) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let (running, memory) = (s.metric(t, SYNC_RUNNING), s.metric(t, QUERY_MEMORY));
        if done(running, memory) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: still {running} queries running and {memory} bytes reserved"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Cheap requests of every kind; each must answer 200.
fn cheap_requests(s: &TestServer, t: &str, job_id: &str) {
    let calls: [(&str, String, Option<&str>); 5] = [
        ("GET", "/api/status".into(), None),
        ("POST", "/api/datasets".into(), Some(t)),
        ("GET", format!("{DATASET}/info"), Some(t)),
        ("GET", format!("/api/jobs/{job_id}"), Some(t)),
        ("GET", "/api/subjects".into(), Some(t)),
    ];
    for (method, path, token) in calls {
        let (status, body) = s.call(method, &path, token, None);
        assert_eq!(status, StatusCode::OK, "{path}: {body}");
    }
}

fn upload_job(s: &TestServer, t: &str) -> String {
    let (_, jobs) = s.call("GET", "/api/jobs", Some(t), None);
    jobs[0]["job_id"].as_str().unwrap().to_string()
}

/// Two slow queries in flight while `during` runs; their answers once both ended.
fn with_two_slow_queries<R>(
    s: &TestServer,
    t: &str,
    during: impl FnOnce(&[AtomicBool; 2]) -> R,
) -> (Vec<(StatusCode, Value)>, R) {
    let ended = [AtomicBool::new(false), AtomicBool::new(false)];
    std::thread::scope(|scope| {
        let runs: Vec<_> = ended
            .iter()
            .map(|flag| {
                scope.spawn(move || {
                    let answer = s.call("POST", QUERY, Some(t), Some(&slow_query(Some(5))));
                    flag.store(true, Ordering::SeqCst);
                    answer
                })
            })
            .collect();
        let during = during(&ended);
        (
            runs.into_iter().map(|r| r.join().unwrap()).collect(),
            during,
        )
    })
}

/// Cheap requests are answered while both query slots are taken by slow queries (the two
/// overlap: the queries were still running when the cheap answers had all arrived), however
/// slowly this machine runs either.
#[test]
fn cheap_requests_answer_while_slow_queries_hold_every_slot() {
    let (s, t) = server(&["--query-concurrency", "2", "--query-timeout-seconds", "10"]);
    let job_id = upload_job(&s, &t);
    let (answers, ()) = with_two_slow_queries(&s, &t, |ended| {
        wait_for_metrics(&s, &t, "both slow queries admitted", |running, _| {
            running == 2.0
        });
        cheap_requests(&s, &t, &job_id);
        let still_running = s.metric(&t, SYNC_RUNNING);
        let ended: Vec<bool> = ended.iter().map(|e| e.load(Ordering::SeqCst)).collect();
        assert_eq!(
            (still_running, ended),
            (2.0, vec![false, false]),
            "the cheap requests were answered while both slow queries ran"
        );
        s.admin_token();
    });
    for (status, body) in &answers {
        // Stopped at their limit (or, on a machine fast enough, finished).
        assert!(
            *status == StatusCode::BAD_REQUEST || *status == StatusCode::OK,
            "{body}"
        );
    }
}

#[test]
fn queries_past_their_time_limit_are_stopped_and_give_back_their_slots_and_memory() {
    let (s, t) = server(&[
        "--query-timeout-seconds",
        "2",
        "--large-query-timeout-seconds",
        "1",
    ]);
    let (answers, ()) = with_two_slow_queries(&s, &t, |_| ());
    for (status, body) in &answers {
        assert_eq!(*status, StatusCode::BAD_REQUEST, "{body}");
        let details = body["details"].as_str().unwrap();
        assert!(
            details.contains("RAPID_QUERY_TIMEOUT_SECONDS")
                && details.contains("/api/datasets/default/heavy/rows/query/large"),
            "{details}"
        );
    }
    // The work really stopped: its slots are free only once every partition of it has stopped
    // (they stop at their next batch), and then no query memory is held either.
    wait_for_metrics(&s, &t, "the stopped queries' work", |running, memory| {
        running == 0.0 && memory == 0.0
    });
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
        // No wait list: the second job is refused (the list: the last test below).
        "--large-query-queue",
        "0",
        "--query-queue-wait-ms",
        "200",
        "--query-timeout-seconds",
        "2",
        // Long enough that the second job surely arrives while the first holds the slot (it is
        // sent as soon as the first is accepted), short against the query's work even on a
        // machine several times faster than ours (a CI runner finished it inside 10 s).
        "--large-query-timeout-seconds",
        "3",
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
    // The slot comes back once the stopped query's work has ended (its next batch).
    wait_for_metrics(&s, &t, "the stopped query's work", |running, _| {
        running == 0.0
    });
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

/// With the one large-query slot taken, the next jobs are accepted and wait their turn (in
/// progress, not refused), up to the wait list's size; past it the answer is 503 naming the
/// setting. The waiting jobs then run and succeed.
#[test]
fn large_query_jobs_past_the_slots_wait_their_turn_up_to_the_queue() {
    let (s, t) = server(&[
        "--large-query-concurrency",
        "1",
        "--large-query-queue",
        "2",
        "--query-queue-wait-ms",
        "0",
        // The first job holds the slot this long (its sort takes far longer). Every job has
        // this limit, so it is also the waiting jobs' time to run: on a loaded machine (the
        // policy suite beside it, 2 cores) a 3-row job took over 3 s, so the limit leaves room.
        "--large-query-timeout-seconds",
        "10",
    ]);
    let large = format!("{QUERY}/large");
    let submit = |body: &Value| {
        let res = s
            .request("POST", &large)
            .bearer_auth(&t)
            .json(body)
            .send()
            .unwrap();
        let retry = res.headers().get("retry-after").cloned();
        let (status, body) = into_parts(res);
        (status, body, retry)
    };
    let (status, first, _) = submit(&slow_query(None));
    assert_eq!(status, StatusCode::ACCEPTED, "{first}");
    let small = json!({"filter": "a < 3"});
    let waiting: Vec<String> = (0..2)
        .map(|_| {
            let (status, body, _) = submit(&small);
            assert_eq!(status, StatusCode::ACCEPTED, "{body}");
            body["details"]["job_id"].as_str().unwrap().to_string()
        })
        .collect();
    let (status, body, retry) = submit(&small);
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(retry.unwrap(), "1");
    let details = body["details"].as_str().unwrap();
    assert!(details.contains("RAPID_LARGE_QUERY_QUEUE"), "{details}");
    let path = format!("/api/jobs/{}", waiting[0]);
    let (status, job) = s.call("GET", &path, Some(&t), None);
    assert_eq!(status, StatusCode::OK, "{job}");
    assert_eq!(
        job["status"], "IN PROGRESS",
        "a waiting job is in progress: {job}"
    );
    let job = s.wait_job(&t, first["details"]["job_id"].as_str().unwrap());
    assert_eq!(job["status"], "FAILED", "{job}");
    for id in &waiting {
        let job = s.wait_job(&t, id);
        assert_eq!(job["status"], "SUCCESS", "{job}");
        assert_eq!(job["rows_processed"], 3, "{job}");
    }
}
