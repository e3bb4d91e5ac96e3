//! Commits as versions (issue 36) as a client sees them: every upload, overwrite, raw file
//! deletion and compaction is a commit in `GET .../history`; `/query` and `/query/large` read any
//! retained commit (`as_of_commit`, `as_of`) and name the commit read in `X-Rapid-Commit`, equal
//! to what the current read answered back then; retention removes what no kept commit needs.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::catalog_postgres::Database;
use crate::ops_admin::{admin, stdout_json};
use crate::stored::parquet_files;
use crate::support::{into_parts, schema_json, Options, TestServer};
use crate::uploads::{orders_schema, ORDERS};

const HEADER: &str = "region,id,day,amount,paid,note\n";

/// Append `n`: ids `10n` and `10n + 1` in north, `10n + 2` in south.
pub(crate) fn append(n: i64) -> Vec<u8> {
    let (a, b, c) = (10 * n, 10 * n + 1, 10 * n + 2);
    format!("{HEADER}north,{a},,{a}.5,true,x\nnorth,{b},,,,\nsouth,{c},,,false,\n").into_bytes()
}

pub(crate) fn start(env: &[(&str, &str)]) -> (TestServer, String) {
    let s = TestServer::start_with(Options {
        env: env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        ..Options::default()
    });
    let t = s.admin_token();
    (s, t)
}

/// Every row ordered by id, read with `params` (`?...` or ""): (status, commit header, answer).
pub(crate) fn read(
    s: &TestServer,
    t: &str,
    dataset: &str,
    params: &str,
) -> (StatusCode, Option<i64>, Value) {
    let res = s
        .request("POST", &format!("{dataset}/query{params}"))
        .bearer_auth(t)
        .json(&json!({"order_by_columns": [{"column": "id", "direction": "ASC"}]}))
        .send()
        .unwrap();
    let commit = res
        .headers()
        .get("x-rapid-commit")
        .map(|v| v.to_str().unwrap().parse().unwrap());
    let (status, body) = into_parts(res);
    (status, commit, body)
}

pub(crate) fn history(s: &TestServer, t: &str, dataset: &str, params: &str) -> Vec<Value> {
    let (status, body) = s.call("GET", &format!("{dataset}/history{params}"), Some(t), None);
    assert_eq!(status, StatusCode::OK, "{body}");
    body.as_array().unwrap().clone()
}

pub(crate) fn upload(s: &TestServer, t: &str, dataset: &str, csv: Vec<u8>) -> String {
    let (accepted, job) = s.upload_and_wait(t, dataset, "part.csv", csv);
    assert_eq!(job["status"], "SUCCESS", "{job}");
    accepted["raw_filename"].as_str().unwrap().to_string()
}

pub(crate) fn compact(s: &TestServer, t: &str) {
    let (status, body) = s.call("POST", &format!("{ORDERS}/compact"), Some(t), None);
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let job = s.wait_job(t, body["details"]["job_id"].as_str().unwrap());
    assert_eq!(job["status"], "SUCCESS", "{job}");
}

fn delete(s: &TestServer, t: &str, raw: &str) {
    let (status, body) = s.call("DELETE", &format!("{ORDERS}/1/{raw}"), Some(t), None);
    assert_eq!(status, StatusCode::OK, "{body}");
}

/// The current answer after each change, by the commit it read (1, 2, ...).
struct Seen(Vec<Value>);

impl Seen {
    /// Reads the current answer and checks it names the next commit.
    fn after_change(&mut self, s: &TestServer, t: &str, dataset: &str) {
        let (status, commit, answer) = read(s, t, dataset, "");
        assert_eq!(status, StatusCode::OK, "{answer}");
        self.0.push(answer);
        assert_eq!(commit, Some(self.0.len() as i64), "one commit per change");
    }

    /// Each commit read as of it answers what the current read answered then.
    fn as_of_each(&self, s: &TestServer, t: &str, dataset: &str) {
        for (n, then) in self.0.iter().enumerate() {
            let n = n as i64 + 1;
            let (status, commit, answer) = read(s, t, dataset, &format!("?as_of_commit={n}"));
            assert_eq!(status, StatusCode::OK, "{answer}");
            assert_eq!((commit, &answer), (Some(n), then), "as of commit {n}");
        }
    }
}

