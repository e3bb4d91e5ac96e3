//! `rapid-rs admin backup` while uploads run, `restore`, and `check` (drift and repair).

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::ops_admin::{admin, stdout_json};
use crate::support::{schema_json, Options, TestServer};

const UPLOAD: &str = "/api/datasets/default/ops/many";

fn schema() -> Value {
    schema_json(
        "ops",
        "many",
        "PUBLIC",
        "APPEND",
        json!([
            {"name": "batch", "data_type": "string", "allow_null": false},
            {"name": "n", "data_type": "int", "allow_null": false},
        ]),
    )
}

fn csv(batch: &str, rows: usize) -> Vec<u8> {
    let mut out = String::from("batch,n\n");
    for i in 0..rows {
        out.push_str(&format!("{batch},{i}\n"));
    }
    out.into_bytes()
}

/// Rows per batch, as the store answers.
fn stored_batches(s: &TestServer, token: &str) -> BTreeSet<(String, i64)> {
    let (status, body) = s.call(
        "POST",
        &format!("{UPLOAD}/query"),
        Some(token),
        Some(&json!({"select_columns": ["batch", "count(*) AS k"], "group_by_columns": ["batch"]})),
    );
    assert_eq!(status, StatusCode::OK, "{body}");
    body.as_object()
        .unwrap()
        .values()
        .map(|r| {
            (
                r["batch"].as_str().unwrap().to_string(),
                r["k"].as_i64().unwrap(),
            )
        })
        .collect()
}

fn upload_jobs(s: &TestServer, token: &str) -> Vec<Value> {
    let (status, body) = s.call("GET", "/api/jobs", Some(token), None);
    assert_eq!(status, StatusCode::OK);
    body.as_array().unwrap().clone()
}

