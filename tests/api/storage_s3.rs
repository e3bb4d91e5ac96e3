//! The real server keeping its objects in an S3-compatible bucket (`--storage-url s3://...`):
//! uploads land in the bucket as Hive-partitioned Parquet beside the raw file, queries read
//! them from there, large-query results download from there, deleting a dataset empties its
//! prefixes, and start-up sweeps only unlisted objects older than the grace period.
//! Runs against `RAPID_TEST_S3_URL` (+ `AWS_*`; `scripts/garage.sh` starts Garage); skipped
//! with a line when unset, unless `RAPID_REQUIRE_S3=1`.

use std::sync::Arc;
use std::time::Duration;

use rapid_actors::storage::{ObjectStorage, S3Objects, StagedObject};
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::support::{schema_json, Options, TestServer};

const DATASET: &str = "/api/datasets/default/lake/trips";

/// A fresh prefix of the test bucket, or `None` after saying why the test is skipped.
pub(crate) fn bucket_url() -> Option<String> {
    let url = match std::env::var("RAPID_TEST_S3_URL") {
        Ok(url) if !url.trim().is_empty() => url.trim().trim_end_matches('/').to_string(),
        _ if std::env::var("RAPID_REQUIRE_S3").is_ok_and(|v| v == "1") => {
            panic!("RAPID_REQUIRE_S3=1 but RAPID_TEST_S3_URL is not set (scripts/garage.sh)")
        }
        _ => {
            eprintln!("skipped: RAPID_TEST_S3_URL is not set (source scripts/garage.sh to run the S3 tests)");
            return None;
        }
    };
    Some(format!("{url}/api-{}", uuid::Uuid::new_v4().simple()))
}

/// The bucket as the test sees it, emptied when the test ends.
pub(crate) struct Bucket(pub(crate) Arc<S3Objects>);

impl Bucket {
    pub(crate) fn open(url: &str) -> Bucket {
        Bucket(Arc::new(
            S3Objects::from_url(url, Duration::from_secs(3600)).unwrap(),
        ))
    }

    pub(crate) fn keys(&self, prefix: &str) -> Vec<String> {
        let listed = self.0.list(prefix).unwrap();
        listed.into_iter().map(|o| o.key).collect()
    }
}

impl Drop for Bucket {
    fn drop(&mut self) {
        let _ = self.0.delete_prefix("");
    }
}

pub(crate) fn server(url: &str, extra: &[&str]) -> Options {
    let mut args = vec!["--storage-url".to_string(), url.to_string()];
    args.extend(extra.iter().map(|a| a.to_string()));
    Options {
        args,
        ..Options::default()
    }
}

fn create_trips(s: &TestServer) {
    s.create_schema(&schema_json(
        "lake",
        "trips",
        "PUBLIC",
        "APPEND",
        json!([
            {"name": "region", "data_type": "string", "allow_null": false, "partition_index": 0},
            {"name": "n", "data_type": "int", "allow_null": false},
            {"name": "city", "data_type": "string", "allow_null": true}
        ]),
    ));
}

fn trips_csv(rows: usize) -> Vec<u8> {
    let mut csv = String::from("region,n,city\n");
    for i in 0..rows {
        let region = ["north", "São Paulo", "a/b"][i % 3];
        csv.push_str(&format!("{region},{i},\"city, {i}\"\n"));
    }
    csv.into_bytes()
}

fn count(s: &TestServer, t: &str) -> Value {
    let body = json!({"select_columns": ["count(*) AS trips", "sum(n) AS total"]});
    let (status, answer) = s.call("POST", &format!("{DATASET}/query"), Some(t), Some(&body));
    assert_eq!(status, StatusCode::OK, "{answer}");
    answer["0"].clone()
}