fn rows_of(answer: &Value) -> i64 {
    answer.as_object().unwrap().len() as i64
}

#[test]
fn every_change_is_a_commit_and_reads_as_of_it_answer_as_then() {
    every_change_read_back(Options::default());
}

/// The same on a PostgreSQL catalog (skipped without `RAPID_TEST_PG_URL`, see catalog_postgres).
#[test]
fn every_change_is_a_commit_on_postgres_too() {
    let Some(db) = Database::create("every_change_is_a_commit_on_postgres_too") else {
        return;
    };
    every_change_read_back(db.options());
}

fn every_change_read_back(mut options: Options) {
    options
        .env
        .push(("RAPID_HISTORY_KEEP_COMMITS".into(), "100".into()));
    let s = TestServer::start_with(options);
    let t = s.admin_token();
    s.create_schema(&orders_schema("APPEND"));
    let (status, commit, _) = read(&s, &t, ORDERS, "");
    assert_eq!((status, commit), (StatusCode::OK, Some(0)), "no commit yet");
    let mut seen = Seen(Vec::new());
    let mut raws = Vec::new();
    for n in 0..3 {
        raws.push(upload(&s, &t, ORDERS, append(n)));
        seen.after_change(&s, &t, ORDERS);
    }
    compact(&s, &t);
    // One merge a partition (north, south), both in one commit.
    seen.after_change(&s, &t, ORDERS);
    // Its rows were merged: the merged files are rewritten without them.
    delete(&s, &t, &raws[1]);
    seen.after_change(&s, &t, ORDERS);
    raws.push(upload(&s, &t, ORDERS, append(3)));
    seen.after_change(&s, &t, ORDERS);
    // Its rows are in its own files: they are retired.
    delete(&s, &t, &raws[3]);
    seen.after_change(&s, &t, ORDERS);
    seen.as_of_each(&s, &t, ORDERS);

    let commits = history(&s, &t, ORDERS, "");
    let listed: Vec<(i64, &str, Option<&str>, i64, i64)> = commits
        .iter()
        .map(|c| {
            (
                c["commit"].as_i64().unwrap(),
                c["operation"].as_str().unwrap(),
                c["raw_filename"].as_str(),
                c["rows_added"].as_i64().unwrap(),
                c["rows_removed"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        listed,
        [
            (7, "DELETE", Some(raws[3].as_str()), 0, 3),
            (6, "APPEND", Some(raws[3].as_str()), 3, 0),
            (5, "DELETE", Some(raws[1].as_str()), 0, 3),
            (4, "COMPACT", None, 0, 0),
            (3, "APPEND", Some(raws[2].as_str()), 3, 0),
            (2, "APPEND", Some(raws[1].as_str()), 3, 0),
            (1, "APPEND", Some(raws[0].as_str()), 3, 0),
        ]
    );
    let fields: Vec<&String> = commits[0].as_object().unwrap().keys().collect();
    let expected = [
        "commit",
        "committed_at",
        "operation",
        "subject",
        "raw_filename",
        "rows_added",
        "rows_removed",
    ];
    assert_eq!(fields, expected);
    assert_eq!(commits[0]["subject"], "testadmin", "who deleted it");
    assert_eq!(commits[3]["subject"], Value::Null, "the service compacted");
    assert_eq!(commits[6]["subject"], "testadmin", "who uploaded it");
    let net: i64 = commits
        .iter()
        .map(|c| c["rows_added"].as_i64().unwrap() - c["rows_removed"].as_i64().unwrap())
        .sum();
    assert_eq!(net, rows_of(seen.0.last().unwrap()), "the history adds up");

    let page: Vec<i64> = history(&s, &t, ORDERS, "?page=2&per_page=3")
        .iter()
        .map(|c| c["commit"].as_i64().unwrap())
        .collect();
    assert_eq!(page, [4, 3, 2]);
    assert_eq!(history(&s, &t, ORDERS, "?page=3&per_page=3").len(), 1);
    assert!(history(&s, &t, ORDERS, "?page=4&per_page=3").is_empty());
    as_of_by_time_and_refusals(&s, &t, &commits, &seen);
    large_query_as_of(&s, &t, &seen);
}

/// `as_of` reads the newest commit at or before a time; unknown commits, times before the first,
/// both parameters, bad times and bad pages are clear JSON errors.
fn as_of_by_time_and_refusals(s: &TestServer, t: &str, commits: &[Value], seen: &Seen) {
    let second = commits[5]["committed_at"].as_str().unwrap();
    let (status, commit, answer) = read(s, t, ORDERS, &format!("?as_of={second}"));
    assert_eq!((status, commit), (StatusCode::OK, Some(2)), "{answer}");
    assert_eq!(answer, seen.0[1]);
    let (_, commit, _) = read(s, t, ORDERS, "?as_of=2999-01-01T00:00:00%2B02:00");
    assert_eq!(commit, Some(7), "a later time reads the newest");
    for (params, wanted) in [
        ("?as_of_commit=8", StatusCode::NOT_FOUND),
        ("?as_of_commit=0", StatusCode::NOT_FOUND),
        ("?as_of=2000-01-01T00:00:00Z", StatusCode::NOT_FOUND),
        ("?as_of=yesterday", StatusCode::BAD_REQUEST),
        (
            "?as_of_commit=1&as_of=2000-01-01T00:00:00Z",
            StatusCode::BAD_REQUEST,
        ),
        ("?as_of_commit=x", StatusCode::BAD_REQUEST),
    ] {
        let (status, commit, body) = read(s, t, ORDERS, params);
        assert_eq!(status, wanted, "{params}: {body}");
        assert_eq!(commit, None, "{params}");
        assert!(body["details"].is_string(), "{params}: {body}");
    }
    for params in ["?page=0", "?per_page=0", "?per_page=1001"] {
        let (status, body) = s.call("GET", &format!("{ORDERS}/history{params}"), Some(t), None);
        assert_eq!(status, StatusCode::BAD_REQUEST, "{params}: {body}");
    }
    let (status, _) = s.call("GET", &format!("{ORDERS}/history?version=2"), Some(t), None);
    assert_eq!(status, StatusCode::NOT_FOUND);
}

/// `/query/large` as of commit 2: the job reads that commit's rows.
fn large_query_as_of(s: &TestServer, t: &str, seen: &Seen) {
    let res = s
        .request("POST", &format!("{ORDERS}/query/large?as_of_commit=2"))
        .bearer_auth(t)
        .json(&json!({}))
        .send()
        .unwrap();
    assert_eq!(res.headers()["x-rapid-commit"], "2");
    let (status, body) = into_parts(res);
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let job = s.wait_job(t, body["details"]["job_id"].as_str().unwrap());
    assert_eq!(job["status"], "SUCCESS", "{job}");
    let csv = reqwest::blocking::get(job["result_url"].as_str().unwrap())
        .unwrap()
        .text()
        .unwrap();
    assert_eq!(csv.lines().count() as i64 - 1, rows_of(&seen.0[1]));
}

#[test]
fn an_overwrite_is_a_commit_and_the_replaced_rows_stay_readable() {
    let (s, t) = start(&[("RAPID_HISTORY_KEEP_COMMITS", "100")]);
    s.create_schema(&schema_json(
        "shop",
        "stock",
        "PUBLIC",
        "OVERWRITE",
        json!([
            {"name": "region", "data_type": "string", "allow_null": false, "partition_index": 0},
            {"name": "id", "data_type": "int", "allow_null": false},
        ]),
    ));
    let stock = "/api/datasets/default/shop/stock";
    let mut seen = Seen(Vec::new());
    upload(
        &s,
        &t,
        stock,
        b"region,id\nnorth,1\nnorth,2\nsouth,3\n".to_vec(),
    );
    seen.after_change(&s, &t, stock);
    upload(&s, &t, stock, b"region,id\nnorth,4\n".to_vec());
    seen.after_change(&s, &t, stock);
    assert_eq!(rows_of(&seen.0[1]), 2, "north replaced, south kept");
    seen.as_of_each(&s, &t, stock);
    let listed: Vec<(String, i64, i64)> = history(&s, &t, stock, "")
        .iter()
        .map(|c| {
            (
                c["operation"].as_str().unwrap().to_string(),
                c["rows_added"].as_i64().unwrap(),
                c["rows_removed"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        listed,
        [("OVERWRITE".into(), 1, 2), ("OVERWRITE".into(), 3, 0)]
    );
    // Readers without READ on it get no history.
    let other = s.token_with("writer", &["WRITE_ALL"]);
    let (status, _) = s.call("GET", &format!("{stock}/history"), Some(&other), None);
    assert_eq!(status, StatusCode::FORBIDDEN);
}

/// Two commits kept: files only older commits listed are deleted from disk, those commits are
/// refused as expired, and `rapid-rs admin check` counts the kept files as listed.
#[test]
fn retention_deletes_what_no_kept_commit_reads() {
    let (s, t) = start(&[("RAPID_HISTORY_KEEP_COMMITS", "2")]);
    s.create_schema(&orders_schema("APPEND"));
    let version_dir = s.data_dir().join("data/default/shop/orders/1");
    let raws: Vec<String> = (0..3).map(|n| upload(&s, &t, ORDERS, append(n))).collect();
    assert_eq!(parquet_files(&version_dir).len(), 6);
    compact(&s, &t);
    // Commits 3 (the six appended files) and 4 (both partitions merged, one commit) are kept.
    assert_eq!(parquet_files(&version_dir).len(), 8);
    let (status, _, body) = read(&s, &t, ORDERS, "?as_of_commit=2");
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert!(
        body["details"].as_str().unwrap().contains("retention"),
        "{body}"
    );
    let (status, commit, body) = read(&s, &t, ORDERS, "?as_of_commit=3");
    assert_eq!((status, commit), (StatusCode::OK, Some(3)), "{body}");
    assert_eq!(rows_of(&body), 9);
    delete(&s, &t, &raws[0]);
    // Commits 4 and 5 are kept: the merged files (4) and their rewrites without raws[0] (5);
    // the appended files only commit 3 listed are deleted.
    assert_eq!(parquet_files(&version_dir).len(), 4);
    let (status, _, _) = read(&s, &t, ORDERS, "?as_of_commit=3");
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, commit, body) = read(&s, &t, ORDERS, "?as_of_commit=4");
    assert_eq!((status, commit), (StatusCode::OK, Some(4)));
    assert_eq!(rows_of(&body), 9);
    let (_, commit, body) = read(&s, &t, ORDERS, "");
    assert_eq!((commit, rows_of(&body)), (Some(5), 6));
    assert_eq!(
        history(&s, &t, ORDERS, "").len(),
        5,
        "the history itself stays"
    );
    let dir = s.stop();
    let report = stdout_json(&admin(&dir.path().join("data"), &["check"]));
    assert_eq!(
        report["report"]["listed"], 6,
        "4 data files and 2 raw files: {report}"
    );
    assert_eq!(report["report"]["unlisted"], json!([]), "{report}");
}

/// Rollback (DATA_ADMIN): a new commit reading as the commit rolled back to; the unique index
/// follows it; undone by another rollback; refused across a raw file deletion.
#[test]
fn rollback_is_a_commit_equal_to_an_earlier_one_and_is_undone_by_another() {
    rollback_and_undo(Options::default());
}

/// The same on a PostgreSQL catalog (skipped without `RAPID_TEST_PG_URL`).
#[test]
fn rollback_on_postgres_too() {
    let Some(db) = Database::create("rollback_on_postgres_too") else {
        return;
    };
    rollback_and_undo(db.options());
}

fn rollback_and_undo(mut options: Options) {
    options
        .env
        .push(("RAPID_HISTORY_KEEP_COMMITS".into(), "100".into()));
    let s = TestServer::start_with(options);
    let t = s.admin_token();
    s.create_schema(&orders_schema("APPEND"));
    let raws: Vec<String> = (0..2).map(|n| upload(&s, &t, ORDERS, append(n))).collect();
    let (_, _, at_two) = read(&s, &t, ORDERS, "");
    compact(&s, &t);
    upload(&s, &t, ORDERS, append(2));
    let (_, commit, at_four) = read(&s, &t, ORDERS, "");
    assert_eq!(commit, Some(4));

    let rollback = |to: &str, token: &str| {
        s.call(
            "POST",
            &format!("{ORDERS}/rollback?to_commit={to}"),
            Some(token),
            None,
        )
    };
    let reader = s.token_with("reader", &["READ_ALL"]);
    assert_eq!(rollback("2", &reader).0, StatusCode::FORBIDDEN);
    assert_eq!(rollback("99", &t).0, StatusCode::NOT_FOUND);
    assert_eq!(rollback("x", &t).0, StatusCode::BAD_REQUEST);
    let (status, body) = rollback("2", &t);
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["details"], json!({"commit": 5, "to_commit": 2}));
    let (_, commit, now) = read(&s, &t, ORDERS, "");
    assert_eq!((commit, &now), (Some(5), &at_two));
    // The unique index follows the rolled back rows: append 2's ids are free, append 0's not.
    let (status, _) = s.upload(&t, ORDERS, "again.csv", append(0));
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    upload(&s, &t, ORDERS, append(2));
    let (status, body) = rollback("4", &t);
    assert_eq!(status, StatusCode::OK, "{body}");
    let (_, commit, now) = read(&s, &t, ORDERS, "");
    assert_eq!((commit, &now), (Some(7), &at_four), "undone");
    let newest = &history(&s, &t, ORDERS, "?per_page=1")[0];
    assert_eq!(newest["operation"], "ROLLBACK");
    assert_eq!(newest["subject"], "testadmin");

    delete(&s, &t, &raws[1]);
    let (status, body) = rollback("7", &t);
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert!(
        body["details"].as_str().unwrap().contains(&raws[1]),
        "{body}"
    );
}

/// SQL names a retained commit after the table: `"orders@c1"` reads the latest schema version
/// as of commit 1, `"orders@v1@c1"` (once version 1 is an older one) version 1 as of commit 1;
/// an unknown commit is refused.
#[test]
fn sql_reads_a_table_as_of_a_commit() {
    let (s, t) = start(&[("RAPID_HISTORY_KEEP_COMMITS", "100")]);
    let schema = orders_schema("APPEND");
    s.create_schema(&schema);
    upload(&s, &t, ORDERS, append(1));
    upload(&s, &t, ORDERS, append(2));
    let count = |table: &str| {
        let sql = format!("SELECT count(*) AS n FROM \"default\".shop.\"{table}\"");
        s.call("POST", "/api/sql", Some(&t), Some(&json!({ "sql": sql })))
    };
    for (table, rows) in [("orders", 6), ("orders@c1", 3), ("orders@c2", 6)] {
        let (status, body) = count(table);
        assert_eq!(status, StatusCode::OK, "{table}: {body}");
        assert_eq!(body["0"]["n"], rows, "{table}: {body}");
    }
    // Version 2 starts empty; version 1 and its commits stay readable by their names.
    let (status, body) = s.call("PUT", "/api/schema", Some(&t), Some(&schema));
    assert_eq!(status, StatusCode::OK, "{body}");
    for (table, rows) in [("orders", 0), ("orders@v1", 6), ("orders@v1@c1", 3)] {
        let (status, body) = count(table);
        assert_eq!(status, StatusCode::OK, "{table}: {body}");
        assert_eq!(body["0"]["n"], rows, "{table}: {body}");
    }
    // A commit past the newest, and no commit 0: refused, never an empty answer.
    for table in ["orders@c9", "orders@c0"] {
        let (status, body) = count(table);
        assert!(status.is_client_error(), "{table}: {status} {body}");
    }
}