#[test]
fn a_backup_taken_during_uploads_restores_exactly_the_finished_uploads() {
    const ROWS: usize = 300;
    let s = TestServer::start();
    s.create_schema(&schema());
    let admin_token = s.admin_token();
    let backup_dir = tempfile::tempdir().unwrap();
    let dest = backup_dir.path().join("snapshot");
    let done = AtomicBool::new(false);
    let (before, summary) = std::thread::scope(|scope| {
        for writer in 0..3 {
            let (s, token, done) = (&s, &admin_token, &done);
            scope.spawn(move || {
                let mut i = 0;
                // Uploads go on until the backup is over, and at least 4 per writer.
                while i < 4 || !done.load(Ordering::SeqCst) {
                    let name = format!("w{writer}-{i}");
                    let (status, body) =
                        s.upload(token, UPLOAD, &format!("{name}.csv"), csv(&name, ROWS));
                    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
                    i += 1;
                }
            });
        }
        // Some uploads have finished before the backup starts.
        while !upload_jobs(&s, &admin_token)
            .iter()
            .any(|j| j["status"] == "SUCCESS")
        {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let before: BTreeSet<String> = upload_jobs(&s, &admin_token)
            .iter()
            .filter(|j| j["status"] == "SUCCESS")
            .map(|j| {
                j["filename"]
                    .as_str()
                    .unwrap()
                    .trim_end_matches(".csv")
                    .to_string()
            })
            .collect();
        let out = admin(&s.data_dir(), &["backup", dest.to_str().unwrap()]);
        done.store(true, Ordering::SeqCst);
        let summary = stdout_json(&out)["summary"].clone();
        eprintln!(
            "backup summary: {summary}; uploads finished before it: {}",
            before.len()
        );
        (before, summary)
    });
    // Every upload finishes; the live store has all of them.
    for job in upload_jobs(&s, &admin_token) {
        assert_eq!(
            s.wait_job(&admin_token, job["job_id"].as_str().unwrap())["status"],
            "SUCCESS"
        );
    }
    let live = stored_batches(&s, &admin_token);
    assert!(live.len() >= 12, "{live:?}");
    // An online check of the running service finds no drift.
    let online = admin(&s.data_dir(), &["check"]);
    let report = stdout_json(&online);
    assert_eq!(report["online"], true);
    drop(s);

    // Restore into a new folder; it passes check before and after starting.
    let target = tempfile::tempdir().unwrap();
    let restored = stdout_json(&admin(
        &target.path().join("data"),
        &["restore", dest.to_str().unwrap()],
    ));
    assert_eq!(restored["restored_files"], summary["files"], "{restored}");
    stdout_json(&admin(&target.path().join("data"), &["check"]));
    let s = TestServer::start_in(target, Options::default());
    let token = s.admin_token();
    let jobs = upload_jobs(&s, &token);
    let finished: BTreeSet<String> = jobs
        .iter()
        .filter(|j| j["status"] == "SUCCESS")
        .map(|j| {
            j["filename"]
                .as_str()
                .unwrap()
                .trim_end_matches(".csv")
                .to_string()
        })
        .collect();
    // Uploads running at the copy are FAILED (interrupted), none IN PROGRESS.
    assert!(
        jobs.iter().all(|j| j["status"] != "IN PROGRESS"),
        "{jobs:#?}"
    );
    assert!(before.is_subset(&finished), "{before:?} {finished:?}");
    let expected: BTreeSet<(String, i64)> =
        finished.iter().map(|b| (b.clone(), ROWS as i64)).collect();
    assert_eq!(stored_batches(&s, &token), expected);
    assert!(expected.is_subset(&live));
    drop(s);
}

#[test]
fn check_reports_missing_damaged_and_unlisted_files_and_repairs_what_it_can() {
    let s = TestServer::start();
    s.create_schema(&schema());
    let token = s.admin_token();
    for name in ["a", "b"] {
        s.upload_and_wait(&token, UPLOAD, &format!("{name}.csv"), csv(name, 10));
    }
    let dir = s.stop();
    let data = dir.path().join("data");
    let clean = stdout_json(&admin(&data, &["check"]));
    assert_eq!(clean["online"], false);
    assert_eq!(clean["report"]["listed"], 4, "{clean}");
    // A backup as one archive restores to the same store.
    let archive = dir.path().join("backup.tar");
    let made = stdout_json(&admin(&data, &["backup", archive.to_str().unwrap()]));
    assert_eq!(made["summary"]["files"], 4, "{made}");
    assert!(!dir.path().join("backup.tar.partial").exists());
    let again = admin(&data, &["backup", archive.to_str().unwrap()]);
    assert_eq!(
        again.status.code(),
        Some(1),
        "an existing archive is not overwritten"
    );
    let elsewhere = tempfile::tempdir().unwrap();
    let restored = stdout_json(&admin(
        &elsewhere.path().join("data"),
        &["restore", archive.to_str().unwrap()],
    ));
    assert_eq!(restored["restored_files"], 4, "{restored}");
    assert_eq!(restored["check"]["listed"], 4, "{restored}");
    let refused = admin(
        &elsewhere.path().join("data"),
        &["restore", archive.to_str().unwrap()],
    );
    assert_eq!(
        refused.status.code(),
        Some(1),
        "a folder holding a store is not restored over"
    );

    // The data files (each version's Delta log beside them is derived from the catalog).
    let parquet: Vec<_> = walk(&data.join("data"))
        .into_iter()
        .filter(|p| p.extension().is_some_and(|x| x == "parquet"))
        .collect();
    assert_eq!(parquet.len(), 2);
    std::fs::remove_file(&parquet[0]).unwrap();
    std::fs::write(&parquet[1], b"not parquet any more").unwrap();
    let stray = data.join("data/default/ops/many/1/stray.parquet");
    std::fs::write(&stray, b"left by an interrupted commit").unwrap();
    let out = admin(&data, &["check"]);
    assert_eq!(out.status.code(), Some(3));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rel = |p: &std::path::Path| {
        p.strip_prefix(&data)
            .unwrap()
            .to_string_lossy()
            .into_owned()
    };
    assert_eq!(report["report"]["missing"], json!([rel(&parquet[0])]));
    assert_eq!(report["report"]["damaged"], json!([rel(&parquet[1])]));
    assert_eq!(report["report"]["unlisted"], json!([rel(&stray)]));

    let out = admin(&data, &["check", "--repair"]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "missing data cannot be repaired"
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["report"]["removed"], 1);
    assert!(!stray.exists());
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out.sort();
    out
}

#[test]
fn backups_during_overwrites_hold_one_whole_upload_and_pass_check() {
    const ROWS: usize = 200;
    let s = TestServer::start();
    let mut over = schema();
    over["metadata"]["update_behaviour"] = json!("OVERWRITE");
    s.create_schema(&over);
    let token = s.admin_token();
    s.upload_and_wait(&token, UPLOAD, "first.csv", csv("first", ROWS));
    let backups = tempfile::tempdir().unwrap();
    let done = AtomicBool::new(false);
    let summaries: Vec<Value> = std::thread::scope(|scope| {
        let (s, token, done) = (&s, &token, &done);
        // Each OVERWRITE commit removes the files the one before it stored.
        scope.spawn(move || {
            let mut i = 0;
            while !done.load(Ordering::SeqCst) {
                let name = format!("o{i}");
                s.upload_and_wait(token, UPLOAD, &format!("{name}.csv"), csv(&name, ROWS));
                i += 1;
            }
        });
        let taken = (0..5)
            .map(|k| {
                let dest = backups.path().join(format!("b{k}"));
                stdout_json(&admin(&s.data_dir(), &["backup", dest.to_str().unwrap()]))["summary"]
                    .clone()
            })
            .collect();
        done.store(true, Ordering::SeqCst);
        taken
    });
    eprintln!("backups during overwrites: {summaries:?}");
    for k in 0..5 {
        let copy = backups.path().join(format!("b{k}"));
        // A backup folder is laid out as a data folder: check runs on it directly.
        let report = stdout_json(&admin(&copy, &["check"]));
        assert_eq!(report["report"]["missing"], json!([]), "{report}");
        let target = tempfile::tempdir().unwrap();
        stdout_json(&admin(
            &target.path().join("data"),
            &["restore", copy.to_str().unwrap()],
        ));
        let restored = TestServer::start_in(target, Options::default());
        let batches = stored_batches(&restored, &restored.admin_token());
        assert_eq!(batches.len(), 1, "backup {k}: {batches:?}");
        assert_eq!(batches.iter().next().unwrap().1, ROWS as i64);
    }
}
