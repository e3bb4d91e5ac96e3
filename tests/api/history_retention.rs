//! History retention where the schema says so (issue 36): `metadata.history` with `keep_commits`
//! and `keep_seconds` replaces `RAPID_HISTORY_KEEP_COMMITS` and `RAPID_HISTORY_KEEP_SECONDS` for
//! that dataset alone, after each commit as at the sweep; it is stored with the schema version,
//! shown by `/info` only when set, stated on the history page, and validated like every field.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::catalog_postgres::Database;
use crate::history::{append, read, upload};
use crate::stored::parquet_files;
use crate::support::{Options, TestServer, ADMIN_ID, ADMIN_SECRET};
use crate::uploads::orders_schema;
use crate::web_pages::Visitor;

/// The orders schema (OVERWRITE: every upload replaces both partitions' files) as `dataset`,
/// with `history` in its metadata when given.
fn schema(dataset: &str, history: Option<Value>) -> Value {
    let mut schema = orders_schema("OVERWRITE");
    schema["metadata"]["dataset"] = json!(dataset);
    if let Some(history) = history {
        schema["metadata"]["history"] = history;
    }
    schema
}

fn url(dataset: &str) -> String {
    format!("/api/datasets/default/shop/{dataset}")
}

/// Three overwrites of `dataset`; the number of data files then on disk for its version 1,
/// once it is `want` or after 10 s (retention runs after the commit its job reports).
fn three_commits(s: &TestServer, t: &str, dataset: &str, want: usize) -> usize {
    for n in 0..3 {
        upload(s, t, &url(dataset), append(n));
    }
    files_on_disk(s, dataset, 1, want)
}

