//! Growth: the same rows as one upload and as K appends, against a release server over loopback.
//! Prints the median time to SUCCESS of the first and of the last 25 appends, the Parquet files
//! stored, and q1/q2 (as `benches/query.rs`) on both datasets.
//!
//! cargo bench --bench growth    # BENCH_APPENDS (default 2,000), BENCH_APPEND_ROWS (500),
//!                               # BENCH_UNIQUE=0 for no unique column (default: `id` unique)

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use reqwest::blocking::Client;
use serde_json::{json, Value};

const ID: &str = "bench-admin";
const SECRET: &str = "bench-admin-secret-0123456789abcdef";
/// The `rapid-rs bench` schema's partitioning: 20 categories.
const CATEGORIES: usize = 20;
/// How many appends are timed at each end.
const ENDS: usize = 25;

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Rows `first..first + n` as CSV (ids in random order, so min/max per file prune nothing).
fn rows(first: u64, n: u64, header: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(n as usize * 48);
    if header {
        writeln!(out, "category,id,price,qty,region").unwrap();
    }
    for i in first..first + n {
        // A bijection on 0..2^32 (odd multiplier): distinct ids, scattered.
        let id = (i.wrapping_mul(2_654_435_761)) & 0xFFFF_FFFF;
        let x = id ^ (id >> 7);
        writeln!(
            out,
            "c{},{id},{}.{:02},{},r{}",
            x % CATEGORIES as u64,
            x % 1000,
            (x >> 10) % 100,
            (x >> 20) % 50,
            (x >> 30) % 20
        )
        .unwrap();
    }
    out
}

struct Bench {
    http: Client,
    base: String,
    token: String,
}

impl Bench {
    fn create(&self, dataset: &str, unique: bool) {
        let schema = json!({
            "metadata": {"domain": "bench", "dataset": dataset, "sensitivity": "PUBLIC",
                         "owners": [{"name": "Bench", "email": "bench@example.com"}]},
            "columns": [
                {"name": "category", "data_type": "string", "allow_null": false, "partition_index": 0},
                {"name": "id", "data_type": "int", "allow_null": false, "unique": unique},
                {"name": "price", "data_type": "double", "allow_null": true},
                {"name": "qty", "data_type": "int", "allow_null": true},
                {"name": "region", "data_type": "string", "allow_null": true}
            ]
        });
        let status = self
            .http
            .post(format!("{}/api/schema", self.base))
            .bearer_auth(&self.token)
            .json(&schema)
            .send()
            .unwrap()
            .status();
        assert_eq!(status, 201);
    }

    /// Uploads `csv` to `dataset`; the time until its job is SUCCESS.
    fn upload(&self, dataset: &str, csv: Vec<u8>) -> Duration {
        let part = reqwest::blocking::multipart::Part::bytes(csv).file_name("part.csv");
        let form = reqwest::blocking::multipart::Form::new().part("file", part);
        let t = Instant::now();
        let res: Value = self
            .http
            .post(format!(
                "{}/api/datasets/default/bench/{dataset}",
                self.base
            ))
            .bearer_auth(&self.token)
            .multipart(form)
            .send()
            .unwrap()
            .json()
            .unwrap();
        let job_id = res["details"]["job_id"].as_str().expect("202").to_string();
        let (deadline, poll) = (Duration::from_secs(3600), Duration::from_millis(2));
        let job =
            rapid_testkit::wait_job(&self.http, &self.base, &self.token, &job_id, deadline, poll);
        assert_eq!(job["status"], "SUCCESS", "{job}");
        t.elapsed()
    }

    fn query(&self, dataset: &str, body: &Value) -> Duration {
        let t = Instant::now();
        let res = self
            .http
            .post(format!(
                "{}/api/datasets/default/bench/{dataset}/query",
                self.base
            ))
            .bearer_auth(&self.token)
            .json(body)
            .send()
            .unwrap();
        assert_eq!(res.status(), 200);
        let _ = res.bytes().unwrap();
        t.elapsed()
    }