#[test]
fn uploads_queries_results_and_deletes_go_through_the_bucket() {
    let Some(url) = bucket_url() else { return };
    let bucket = Bucket::open(&url);
    let s = TestServer::start_with(server(&url, &[]));
    let t = s.admin_token();
    create_trips(&s);
    let (_, job) = s.upload_and_wait(&t, DATASET, "trips.csv", trips_csv(3000));
    assert_eq!(job["status"], "SUCCESS", "{job}");
    assert_eq!(count(&s, &t), json!({"trips": 3000, "total": 4_498_500}));
    // The commit's Delta log version is written just after its job's SUCCESS.
    let until = std::time::Instant::now() + Duration::from_secs(10);
    while bucket
        .keys("data/default/lake/trips/1/_delta_log")
        .is_empty()
        && std::time::Instant::now() < until
    {
        std::thread::sleep(Duration::from_millis(20));
    }

    // The raw file and one Parquet file per partition, Hive-encoded, are in the bucket; the
    // data folder keeps none of them.
    let raw = bucket.keys("raw");
    assert_eq!(raw.len(), 1, "{raw:?}");
    assert!(raw[0].starts_with("raw/default/lake/trips/1/") && raw[0].ends_with("-trips.csv"));
    assert_eq!(
        bucket.0.size(&raw[0]).unwrap(),
        trips_csv(3000).len() as u64
    );
    // The version's Delta log beside them (tests/api/delta_log.rs reads it).
    let log = bucket.keys("data/default/lake/trips/1/_delta_log");
    assert_eq!(
        log,
        ["data/default/lake/trips/1/_delta_log/00000000000000000000.json"]
    );
    let data: Vec<String> = bucket
        .keys("data/default/lake/trips/1")
        .into_iter()
        .filter(|k| !log.contains(k))
        .collect();
    let folders: Vec<&str> = data.iter().map(|k| k.rsplit_once('/').unwrap().0).collect();
    assert_eq!(
        folders,
        [
            "data/default/lake/trips/1/region=S%C3%A3o%20Paulo",
            "data/default/lake/trips/1/region=a%2Fb",
            "data/default/lake/trips/1/region=north",
        ]
    );
    assert!(data.iter().all(|k| k.ends_with(".parquet")));
    for local in ["data", "raw", "results"] {
        assert!(
            !s.data_dir().join(local).exists(),
            "{local} in the data folder"
        );
    }

    // A large query's result is kept in the bucket and downloads through its link.
    let (status, body) = s.call(
        "POST",
        &format!("{DATASET}/query/large"),
        Some(&t),
        Some(&json!({"filter": "n >= 2998", "order_by_columns": [{"column": "n"}]})),
    );
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let job = s.wait_job(&t, body["details"]["job_id"].as_str().unwrap());
    assert_eq!(job["status"], "SUCCESS", "{job}");
    let job_id = job["job_id"].as_str().unwrap();
    assert_eq!(bucket.keys("results"), [format!("results/{job_id}.csv")]);
    let res = reqwest::blocking::get(job["result_url"].as_str().unwrap()).unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(
        res.text().unwrap(),
        ",region,n,city\n0,São Paulo,2998,\"city, 2998\"\n1,a/b,2999,\"city, 2999\"\n"
    );

    // Deleting the dataset removes its objects.
    let (status, body) = s.call("DELETE", DATASET, Some(&t), None);
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    assert!(bucket.keys("data").is_empty(), "{:?}", bucket.keys("data"));
    assert!(bucket.keys("raw").is_empty(), "{:?}", bucket.keys("raw"));
}

#[test]
fn start_up_sweeps_only_unlisted_objects_past_the_grace() {
    let Some(url) = bucket_url() else { return };
    let bucket = Bucket::open(&url);
    let s = TestServer::start_with(server(&url, &[]));
    let t = s.admin_token();
    create_trips(&s);
    let (_, job) = s.upload_and_wait(&t, DATASET, "trips.csv", trips_csv(30));
    assert_eq!(job["status"], "SUCCESS", "{job}");
    // The commit's Delta log version is written just after its job's SUCCESS.
    let log = "data/default/lake/trips/1/_delta_log/00000000000000000000.json";
    let until = std::time::Instant::now() + Duration::from_secs(10);
    while !bucket.0.exists(log).unwrap() && std::time::Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    let committed = bucket.keys("");
    assert!(committed.iter().any(|k| k == log), "{committed:?}");

    // An object no catalog row lists: another node's commit in flight, or a crash's leftover.
    let stray = "data/default/lake/trips/1/region=north/20260101T000000000Z-0badc0de-x-0.parquet";
    let staged = s.dir.path().join("stray.parquet");
    std::fs::write(&staged, b"not yet committed").unwrap();
    bucket
        .0
        .put(&[StagedObject {
            staged,
            key: stray.into(),
        }])
        .unwrap();

    // Young: a restart with the default grace keeps it, and queries do not see it.
    let s = TestServer::start_in(s.stop(), server(&url, &[]));
    assert!(bucket.0.exists(stray).unwrap());
    assert_eq!(count(&s, &t), json!({"trips": 30, "total": 435}));

    // With no grace it is swept at start-up; the committed objects stay.
    let s = TestServer::start_in(s.stop(), server(&url, &["--sweep-grace-secs", "0"]));
    assert!(!bucket.0.exists(stray).unwrap());
    assert_eq!(bucket.keys(""), committed);
    assert_eq!(count(&s, &t), json!({"trips": 30, "total": 435}));
    assert!(s.logs().contains("removed_files=1"), "{}", s.logs());
}
