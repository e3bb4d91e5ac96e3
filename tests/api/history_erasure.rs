//! Retention and erasure (issue 36) shown by the files left in the lake: with few commits kept,
//! the Parquet files left on disk (or in the bucket) are exactly those the retained commits
//! list; deleting a raw file with `?erase=true` takes its rows out of every retained commit: the
//! as-of reads, every Parquet file left, every Delta version (read back by `deltalake`) lack
//! them, the history says ERASE, and a rollback across it is refused.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use arrow::array::AsArray;
use arrow::datatypes::Int64Type;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use rapid_actors::storage::{ObjectStorage, S3Objects};
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::catalog_postgres::Database;
use crate::history::{append, compact, history, read, upload};
use crate::ops_admin::{admin, stdout_json};
use crate::pyarrow_readback::python;
use crate::storage_s3::{bucket_url, server, Bucket};
use crate::support::{Options, TestServer};
use crate::uploads::{orders_schema, ORDERS};

/// The orders table's root, in the data folder or under the bucket's prefix.
const TABLE: &str = "data/default/shop/orders/1";

/// The lake as a reader without the service sees it: the data folder or the bucket.
enum Lake {
    Disk(std::path::PathBuf),
    Bucket(Arc<S3Objects>),
}

impl Lake {
    fn disk(s: &TestServer) -> Lake {
        Lake::Disk(s.data_dir().join(TABLE))
    }

    fn bucket(bucket: &Bucket) -> Lake {
        Lake::Bucket(bucket.0.clone())
    }

    /// Every object under the table's root, by its path relative to the root.
    fn list(&self) -> Vec<String> {
        fn walk(dir: &Path, root: &Path, out: &mut Vec<String>) {
            if let Ok(entries) = std::fs::read_dir(dir) {
                for e in entries {
                    let p = e.unwrap().path();
                    if p.is_dir() {
                        walk(&p, root, out);
                    } else {
                        out.push(p.strip_prefix(root).unwrap().to_str().unwrap().to_string());
                    }
                }
            }
        }
        let mut out = Vec::new();
        match self {
            Lake::Disk(root) => walk(root, root, &mut out),
            Lake::Bucket(objects) => {
                for o in objects.list(TABLE).unwrap() {
                    out.push(
                        o.key
                            .strip_prefix(&format!("{TABLE}/"))
                            .unwrap()
                            .to_string(),
                    );
                }
            }
        }
        out.sort();
        out
    }

    fn read(&self, rel: &str) -> Vec<u8> {
        match self {
            Lake::Disk(root) => std::fs::read(root.join(rel)).unwrap(),
            Lake::Bucket(objects) => objects.read_all(&format!("{TABLE}/{rel}")).unwrap(),
        }
    }

    /// The Parquet files left.
    fn parquet(&self) -> BTreeSet<String> {
        self.list()
            .into_iter()
            .filter(|p| p.ends_with(".parquet"))
            .collect()
    }

    /// Every id held by the Parquet files left, with how many times.
    fn stored_ids(&self) -> BTreeMap<i64, usize> {
        let mut ids = BTreeMap::new();
        for path in self.parquet() {
            let bytes = bytes::Bytes::from(self.read(&path));
            for batch in ParquetRecordBatchReaderBuilder::try_new(bytes)
                .unwrap()
                .build()
                .unwrap()
            {
                let batch = batch.unwrap();
                let col = batch.column_by_name("id").unwrap();
                for id in col.as_primitive::<Int64Type>().iter() {
                    *ids.entry(id.unwrap()).or_insert(0) += 1;
                }
            }
        }
        ids
    }

    /// The files each Delta version lists (replaying the log), by catalog commit: Delta
    /// version 0 names its commit (`commitInfo.rapidCommit`), version `v` is that commit + `v`.
    fn delta_files(&self) -> BTreeMap<i64, BTreeSet<String>> {
        let logs: Vec<String> = self
            .list()
            .into_iter()
            .filter(|p| p.starts_with("_delta_log/") && p.ends_with(".json"))
            .collect();
        let mut first = None;
        let mut live = BTreeSet::new();
        let mut by_commit = BTreeMap::new();
        for (v, log) in logs.iter().enumerate() {
            assert_eq!(log, &format!("_delta_log/{v:020}.json"), "{logs:?}");
            let text = String::from_utf8(self.read(log)).unwrap();
            for line in text.lines() {
                let action: Value = serde_json::from_str(line).unwrap();
                if let Some(n) = action["commitInfo"]["rapidCommit"].as_i64() {
                    first.get_or_insert(n);
                }
                if let Some(path) = action["add"]["path"].as_str() {
                    live.insert(path.replace("%25", "%"));
                }
                if let Some(path) = action["remove"]["path"].as_str() {
                    live.remove(&path.replace("%25", "%"));
                }
            }
            by_commit.insert(first.unwrap() + v as i64, live.clone());
        }
        by_commit
    }
}