    /// Medians of q1 and q2 over 21 runs after a warm-up, in ms.
    fn queries(&self, dataset: &str) -> (f64, f64) {
        let q1 = json!({"select_columns": ["id", "price", "qty"], "filter": "category = 'c7'", "limit": 1000});
        let q2 = json!({"select_columns": ["category", "avg(price) AS mean"], "group_by_columns": ["category"],
                        "aggregation_conditions": "avg(price) > 1", "order_by_columns": [{"column": "category"}]});
        (
            median_ms(|| self.query(dataset, &q1)),
            median_ms(|| self.query(dataset, &q2)),
        )
    }
}

fn median_ms(mut f: impl FnMut() -> Duration) -> f64 {
    f();
    let mut times: Vec<f64> = (0..21).map(|_| f().as_secs_f64() * 1000.0).collect();
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    times[times.len() / 2]
}

fn median(times: &[Duration]) -> f64 {
    let mut ms: Vec<f64> = times.iter().map(|t| t.as_secs_f64() * 1000.0).collect();
    ms.sort_by(|a, b| a.partial_cmp(b).unwrap());
    ms[ms.len() / 2]
}

fn parquet_files(dir: &std::path::Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| {
            let path = e.path();
            if path.is_dir() {
                parquet_files(&path)
            } else {
                usize::from(path.extension().is_some_and(|x| x == "parquet"))
            }
        })
        .sum()
}

fn main() {
    let appends = env_or("BENCH_APPENDS", 2000) as usize;
    let per_append = env_or("BENCH_APPEND_ROWS", 500);
    let unique = env_or("BENCH_UNIQUE", 1) == 1;
    assert!(
        appends >= 2 * ENDS,
        "BENCH_APPENDS must be at least {}",
        2 * ENDS
    );
    let total = appends as u64 * per_append;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let (mut server, base) = rapid_testkit::spawn_server(
        Command::new(env!("CARGO_BIN_EXE_rapid-rs"))
            .args(["serve", "--bind", "127.0.0.1:0", "--log-level", "warn"])
            .arg("--data-dir")
            .arg(&data)
            .env("RAPID_ADMIN_CLIENT_ID", ID)
            .env("RAPID_ADMIN_CLIENT_SECRET", SECRET)
            .stdout(Stdio::piped()),
    )
    .unwrap();
    let http = Client::builder()
        .timeout(Duration::from_secs(3600))
        .build()
        .unwrap();
    let token = rapid_testkit::token(&http, &base, ID, SECRET);
    let bench = Bench { http, base, token };

    bench.create("once", unique);
    let once = bench.upload("once", rows(0, total, true));
    bench.create("appended", unique);
    let started = Instant::now();
    let mut times = Vec::with_capacity(appends);
    for k in 0..appends {
        times.push(bench.upload("appended", rows(k as u64 * per_append, per_append, true)));
        if (k + 1) % 250 == 0 {
            eprintln!(
                "{} appends, last 25 median {:.1} ms",
                k + 1,
                median(&times[k + 1 - ENDS..])
            );
        }
    }
    let all = started.elapsed();
    let (first, last) = (median(&times[..ENDS]), median(&times[appends - ENDS..]));
    let files_once = parquet_files(&data.join("data/default/bench/once"));
    let files_appended = parquet_files(&data.join("data/default/bench/appended"));
    let catalog_mb = ["catalog.sqlite", "catalog.sqlite-wal"]
        .iter()
        .filter_map(|f| std::fs::metadata(data.join(f)).ok())
        .map(|m| m.len())
        .sum::<u64>() as f64
        / 1e6;
    let (q1_once, q2_once) = bench.queries("once");
    let (q1_appended, q2_appended) = bench.queries("appended");
    let _ = server.kill();
    let _ = server.wait();

    let what = if unique {
        "unique id"
    } else {
        "no unique column"
    };
    println!("growth: {total} rows, {CATEGORIES} partitions, {what}");
    println!(
        "  one upload: {:.2} s to SUCCESS, {files_once} files",
        once.as_secs_f64()
    );
    println!(
        "  {appends} appends of {per_append}: all {:.1} s; median to SUCCESS first {ENDS} {first:.1} ms, last {ENDS} {last:.1} ms (x{:.2}); {files_appended} files",
        all.as_secs_f64(),
        last / first
    );
    println!("  catalog file (both datasets): {catalog_mb:.1} MB");
    println!("  q1 filter + limit: one upload {q1_once:.1} ms, appended {q1_appended:.1} ms");
    println!("  q2 group by + having: one upload {q2_once:.1} ms, appended {q2_appended:.1} ms");
}
