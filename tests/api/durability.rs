//! The durability setting (`RAPID_DURABILITY`). That `full` survives power cuts is proven by the
//! crash test on crashfs (tests/crash); here: the setting is read, announced, and checked.

use std::process::Command;

use reqwest::StatusCode;
use serde_json::json;

use crate::support::{schema_json, Options, TestServer};

fn upload_one(s: &TestServer) -> serde_json::Value {
    s.create_schema(&schema_json(
        "dur",
        "rows",
        "PUBLIC",
        "APPEND",
        json!([{"name": "n", "data_type": "int", "allow_null": false}]),
    ));
    let token = s.admin_token();
    let (_, job) = s.upload_and_wait(
        &token,
        "/api/datasets/default/dur/rows",
        "rows.csv",
        b"n\n1\n2\n3\n".to_vec(),
    );
    job
}

#[test]
fn durability_off_is_announced_and_uploads_still_commit() {
    let s = TestServer::start_with(Options {
        args: vec!["--durability".into(), "off".into()],
        ..Options::default()
    });
    assert_eq!(upload_one(&s)["status"], "SUCCESS");
    assert!(
        s.logs()
            .contains("a power cut may lose acknowledged changes"),
        "{}",
        s.logs()
    );
}

#[test]
fn durable_by_default_and_kept_across_a_restart() {
    let s = TestServer::start();
    assert_eq!(upload_one(&s)["status"], "SUCCESS");
    assert!(!s.logs().contains("power cut"), "{}", s.logs());
    let s = TestServer::start_in(s.stop(), Options::default());
    let (status, rows) = s.call(
        "POST",
        "/api/datasets/default/dur/rows/query",
        Some(&s.admin_token()),
        Some(&json!({"select_columns": ["count(*) AS c"]})),
    );
    assert_eq!(status, StatusCode::OK, "{rows}");
    assert_eq!(rows["0"]["c"], 3);
}

#[test]
fn an_unknown_durability_is_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_rapid-rs"))
        .args(["serve", "--bind", "127.0.0.1:0", "--durability", "fast"])
        .arg("--data-dir")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("`full` or `off`"), "{stderr}");
}
