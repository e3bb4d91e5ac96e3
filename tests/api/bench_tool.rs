//! `rapid-rs bench` against a running server, in a short configuration: every accepted row must
//! be stored exactly once, and refused files are reported by reason.

use std::process::Command;

use serde_json::Value;

use crate::support::{TestServer, ADMIN_ID, ADMIN_SECRET};

/// `rapid-rs bench --json` on a short configuration plus `extra`.
fn run_bench(s: &TestServer, extra: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_rapid-rs"))
        .args(["bench", "--json", "--rows", "500", "--columns", "6"])
        .args([
            "--url",
            &format!("{}/api", s.base),
            "--client-id",
            ADMIN_ID,
            "--client-secret",
            ADMIN_SECRET,
        ])
        .args(extra)
        .output()
        .unwrap()
}

fn bench(s: &TestServer, extra: &[&str]) -> (bool, Value) {
    let out = run_bench(s, extra);
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("no JSON report: {}", String::from_utf8_lossy(&out.stderr)));
    (out.status.success(), report)
}

#[test]
fn concurrent_uploads_to_one_dataset_are_stored_exactly_once() {
    let s = TestServer::start();
    let (ok, report) = bench(&s, &["--uploaders", "4", "--files", "12"]);
    assert!(ok, "{report}");
    assert_eq!(report["files_stored"], 12);
    assert_eq!(report["rows_stored"], 6000);
    assert_eq!(report["exactly_once"], true);
    assert_eq!(report["verification"][0]["stored"], 6000);
    assert_eq!(report["verification"][0]["distinct_ids"], 6000);
    assert!(report["completed_latency"]["p99_ms"].as_f64().unwrap() > 0.0);
}

#[test]
fn uploads_to_many_datasets_report_refused_files_by_reason() {
    let s = TestServer::start();
    let (ok, report) = bench(
        &s,
        &[
            "--uploaders",
            "3",
            "--files",
            "9",
            "--datasets",
            "many",
            "--invalid-rows",
            "0.001",
            "--seed",
            "42",
        ],
    );
    assert!(ok, "{report}");
    assert_eq!(report["datasets"], 3);
    let failed = report["files_failed"].as_u64().unwrap();
    assert!(failed > 0, "{report}");
    assert_eq!(
        report["failures"]["422: Column [id] has an incorrect data type. Expected int"],
        failed
    );
    assert_eq!(report["exactly_once"], true);
    assert_eq!(
        report["files_stored"].as_u64().unwrap() * 500,
        report["rows_stored"].as_u64().unwrap()
    );
}

#[test]
fn pregenerated_files_upload_the_same_rows_and_need_a_file_count() {
    let s = TestServer::start();
    let (ok, report) = bench(
        &s,
        &[
            "--uploaders",
            "3",
            "--files",
            "7",
            "--datasets",
            "many",
            "--pregenerate",
        ],
    );
    assert!(ok, "{report}");
    assert_eq!(report["pregenerated"], true);
    assert_eq!(report["files_stored"], 7);
    assert_eq!(report["rows_stored"], 3500);
    assert_eq!(report["exactly_once"], true);
    let refused = run_bench(&s, &["--pregenerate", "--duration", "1"]);
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("--pregenerate needs --files"), "{stderr}");
}