/// The data files of `dataset`'s `version` on disk, once they are `want` or after 10 s.
fn files_on_disk(s: &TestServer, dataset: &str, version: i64, want: usize) -> usize {
    let dir = s
        .data_dir()
        .join(format!("data/default/shop/{dataset}/{version}"));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let found = parquet_files(&dir).len();
        if found == want || std::time::Instant::now() > deadline {
            return found;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Whether commit 1 of `dataset`'s version 1 is still readable (a refusal must be retention's).
fn first_commit_readable(s: &TestServer, t: &str, dataset: &str) -> bool {
    let (status, _, body) = read(s, t, &url(dataset), "?version=1&as_of_commit=1");
    if status == StatusCode::NOT_FOUND {
        let details = body["details"].as_str().unwrap();
        assert!(details.contains("retention"), "{body}");
        return false;
    }
    assert_eq!(status, StatusCode::OK, "{body}");
    true
}

fn start(mut options: Options, env: &[(&str, &str)]) -> (TestServer, String) {
    options
        .env
        .extend(env.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    let s = TestServer::start_with(options);
    let t = s.admin_token();
    (s, t)
}

#[test]
fn a_dataset_keeping_two_commits_expires_older_ones_while_others_keep_theirs() {
    fewer_than_the_settings(Options::default());
}

/// The same on a PostgreSQL catalog (skipped without `RAPID_TEST_PG_URL`, see catalog_postgres).
#[test]
fn a_dataset_keeping_two_commits_on_postgres_too() {
    let Some(db) = Database::create("a_dataset_keeping_two_commits_on_postgres_too") else {
        return;
    };
    fewer_than_the_settings(db.options());
}

fn fewer_than_the_settings(options: Options) {
    // The settings are the service's defaults: 100 commits, or a day (tests keep 1 otherwise).
    let defaults = [
        ("RAPID_HISTORY_KEEP_COMMITS", "100"),
        ("RAPID_HISTORY_KEEP_SECONDS", "86400"),
    ];
    let (s, t) = start(options, &defaults);
    let two = json!({"keep_commits": 2, "keep_seconds": 0});
    s.create_schema(&schema("short", Some(two.clone())));
    s.create_schema(&schema("usual", None));
    // Each overwrite replaces both partitions' files: 2 files a commit.
    assert_eq!(three_commits(&s, &t, "short", 4), 4, "commits 2 and 3 kept");
    assert_eq!(three_commits(&s, &t, "usual", 6), 6, "every commit kept");
    assert!(!first_commit_readable(&s, &t, "short"));
    assert!(first_commit_readable(&s, &t, "usual"));
    let (status, commit, _) = read(&s, &t, &url("short"), "?as_of_commit=2");
    assert_eq!((status, commit), (StatusCode::OK, Some(2)));

    // Stored with the schema version and shown only where set (rAPId's SDK reads /info).
    let (status, info) = s.call("GET", &format!("{}/info", url("short")), Some(&t), None);
    assert_eq!(status, StatusCode::OK, "{info}");
    assert_eq!(info["metadata"]["history"], two);
    let (_, info) = s.call("GET", &format!("{}/info", url("usual")), Some(&t), None);
    assert!(info["metadata"].get("history").is_none(), "{info}");

    // The history page states this dataset's retention, and the setting for the other.
    let mut v = Visitor::new(&s);
    v.sign_in_client(ADMIN_ID, ADMIN_SECRET);
    for (dataset, wanted) in [
        (
            "short",
            "<strong id=\"keep-commits\">2</strong> commits of a version (its",
        ),
        ("usual", "<strong id=\"keep-for\">1 day</strong>"),
    ] {
        let (_, _, res) = v.get(&format!("/datasets/default/shop/{dataset}/history"));
        assert_eq!(res.status(), StatusCode::OK);
        let page = res.text().unwrap();
        assert!(page.contains(wanted), "{dataset}: {page}");
    }
}

#[test]
fn a_dataset_keeping_more_than_the_settings_keeps_its_commits() {
    let settings = [
        ("RAPID_HISTORY_KEEP_COMMITS", "1"),
        ("RAPID_HISTORY_KEEP_SECONDS", "0"),
    ];
    let (s, t) = start(Options::default(), &settings);
    s.create_schema(&schema("long", Some(json!({"keep_commits": 10}))));
    s.create_schema(&schema("usual", None));
    assert_eq!(three_commits(&s, &t, "long", 6), 6, "every commit kept");
    assert_eq!(
        three_commits(&s, &t, "usual", 2),
        2,
        "only the current commit"
    );
    assert!(first_commit_readable(&s, &t, "long"));
    assert!(!first_commit_readable(&s, &t, "usual"));

    // A new schema version without it has the settings' retention; version 1 keeps its own.
    let (status, body) = s.call("PUT", "/api/schema", Some(&t), Some(&schema("long", None)));
    assert_eq!(status, StatusCode::OK, "{body}");
    upload(&s, &t, &url("long"), append(5));
    let (_, info) = s.call(
        "GET",
        &format!("{}/info?version=1", url("long")),
        Some(&t),
        None,
    );
    assert_eq!(info["metadata"]["history"], json!({"keep_commits": 10}));
    let (status, info) = s.call(
        "GET",
        &format!("{}/info?version=2", url("long")),
        Some(&t),
        None,
    );
    assert_eq!(status, StatusCode::OK, "{info}");
    assert!(info["metadata"].get("history").is_none(), "{info}");
    upload(&s, &t, &format!("{}?version=1", url("long")), append(7));
    assert_eq!(
        files_on_disk(&s, "long", 1, 8),
        8,
        "version 1 keeps 10 commits"
    );
    assert!(first_commit_readable(&s, &t, "long"));
}

#[test]
fn bad_history_values_are_refused_with_clear_messages() {
    let s = TestServer::start();
    let t = s.admin_token();
    for (history, fragment) in [
        (
            json!({"keep_commits": 0}),
            "keep_commits [0] must be from 1",
        ),
        (json!({"keep_commits": 1_000_001}), "to 1000000"),
        (
            json!({"keep_seconds": -1}),
            "keep_seconds [-1] must be from 0",
        ),
        (json!({"keep_seconds": 4_000_000_000_i64}), "(100 years)"),
        (json!({"keep_commits": "2"}), "Invalid request body"),
        (json!({"keep_commits": 2.5}), "Invalid request body"),
        (json!({"keep_commit": 2}), "unknown field `keep_commit`"),
        (json!([2]), "metadata.history must be an object"),
    ] {
        let body = schema("bad", Some(history.clone()));
        let (status, answer) = s.call("POST", "/api/schema", Some(&t), Some(&body));
        assert_eq!(status, StatusCode::BAD_REQUEST, "{history}: {answer}");
        let text = answer["details"].to_string();
        assert!(text.contains(fragment), "{history}: {answer}");
    }
    // Both wrong at once: both reported.
    let body = schema("bad", Some(json!({"keep_commits": -3, "keep_seconds": -4})));
    let (status, answer) = s.call("POST", "/api/schema", Some(&t), Some(&body));
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert_eq!(
        answer["details"].as_array().map(Vec::len),
        Some(2),
        "{answer}"
    );
}
