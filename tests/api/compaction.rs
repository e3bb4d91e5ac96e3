//! Compaction as a client sees it: appends merged on their own or on demand, answers identical
//! before and after, `unique` still enforced, and deleting a raw file whose rows were merged
//! removes exactly its rows.

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::ops_admin::{admin, stdout_json};
use crate::stored::{parquet_files, stored_rows};
use crate::support::{Options, TestServer};
use crate::uploads::{ids, orders_schema, ORDERS};

const HEADER: &str = "region,id,day,amount,paid,note\n";

/// Append `n`: ids `10n` and `10n + 1` in north, `10n + 2` in south.
fn append(n: i64) -> Vec<u8> {
    let (a, b, c) = (10 * n, 10 * n + 1, 10 * n + 2);
    format!("{HEADER}north,{a},01/02/2024,{a}.5,true,x\nnorth,{b},,,,\nsouth,{c},,{c}.25,false,\n")
        .into_bytes()
}

fn start(env: &[(&str, &str)]) -> (TestServer, String) {
    let s = TestServer::start_with(Options {
        env: env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        ..Options::default()
    });
    s.create_schema(&orders_schema("APPEND"));
    let t = s.admin_token();
    (s, t)
}

/// Appends 0..n; returns each append's raw file name.
fn appends(s: &TestServer, t: &str, n: i64) -> Vec<String> {
    (0..n)
        .map(|i| {
            let (accepted, job) = s.upload_and_wait(t, ORDERS, "a.csv", append(i));
            assert_eq!(job["status"], "SUCCESS", "append {i}: {job}");
            accepted["raw_filename"].as_str().unwrap().to_string()
        })
        .collect()
}

fn files(s: &TestServer) -> usize {
    parquet_files(&s.data_dir().join("data/default/shop/orders/1")).len()
}

fn wait_for_files(s: &TestServer, wanted: usize) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while files(s) != wanted {
        assert!(Instant::now() < deadline, "still {} files", files(s));
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Every row through the query endpoint, and an aggregate, in a fixed order.
fn answers(s: &TestServer, t: &str) -> (Value, Value) {
    let q = |body: Value| {
        let (status, answer) = s.call("POST", &format!("{ORDERS}/query"), Some(t), Some(&body));
        assert_eq!(status, StatusCode::OK, "{answer}");
        answer
    };
    let all = q(json!({"order_by_columns": [{"column": "id", "direction": "ASC"}]}));
    let sums = q(json!({
        "select_columns": ["region", "count(id) AS n", "sum(amount) AS total"],
        "group_by_columns": ["region"],
        "order_by_columns": [{"column": "region", "direction": "ASC"}]
    }));
    (all, sums)
}

fn expected_ids(appended: impl Iterator<Item = i64>) -> Vec<i64> {
    let mut ids: Vec<i64> = appended
        .flat_map(|n| [10 * n, 10 * n + 1, 10 * n + 2])
        .collect();
    ids.sort();
    ids
}

#[test]
fn appends_are_merged_on_their_own_and_read_the_same() {
    let (s, t) = start(&[
        ("RAPID_COMPACT_AUTO", "true"),
        ("RAPID_COMPACT_MIN_FILES", "4"),
        ("RAPID_COMPACT_IDLE_SECS", "1"),
    ]);
    let raws = appends(&s, &t, 10);
    // One file per partition once the version has been quiet for a second.
    wait_for_files(&s, 2);
    assert!(s.metric(&t, "rapid_compaction_total{figure=\"merges\"}") >= 2.0);
    let stored = ids(&stored_rows(&s.data_dir(), "default", "shop", "orders", 1));
    assert_eq!(stored, expected_ids(0..10), "no row lost or doubled");
    let (all, sums) = answers(&s, &t);
    assert_eq!(all.as_object().unwrap().len(), 30);
    assert_eq!(all["0"]["id"], 0);
    assert_eq!(all["29"]["id"], 92);
    assert_eq!(
        sums["0"],
        json!({"region": "north", "n": 20, "total": 455.0})
    );

    // `unique` still holds against merged files, for a value of the first append and the last.
    for id in [1, 91] {
        let csv = format!("{HEADER}east,{id},,,,\n").into_bytes();
        let (status, body) = s.upload(&t, ORDERS, "again.csv", csv);
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{id}: {body}");
    }

    // Deleting append 3 removes exactly its rows from the merged files, and frees its values.
    let (status, body) = s.call("DELETE", &format!("{ORDERS}/1/{}", raws[3]), Some(&t), None);
    assert_eq!(status, StatusCode::OK, "{body}");
    let stored = ids(&stored_rows(&s.data_dir(), "default", "shop", "orders", 1));
    assert_eq!(stored, expected_ids((0..10).filter(|n| *n != 3)));
    let (status, body) = s.call("DELETE", &format!("{ORDERS}/1/{}", raws[3]), Some(&t), None);
    assert_eq!(status, StatusCode::NOT_FOUND, "deleted once: {body}");
    let (_, job) = s.upload_and_wait(&t, ORDERS, "back.csv", append(3));
    assert_eq!(job["status"], "SUCCESS", "its ids are free again: {job}");
    let (status, _) = s.upload(
        &t,
        ORDERS,
        "dup.csv",
        format!("{HEADER}east,42,,,,\n").into_bytes(),
    );
    assert_eq!(
        status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "42 is stored once more"
    );
    let (all_after, sums_after) = answers(&s, &t);
    assert_eq!(
        (all_after, sums_after),
        (all, sums),
        "the same rows as before"
    );
}

#[test]
fn compaction_on_demand_is_a_compact_job_for_data_admins() {
    let (s, t) = start(&[("RAPID_COMPACT_AUTO", "false")]);
    appends(&s, &t, 4);
    let before = answers(&s, &t);
    assert_eq!(files(&s), 8, "nothing merges on its own");

    let reader = s.token_with("reader", &["READ_ALL"]);
    let (status, _) = s.call("POST", &format!("{ORDERS}/compact"), Some(&reader), None);
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _) = s.call(
        "POST",
        "/api/datasets/default/shop/nope/compact",
        Some(&t),
        None,
    );
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = s.call(
        "POST",
        &format!("{ORDERS}/compact?version=7"),
        Some(&t),
        None,
    );
    assert_eq!(status, StatusCode::NOT_FOUND);

    let (status, body) = s.call("POST", &format!("{ORDERS}/compact"), Some(&t), None);
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let job = s.wait_job(&t, body["details"]["job_id"].as_str().unwrap());
    assert_eq!(job["status"], "SUCCESS", "{job}");
    assert_eq!(job["type"], "COMPACT");
    assert_eq!(job["rows_processed"], 12);
    assert_eq!(files(&s), 2);
    assert_eq!(answers(&s, &t), before);
    // Both partitions' merges are one commit: a commit each made appends wait behind them.
    let commits = crate::history::history(&s, &t, ORDERS, "");
    let compacts: Vec<&Value> = commits
        .iter()
        .filter(|c| c["operation"] == "COMPACT")
        .collect();
    assert_eq!(compacts.len(), 1, "{commits:?}");
}

