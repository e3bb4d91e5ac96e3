//! End-to-end upload throughput and peak memory: a generated CSV (10 columns: dates in two
//! formats, quoted text with commas, booleans with nulls, one partition column, two checks) is
//! uploaded to a release server over loopback; the clock runs from the first byte sent until the
//! job is SUCCESS. Peak RSS is the server's VmHWM.
//!
//! cargo bench --bench upload                         # 1,000,000 rows
//! BENCH_ROWS=20000000 cargo bench --bench upload     # about 2 GB

use std::io::{BufWriter, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const ID: &str = "bench-admin";
const SECRET: &str = "bench-admin-secret-0123456789abcdef";

fn generate(path: &std::path::Path, rows: u64) -> u64 {
    let mut w = BufWriter::with_capacity(1 << 20, std::fs::File::create(path).unwrap());
    writeln!(
        w,
        "region,id,day,amount,qty,paid,note,category,score,created"
    )
    .unwrap();
    let regions = [
        "north", "south", "east", "west", "centre", "islands", "coast", "hills",
    ];
    let categories = ["food", "tools", "books", "toys"];
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for i in 0..rows {
        // xorshift: deterministic, cheap variety.
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let paid = match x % 10 {
            0 => "",
            1..=5 => "true",
            _ => "FALSE",
        };
        writeln!(
            w,
            "{},{i},20{:02}-{:02}-{:02},{}.{:02},{},{paid},\"item {i}, batch {}\",{},{:.3},{:02}/{:02}/20{:02}",
            regions[(x % 8) as usize],
            10 + x % 15,
            1 + (x >> 8) % 12,
            1 + (x >> 12) % 28,
            x % 10_000,
            (x >> 16) % 100,
            (x >> 20) % 1000,
            i / 1000,
            categories[((x >> 24) % 4) as usize],
            ((x >> 28) % 100_000) as f64 / 7.0,
            1 + (x >> 32) % 28,
            1 + (x >> 36) % 12,
            10 + (x >> 40) % 15,
        )
        .unwrap();
    }
    w.flush().unwrap();
    std::fs::metadata(path).unwrap().len()
}

fn schema() -> Value {
    json!({
        "metadata": {"domain": "bench", "dataset": "sales", "sensitivity": "PUBLIC",
                     "owners": [{"name": "Bench", "email": "bench@example.com"}]},
        "columns": [
            {"name": "region", "data_type": "string", "allow_null": false, "partition_index": 0},
            {"name": "id", "data_type": "int", "allow_null": false},
            {"name": "day", "data_type": "date", "format": "%Y-%m-%d", "allow_null": false},
            {"name": "amount", "data_type": "double", "allow_null": true},
            {"name": "qty", "data_type": "int", "allow_null": true,
             "checks": {"range": {"check_type": "in_range", "parameters": {"min_value": 0, "max_value": 1000}}}},
            {"name": "paid", "data_type": "boolean", "allow_null": true},
            {"name": "note", "data_type": "string", "allow_null": true},
            {"name": "category", "data_type": "string", "allow_null": false,
             "checks": {"known": {"check_type": "isin", "parameters": {"allowed_values": ["food", "tools", "books", "toys"]}}}},
            {"name": "score", "data_type": "double", "allow_null": true},
            {"name": "created", "data_type": "date", "format": "%d/%m/%Y", "allow_null": true}
        ]
    })
}

fn peak_rss_mb(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

fn main() {
    let rows: u64 = std::env::var("BENCH_ROWS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("bench.csv");
    let started = Instant::now();
    let bytes = generate(&csv, rows);
    let mb = bytes as f64 / 1e6;
    eprintln!(
        "generated {rows} rows, {mb:.1} MB in {:.1}s",
        started.elapsed().as_secs_f64()
    );

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
    let res = http
        .post(format!("{base}/api/schema"))
        .bearer_auth(&token)
        .json(&schema())
        .send()
        .unwrap();
    assert_eq!(res.status(), 201, "{}", res.text().unwrap());
    let rss_idle = peak_rss_mb(server.id());

    let form = reqwest::blocking::multipart::Form::new()
        .file("file", &csv)
        .unwrap();
    let t0 = Instant::now();
    let res = http
        .post(format!("{base}/api/datasets/default/bench/sales"))
        .bearer_auth(&token)
        .multipart(form)
        .send()
        .unwrap();
    let accepted = t0.elapsed();
    let status = res.status();
    let body: Value = res.json().unwrap();
    assert_eq!(status, 202, "{body}");
    let job_id = body["details"]["job_id"].as_str().unwrap().to_string();
    let (deadline, poll) = (Duration::from_secs(24 * 3600), Duration::from_millis(5));
    let job = rapid_testkit::wait_job(&http, &base, &token, &job_id, deadline, poll);
    let total = t0.elapsed();
    assert_eq!(job["status"], "SUCCESS", "{job}");
    let peak = peak_rss_mb(server.id());
    let _ = server.kill();
    let _ = server.wait();

    let secs = total.as_secs_f64();
    println!("upload: {rows} rows, {mb:.1} MB");
    println!("  202 after      {:>8.2} s", accepted.as_secs_f64());
    println!("  SUCCESS after  {secs:>8.2} s");
    println!(
        "  throughput     {:>8.1} MB/s, {:.0} rows/s",
        mb / secs,
        rows as f64 / secs
    );
    println!("  peak RSS       {peak:>8.1} MB (idle after start-up {rss_idle:.1} MB)");
}
