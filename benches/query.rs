//! Query latency on a 5,000,000-row partitioned dataset, against a release server over loopback:
//! q1: 3 columns where category = 'x' limit 1000 (partition pruning + limit),
//! q2: group by category, avg, having (a full scan of two columns),
//! q3: the whole dataset as CSV through /query/large, until the download is complete.
//!
//! cargo bench --bench query            # BENCH_ROWS to change the size (default 5,000,000)

use std::io::{BufWriter, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const ID: &str = "bench-admin";
const SECRET: &str = "bench-admin-secret-0123456789abcdef";
const CATEGORIES: [&str; 10] = [
    "food", "tools", "books", "toys", "garden", "music", "sport", "games", "home", "office",
];

fn generate(path: &std::path::Path, rows: u64) -> u64 {
    let mut w = BufWriter::with_capacity(1 << 20, std::fs::File::create(path).unwrap());
    writeln!(w, "category,id,price,qty,region").unwrap();
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    for i in 0..rows {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        writeln!(
            w,
            "{},{i},{}.{:02},{},r{}",
            CATEGORIES[(x % 10) as usize],
            x % 1000,
            (x >> 10) % 100,
            (x >> 20) % 50,
            (x >> 30) % 20
        )
        .unwrap();
    }
    w.flush().unwrap();
    std::fs::metadata(path).unwrap().len()
}

fn median_ms(mut f: impl FnMut() -> Duration, runs: usize) -> (f64, f64) {
    f(); // warm the page cache and the catalog
    let mut times: Vec<f64> = (0..runs).map(|_| f().as_secs_f64() * 1000.0).collect();
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    (times[runs / 2], times[runs - 1])
}

fn main() {
    let rows: u64 = std::env::var("BENCH_ROWS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5_000_000);
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("sales.csv");
    let mb = generate(&csv, rows) as f64 / 1e6;

    let (mut server, base) = rapid_testkit::spawn_server(
        Command::new(env!("CARGO_BIN_EXE_rapid-rs"))
            .args(["serve", "--bind", "127.0.0.1:0", "--log-level", "warn"])
            .arg("--data-dir")
            .arg(dir.path().join("data"))
            .env("RAPID_ADMIN_CLIENT_ID", ID)
            .env("RAPID_ADMIN_CLIENT_SECRET", SECRET)
            .stdout(Stdio::piped()),
    )
    .unwrap();
    let http = reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(3600))
        .build()
        .unwrap();
    let token = rapid_testkit::token(&http, &base, ID, SECRET);
    let schema = json!({
        "metadata": {"domain": "bench", "dataset": "sales", "sensitivity": "PUBLIC",
                     "owners": [{"name": "Bench", "email": "bench@example.com"}]},
        "columns": [
            {"name": "category", "data_type": "string", "allow_null": false, "partition_index": 0},
            {"name": "id", "data_type": "int", "allow_null": false},
            {"name": "price", "data_type": "double", "allow_null": true},
            {"name": "qty", "data_type": "int", "allow_null": true},
            {"name": "region", "data_type": "string", "allow_null": true}
        ]
    });
    assert_eq!(
        http.post(format!("{base}/api/schema"))
            .bearer_auth(&token)
            .json(&schema)
            .send()
            .unwrap()
            .status(),
        201
    );
    let form = reqwest::blocking::multipart::Form::new()
        .file("file", &csv)
        .unwrap();
    let t0 = Instant::now();
    let res: Value = http
        .post(format!("{base}/api/datasets/default/bench/sales"))
        .bearer_auth(&token)
        .multipart(form)
        .send()
        .unwrap()
        .json()
        .unwrap();
    let job_id = res["details"]["job_id"].as_str().unwrap().to_string();
    let wait = |job_id: &str| {
        let (deadline, poll) = (Duration::from_secs(24 * 3600), Duration::from_millis(5));
        let job = rapid_testkit::wait_job(&http, &base, &token, job_id, deadline, poll);
        assert_eq!(job["status"], "SUCCESS", "{job}");
        job
    };
    wait(&job_id);
    eprintln!(
        "loaded {rows} rows ({mb:.0} MB) in {:.1}s",
        t0.elapsed().as_secs_f64()
    );

    let query = |body: &Value| {
        let t = Instant::now();
        let res = http
            .post(format!("{base}/api/datasets/default/bench/sales/query"))
            .bearer_auth(&token)
            .json(body)
            .send()
            .unwrap();
        assert_eq!(res.status(), 200);
        let _ = res.bytes().unwrap();
        t.elapsed()
    };
    let q1 = json!({"select_columns": ["id", "price", "qty"], "filter": "category = 'toys'", "limit": 1000});
    let q2 = json!({"select_columns": ["category", "avg(price) AS mean"], "group_by_columns": ["category"],
                    "aggregation_conditions": "avg(price) > 1", "order_by_columns": [{"column": "category"}]});
    let (q1_median, q1_max) = median_ms(|| query(&q1), 21);
    let (q2_median, q2_max) = median_ms(|| query(&q2), 21);

    let t = Instant::now();
    let res: Value = http
        .post(format!(
            "{base}/api/datasets/default/bench/sales/query/large"
        ))
        .bearer_auth(&token)
        .json(&json!({}))
        .send()
        .unwrap()
        .json()
        .unwrap();
    let job = wait(res["details"]["job_id"].as_str().unwrap());
    let written = t.elapsed();
    let bytes = http
        .get(job["result_url"].as_str().unwrap())
        .send()
        .unwrap()
        .bytes()
        .unwrap()
        .len() as f64
        / 1e6;
    let total = t.elapsed();
    let _ = server.kill();
    let _ = server.wait();

    println!("query: {rows} rows, 10 partitions");
    println!("  q1 filter + limit 1000     median {q1_median:>7.1} ms  (max {q1_max:.1})");
    println!("  q2 group by + avg + having median {q2_median:>7.1} ms  (max {q2_max:.1})");
    println!("  q3 CSV export              {:>7.2} s job, {:.2} s with download, {bytes:.0} MB, {:.0} MB/s",
        written.as_secs_f64(), total.as_secs_f64(), bytes / total.as_secs_f64());
}