/// The oldest commit still readable (as of), with the newest.
fn retained(s: &TestServer, t: &str) -> (i64, i64) {
    let (_, latest, _) = read(s, t, ORDERS, "");
    let latest = latest.unwrap();
    let floor = (1..=latest)
        .find(|n| read(s, t, ORDERS, &format!("?as_of_commit={n}")).0 == StatusCode::OK)
        .unwrap();
    (floor, latest)
}

fn ids(answer: &Value) -> Vec<i64> {
    let mut ids: Vec<i64> = answer
        .as_object()
        .unwrap()
        .values()
        .map(|row| row["id"].as_i64().unwrap())
        .collect();
    ids.sort();
    ids
}

/// The files left are exactly those the retained commits list (as the Delta log gives them),
/// and the commits the log keeps from the floor on are the retained ones.
fn only_retained_files_left(s: &TestServer, t: &str, lake: &Lake) {
    let (floor, latest) = retained(s, t);
    let listed = lake.delta_files();
    assert_eq!(listed.keys().last(), Some(&latest));
    let wanted: BTreeSet<String> = listed
        .range(floor..=latest)
        .flat_map(|(_, files)| files.iter().cloned())
        .collect();
    assert_eq!(
        lake.parquet(),
        wanted,
        "files left vs files of commits {floor}..={latest}"
    );
}

/// KEEP_COMMITS=2: after appends, a compaction and a raw file deletion (commits that replace
/// files), what is left is what commits N-1 and N list.
fn retention(options: Options, lake: impl Fn(&TestServer) -> Lake) {
    let s = TestServer::start_with(options);
    let t = s.admin_token();
    s.create_schema(&orders_schema("APPEND"));
    let raws: Vec<String> = (0..3).map(|n| upload(&s, &t, ORDERS, append(n))).collect();
    only_retained_files_left(&s, &t, &lake(&s));
    compact(&s, &t);
    only_retained_files_left(&s, &t, &lake(&s));
    let (status, body) = s.call("DELETE", &format!("{ORDERS}/1/{}", raws[0]), Some(&t), None);
    assert_eq!(status, StatusCode::OK, "{body}");
    upload(&s, &t, ORDERS, append(3));
    let lake = lake(&s);
    only_retained_files_left(&s, &t, &lake);
    assert_eq!(retained(&s, &t), (5, 6));
    // Commit 5 (the deletion) and 6: appends 1 and 2 in rewritten merged files, append 3.
    assert_eq!(
        lake.stored_ids().keys().copied().collect::<Vec<_>>(),
        [10, 11, 12, 20, 21, 22, 30, 31, 32]
    );
}

#[test]
fn retention_leaves_exactly_the_files_of_retained_commits_on_disk() {
    retention(keep("2"), Lake::disk);
}

#[test]
fn retention_leaves_exactly_the_files_of_retained_commits_in_the_bucket() {
    let Some(url) = bucket_url() else { return };
    let bucket = Bucket::open(&url);
    let mut options = server(&url, &[]);
    options.env.extend(keep("2").env);
    retention(options, |_| Lake::bucket(&bucket));
}

fn keep(n: &str) -> Options {
    Options {
        env: vec![("RAPID_HISTORY_KEEP_COMMITS".into(), n.into())],
        ..Options::default()
    }
}

