//! The load tool (tools/bench) against a running server, in a short configuration: every accepted
//! row must be stored exactly once, and refused files are reported by reason. The tool runs
//! in-process from its library (its binary, `rapid-bench`, is a thin `main` over the same call);
//! `rapid-rs bench` hands its arguments over to that binary.

use std::process::Command;

use clap::Parser;
use serde_json::Value;

use crate::support::{TestServer, ADMIN_ID, ADMIN_SECRET};

/// The tool's arguments, as `rapid-bench --json` on a short configuration plus `extra`.
fn args(s: &TestServer, extra: &[&str]) -> rapid_bench::BenchArgs {
    let url = format!("{}/api", s.base);
    let mut argv = vec!["rapid-bench", "--json", "--rows", "500", "--columns", "6"];
    argv.extend([
        "--url",
        url.as_str(),
        "--client-id",
        ADMIN_ID,
        "--client-secret",
        ADMIN_SECRET,
    ]);
    argv.extend(extra);
    rapid_bench::Cli::parse_from(argv).args
}

/// The report as JSON, and whether every accepted row was stored exactly once (the tool's exit
/// status).
fn bench(s: &TestServer, extra: &[&str]) -> (bool, Value) {
    let report = rapid_bench::run_blocking(args(s, extra)).unwrap_or_else(|e| panic!("{e}"));
    (report.exactly_once, serde_json::to_value(&report).unwrap())
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
    let refused = rapid_bench::run_blocking(args(&s, &["--pregenerate", "--duration", "1"]));
    let error = refused.expect_err("--pregenerate with --duration refused");
    assert!(error.contains("--pregenerate needs --files"), "{error}");
}

/// `rapid-rs bench` hands every argument to `rapid-bench`: its help when that binary sits beside
/// the server's (or is on PATH), else a line saying how to build it. Either way, the tool's name.
#[test]
fn rapid_rs_bench_hands_over_to_the_tool_binary() {
    let out = Command::new(env!("CARGO_BIN_EXE_rapid-rs"))
        .args(["bench", "--help"])
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if out.status.success() {
        assert!(text.contains("Usage: rapid-bench"), "{text}");
    } else {
        assert!(
            text.contains("cargo build --release -p rapid-bench"),
            "{text}"
        );
    }
}
