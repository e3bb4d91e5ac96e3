//! Delta checkpoints (issue 53): every `RAPID_DELTA_CHECKPOINT_INTERVAL` (10) log versions a
//! Parquet checkpoint holding what the JSON versions before it replay to (protocol, metadata,
//! the live files' adds, no removed file) and `_last_checkpoint` naming it; delta-rs and
//! DuckDB read the table through it, equal to `/query`; `admin check` reports a checkpoint
//! that disagrees with the log, and `--repair` writes it again.

use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};

use rapid_actors::delta_log::checkpoint::{decode, State};

use crate::delta_log::{events_schema, keeping, log_file, read, run, table, upload, wait_log};
use crate::ops_admin::{admin, stdout_json};
use crate::pyarrow_readback::python;
use crate::sql_clients::extension_python;
use crate::support::TestServer;

fn checkpoint_file(table: &Path, v: i64) -> std::path::PathBuf {
    table.join(format!("_delta_log/{v:020}.checkpoint.parquet"))
}

/// What the JSON versions `0..=v` replay to.
fn replayed(table: &Path, v: i64) -> State {
    let mut state = State::default();
    for n in 0..=v {
        state
            .apply(&std::fs::read(log_file(table, n)).unwrap())
            .unwrap();
    }
    state
}

#[test]
fn checkpoints_hold_the_replayed_state_and_readers_read_through_them() {
    let s = TestServer::start_with(keeping());
    let t = s.admin_token();
    s.create_schema(&events_schema());
    for n in 1..=25 {
        upload(&s, &t, n);
    }
    let table = table(&s);
    wait_log(&table, 24);

    for v in [10, 20] {
        let state = decode(std::fs::read(checkpoint_file(&table, v)).unwrap()).unwrap();
        assert_eq!(state, replayed(&table, v), "checkpoint {v}");
        let actions = state.actions();
        assert!(actions[0].get("protocol").is_some(), "{:?}", actions[0]);
        assert!(actions[1].get("metaData").is_some(), "{:?}", actions[1]);
        assert!(actions[2..].iter().all(|a| a.get("add").is_some()));
        // Every upload adds two files (two regions); none is removed by an append.
        assert_eq!(state.files(), 2 * (v as usize + 1), "live files at {v}");
    }
    for v in [0, 5, 15, 21, 24] {
        assert!(!checkpoint_file(&table, v).exists(), "no checkpoint {v}");
    }
    let last: Value =
        serde_json::from_slice(&std::fs::read(table.join("_delta_log/_last_checkpoint")).unwrap())
            .unwrap();
    assert_eq!(last["version"], 20, "{last}");
    assert_eq!(last["numOfAddFiles"], 42, "{last}");
    assert_eq!(last["size"], 44, "{last}");

    // delta-rs and DuckDB read the table through checkpoint 20 and four JSON versions, equal
    // to /query.
    let (commit, ours) = read(&s, &t, "");
    assert_eq!(commit, 25);
    assert_eq!(ours.as_array().unwrap().len(), 75);
    let mut script = Command::new(python());
    script
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/python/delta_read.py"
        ))
        .arg("deltalake")
        .arg(&table)
        .args(["24", "12"]);
    let theirs = run(script);
    assert_eq!(theirs["latest"], json!(24.0), "{theirs}");
    assert_eq!(theirs["24"]["rows"], ours, "delta-rs");
    assert_eq!(
        theirs["12"]["rows"].as_array().unwrap().len(),
        39,
        "delta-rs at 12"
    );
    match extension_python() {
        Some(ext) => {
            let mut script = Command::new(ext);
            script
                .arg(concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/tests/python/delta_read.py"
                ))
                .arg("duckdb")
                .arg(&table);
            assert_eq!(run(script)["rows"], ours, "DuckDB delta_scan");
        }
        None => eprintln!("skipped DuckDB: no .venv-ext (scripts/setup-python.sh makes it)"),
    }

    // `admin check`: agreeing checkpoints pass; one that is not its log's state is drift, and
    // `--repair` writes the log and its checkpoint again.
    let data = s.data_dir();
    let dir = s.stop();
    let report = stdout_json(&admin(&data, &["check"]));
    assert_eq!(report["report"]["delta"], json!([]), "{report}");
    std::fs::copy(checkpoint_file(&table, 10), checkpoint_file(&table, 20)).unwrap();
    let out = admin(&data, &["check"]);
    assert!(!out.status.success(), "a wrong checkpoint is drift");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        report["report"]["delta"]
            .to_string()
            .contains("00000000000000000020.checkpoint.parquet: differs"),
        "{report}"
    );
    stdout_json(&admin(&data, &["check", "--repair"]));
    let state = decode(std::fs::read(checkpoint_file(&table, 20)).unwrap()).unwrap();
    assert_eq!(state, replayed(&table, 20));
    let out = admin(&data, &["check"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    drop(dir);
}