/// Appends 0-2, a compaction merging their rows (commit 4, both partitions), appends 3 and 4,
/// then append 1's raw file deleted with erasure (commit 7): no retained commit, file
/// or Delta version holds ids 10-12 any more, every other row stays.
fn erasure(
    options: Options,
    lake: impl Fn(&TestServer) -> Lake,
    delta_read_back: bool,
    sqlite_on_disk: bool,
) {
    let s = TestServer::start_with(options);
    let t = s.admin_token();
    s.create_schema(&orders_schema("APPEND"));
    let raws: Vec<String> = (0..3).map(|n| upload(&s, &t, ORDERS, append(n))).collect();
    compact(&s, &t);
    upload(&s, &t, ORDERS, append(3));
    upload(&s, &t, ORDERS, append(4));
    let before: Vec<Vec<i64>> = (1..=6)
        .map(|n| ids(&read(&s, &t, ORDERS, &format!("?as_of_commit={n}")).2))
        .collect();
    let counts: Vec<usize> = before.iter().map(Vec::len).collect();
    assert_eq!(counts, [3, 6, 9, 9, 12, 15]);
    assert!(
        lake(&s).stored_ids().contains_key(&11),
        "append 1 is stored"
    );

    let (status, body) = s.call(
        "DELETE",
        &format!("{ORDERS}/1/{}?erase=true", raws[1]),
        Some(&t),
        None,
    );
    assert_eq!(status, StatusCode::OK, "{body}");
    let erased = [10, 11, 12];

    // As of every commit: the same rows less append 1's (counts add up).
    for n in 1..=7 {
        let (status, commit, answer) = read(&s, &t, ORDERS, &format!("?as_of_commit={n}"));
        assert_eq!((status, commit), (StatusCode::OK, Some(n)), "{answer}");
        let then = &before[(n as usize - 1).min(5)];
        let kept: Vec<i64> = then
            .iter()
            .copied()
            .filter(|id| !erased.contains(id))
            .collect();
        assert_eq!(ids(&answer), kept, "as of commit {n}");
        let lost = if n == 1 { 0 } else { 3 };
        assert_eq!(ids(&answer).len() + lost, then.len(), "commit {n}");
    }

    // No file left holds its rows; every other row is stored once at least.
    let lake = lake(&s);
    let stored = lake.stored_ids();
    for id in erased {
        assert!(
            !stored.contains_key(&id),
            "id {id} still stored: {stored:?}"
        );
    }
    for id in (0..5).flat_map(|n| [10 * n, 10 * n + 1, 10 * n + 2]) {
        assert!(erased.contains(&id) || stored.contains_key(&id), "id {id}");
    }
    only_retained_files_left(&s, &t, &lake);

    // The history says so.
    let newest = &history(&s, &t, ORDERS, "?per_page=1")[0];
    assert_eq!(newest["operation"], "ERASE", "{newest}");
    assert_eq!(newest["raw_filename"], raws[1].as_str(), "{newest}");
    assert_eq!(newest["rows_removed"], 3, "{newest}");

    // Rollback across it is refused; erasing it again is a 404.
    let (status, body) = s.call(
        "POST",
        &format!("{ORDERS}/rollback?to_commit=6"),
        Some(&t),
        None,
    );
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    let (status, body) = s.call(
        "DELETE",
        &format!("{ORDERS}/1/{}?erase=true", raws[1]),
        Some(&t),
        None,
    );
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");

    // Delta readers: no version holds its rows, each equal to our as-of answer.
    if delta_read_back {
        let mut script = Command::new(python());
        script
            .arg(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/python/delta_read.py"
            ))
            .arg("deltalake")
            .arg(s.data_dir().join(TABLE))
            .args(["0", "1", "2", "3", "4", "5", "6"]);
        let out = script.output().expect("run python");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let theirs: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(theirs["latest"], json!(6), "{theirs}");
        for v in 0..7 {
            let delta_ids: Vec<i64> = theirs[v.to_string()]["rows"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["id"].as_i64().unwrap())
                .collect();
            let ours = ids(&read(&s, &t, ORDERS, &format!("?as_of_commit={}", v + 1)).2);
            assert_eq!(delta_ids, ours, "Delta version {v}");
        }
    }

    // `admin check`: nothing unlisted left behind (no old object holding the rows), and the
    // Delta log agrees with the catalog (drift would exit 3).
    if sqlite_on_disk {
        let dir = s.stop();
        let report = stdout_json(&admin(&dir.path().join("data"), &["check"]));
        assert_eq!(report["report"]["unlisted"], json!([]), "{report}");
    }
}

#[test]
fn erasure_removes_a_raw_files_rows_from_every_retained_commit_on_disk() {
    erasure(keep("100"), Lake::disk, true, true);
}

/// The same on a PostgreSQL catalog (skipped without `RAPID_TEST_PG_URL`).
#[test]
fn erasure_on_postgres_too() {
    let Some(db) = Database::create("erasure_on_postgres_too") else {
        return;
    };
    let mut options = db.options();
    options.env.extend(keep("100").env);
    erasure(options, Lake::disk, true, false);
}

#[test]
fn erasure_removes_a_raw_files_rows_from_every_object_in_the_bucket() {
    let Some(url) = bucket_url() else { return };
    let bucket = Bucket::open(&url);
    let mut options = server(&url, &[]);
    options.env.extend(keep("100").env);
    erasure(options, |_| Lake::bucket(&bucket), false, false);
}