/// `rapid-rs admin compact` with the service stopped: busy while it runs, then merges, and the
/// restarted service reads the same rows.
#[test]
fn the_admin_command_compacts_a_stopped_data_folder() {
    let (s, t) = start(&[("RAPID_COMPACT_AUTO", "false")]);
    appends(&s, &t, 3);
    let before = answers(&s, &t);
    let busy = admin(&s.data_dir(), &["compact"]);
    assert_eq!(busy.status.code(), Some(4), "the service holds the folder");
    let data = s.data_dir();
    let dir = s.stop();
    let out = admin(&data, &["compact", "--dataset", "nope"]);
    assert!(!out.status.success());
    let report = stdout_json(&admin(&data, &["compact"]));
    assert_eq!(
        report["compacted"],
        json!({"versions": 1, "files_replaced": 6, "files_written": 2})
    );
    let s = TestServer::start_in(dir, Options::default());
    assert_eq!(files(&s), 2);
    let t = s.admin_token();
    assert_eq!(answers(&s, &t), before);
    let again = stdout_json(&admin(&s.stop().path().join("data"), &["compact"]));
    assert_eq!(again["compacted"]["versions"], 0, "nothing left to merge");
}

/// Planning skips the files a filter rules out by the bounds the manifest keeps for them: with
/// the first append's files gone from the disk, a filter those files cannot match still answers
/// (they are never opened), and one they might match fails.
#[test]
fn a_filter_opens_only_the_files_whose_bounds_it_may_match() {
    let (s, t) = start(&[("RAPID_COMPACT_AUTO", "false")]);
    let raws = appends(&s, &t, 3);
    let stem = raws[0].rsplit_once('.').unwrap().0;
    let gone: Vec<_> = parquet_files(&s.data_dir().join("data/default/shop/orders/1"))
        .into_iter()
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with(stem))
        .collect();
    assert_eq!(gone.len(), 2, "append 0 wrote one file per region");
    for path in &gone {
        std::fs::remove_file(path).unwrap();
    }
    let query = |filter: &str| {
        let body = json!({
            "select_columns": ["id"],
            "filter": filter,
            "order_by_columns": [{"column": "id"}]
        });
        s.call("POST", &format!("{ORDERS}/query"), Some(&t), Some(&body))
    };
    let ids_of = |answer: &Value| -> Vec<i64> {
        let rows = answer.as_object().unwrap();
        (0..rows.len())
            .map(|i| rows[&i.to_string()]["id"].as_i64().unwrap())
            .collect()
    };
    let (status, answer) = query("id >= 10");
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(ids_of(&answer), [10, 11, 12, 20, 21, 22]);
    let (status, answer) = query("region = 'south' AND id BETWEEN 5 AND 15");
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(ids_of(&answer), [12]);
    // Append 0's bounds admit id 1: its missing file is opened, and the query fails.
    let (status, answer) = query("id = 1");
    assert_ne!(status, StatusCode::OK, "{answer}");
}
