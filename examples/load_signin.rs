//! Hostile load against a running rapid-rs on loopback, bounded in count and time (see
//! `scripts/load-signin.sh`, which starts the server and runs this once per phase):
//!
//! - `signin`: 200 guessers against one user's password, 40 against unknown user names, 20
//!   against the admin client's secret, for `--seconds`, sent from `--sources` loopback
//!   addresses (127.0.0.2 and up, round robin; 0: the default address); meanwhile a good client
//!   on 127.0.0.1 times `/api/status`, the dataset listing and a token with the admin's true
//!   secret, and takes one more token right after the flood. Reports peak RSS, RSS after 12 s
//!   idle, answers by status, p50/p95/max.
//! - `generate`: 100 schema generations of one 50 MB CSV at once: statuses and peak RSS.
//! - `bombs`: 4 Parquet files whose 16 rows point at one 50 MB dictionary value and 4 CSV files
//!   with one 300 MB field, at once: statuses and peak RSS.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use bytes::Bytes;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;
use reqwest::multipart::{Form, Part};
use reqwest::{Body, Client, StatusCode};
use serde_json::{json, Value};

struct Args {
    base: String,
    pid: u32,
    admin_id: String,
    admin_secret: String,
    seconds: u64,
    phase: String,
    /// Loopback source addresses the attackers send from (127.0.0.2 and up); 0: the default.
    sources: u8,
}

fn args() -> Args {
    let mut map = BTreeMap::new();
    let raw: Vec<String> = std::env::args().skip(1).collect();
    for pair in raw.chunks(2) {
        map.insert(
            pair[0].trim_start_matches("--").to_string(),
            pair.get(1).cloned().unwrap_or_default(),
        );
    }
    let get = |k: &str| {
        map.get(k)
            .cloned()
            .unwrap_or_else(|| panic!("--{k} is required"))
    };
    let base = get("base");
    assert!(
        base.starts_with("http://127.0.0.1:") || base.starts_with("http://[::1]:"),
        "loopback only"
    );
    Args {
        base,
        pid: get("pid").parse().unwrap(),
        admin_id: get("admin-id"),
        admin_secret: get("admin-secret"),
        seconds: map.get("seconds").map_or(8, |s| s.parse().unwrap()).min(30),
        phase: get("phase"),
        sources: map
            .get("sources")
            .map_or(0, |s| s.parse().unwrap())
            .min(250),
    }
}

fn rss_kb(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0)
}

/// Samples the server's RSS every 20 ms; the peak so far in MB.
fn start_rss_sampler(pid: u32) -> Arc<AtomicU64> {
    let peak = Arc::new(AtomicU64::new(0));
    let p = peak.clone();
    std::thread::spawn(move || loop {
        p.fetch_max(rss_kb(pid), Ordering::Relaxed);
        std::thread::sleep(Duration::from_millis(20));
    });
    peak
}

fn mb(kb: u64) -> String {
    format!("{:.0} MB", kb as f64 / 1024.0)
}

fn percentiles(mut ms: Vec<f64>) -> String {
    if ms.is_empty() {
        return "no samples".into();
    }
    ms.sort_by(|a, b| a.total_cmp(b));
    let at = |q: f64| ms[((ms.len() - 1) as f64 * q).round() as usize];
    format!(
        "n={} p50={:.1} ms p95={:.1} ms max={:.1} ms",
        ms.len(),
        at(0.5),
        at(0.95),
        at(1.0)
    )
}

async fn admin_token(http: &Client, a: &Args) -> String {
    let res = http
        .post(format!("{}/api/oauth2/token", a.base))
        .basic_auth(&a.admin_id, Some(&a.admin_secret))
        .send()
        .await
        .unwrap();
    res.json::<Value>().await.unwrap()["access_token"]
        .as_str()
        .unwrap()
        .to_string()
}

type Tally = BTreeMap<String, u64>;

fn count(t: &mut Tally, key: String) {
    *t.entry(key).or_default() += 1;
}

fn answer(r: &Result<reqwest::Response, reqwest::Error>) -> String {
    match r {
        Ok(res) => {
            let retry = if res.headers().contains_key("retry-after") {
                "+Retry-After"
            } else {
                ""
            };
            format!("{}{retry}", res.status().as_u16())
        }
        Err(e) if e.is_connect() => "connect error".into(),
        Err(e) => format!(
            "error: {}",
            e.to_string().chars().take(60).collect::<String>()
        ),
    }
}

async fn signin(a: &Args, http: &Client) {
    let token = admin_token(http, a).await;
    let user: Value = http
        .post(format!("{}/api/user", a.base))
        .bearer_auth(&token)
        .json(&json!({"username": "victim", "email": "victim@example.com"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(user["temporary_password"].is_string(), "{user}");
    let client: Value = http
        .post(format!("{}/api/client", a.base))
        .bearer_auth(&token)
        .json(&json!({"client_name": "victim_client", "permissions": ["READ_ALL"]}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(client["client_id"].is_string(), "{client}");
    // One HTTP client per source address; the good client below stays on 127.0.0.1.
    let attackers: Vec<Client> = if a.sources == 0 {
        vec![http.clone()]
    } else {
        (0..a.sources)
            .map(|k| {
                Client::builder()
                    .local_address(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2 + k)))
                    .timeout(Duration::from_secs(120))
                    .build()
                    .unwrap()
            })
            .collect()
    };
    println!(
        "attackers send from {} address(es); the good client from 127.0.0.1",
        attackers.len()
    );
    let deadline = Instant::now() + Duration::from_secs(a.seconds);
    let mut tasks = Vec::new();
    for i in 0..260u32 {
        let (http, base, victim_client) = (
            attackers[i as usize % attackers.len()].clone(),
            a.base.clone(),
            a.admin_id.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let (kind, mut tally, mut n) = (
                if i < 200 {
                    "user"
                } else if i < 240 {
                    "unknown"
                } else {
                    "secret"
                },
                Tally::new(),
                0u64,
            );
            while Instant::now() < deadline {
                n += 1;
                let req = http.post(format!("{base}/api/oauth2/token"));
                let req = match kind {
                    "user" => req.form(&[
                        ("grant_type", "password"),
                        ("username", "victim"),
                        ("password", &format!("guess-{i}-{n}")),
                    ]),
                    "unknown" => req.form(&[
                        ("grant_type", "password"),
                        ("username", &format!("ghost-{i}-{n}")),
                        ("password", "x"),
                    ]),
                    _ => req.basic_auth(&victim_client, Some(format!("guess-{i}-{n}"))),
                };
                count(&mut tally, format!("{kind} {}", answer(&req.send().await)));
            }
            tally
        }));
    }
    let probe = |path: &'static str| {
        let (http, base, id, secret, listing_token) = (
            http.clone(),
            a.base.clone(),
            a.admin_id.clone(),
            a.admin_secret.clone(),
            token.clone(),
        );
        tokio::spawn(async move {
            let mut ms = Vec::new();
            let mut failed = 0;
            while Instant::now() < deadline {
                let t = Instant::now();
                let req = match path {
                    "status" => http.get(format!("{base}/api/status")),
                    "list" => http
                        .post(format!("{base}/api/datasets"))
                        .bearer_auth(&listing_token)
                        .json(&json!({})),
                    _ => http
                        .post(format!("{base}/api/oauth2/token"))
                        .basic_auth(&id, Some(&secret)),
                };
                match req.send().await {
                    Ok(r) if r.status() == StatusCode::OK => {
                        ms.push(t.elapsed().as_secs_f64() * 1000.0)
                    }
                    _ => failed += 1,
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            (ms, failed)
        })
    };
    let (status, list, good) = (probe("status"), probe("list"), probe("token"));
    let mut tally = Tally::new();
    for t in tasks {
        for (k, v) in t.await.unwrap() {
            *tally.entry(k).or_default() += v;
        }
    }
    let ((status_ms, status_failed), (list_ms, list_failed), (token_ms, token_failed)) = (
        status.await.unwrap(),
        list.await.unwrap(),
        good.await.unwrap(),
    );
    let after = http
        .post(format!("{}/api/oauth2/token", a.base))
        .basic_auth(&a.admin_id, Some(&a.admin_secret))
        .send()
        .await;
    println!("answers: {tally:?}");
    println!(
        "admin's true secret right after the flood: {}",
        answer(&after)
    );
    println!(
        "dataset listing: {} (failed {list_failed})",
        percentiles(list_ms)
    );
    println!(
        "/api/status: {} (failed {status_failed})",
        percentiles(status_ms)
    );
    println!(
        "good client token: {} (failed {token_failed})",
        percentiles(token_ms)
    );
}

fn csv_sample(bytes: usize) -> Bytes {
    let mut out = b"id,name,amount,day\n".to_vec();
    let mut i = 0u64;
    while out.len() < bytes {
        out.extend(format!("{i},name {i},{}.25,2024-01-{:02}\n", i % 1000, i % 28 + 1).as_bytes());
        i += 1;
    }
    Bytes::from(out)
}

fn multipart(bytes: Bytes, name: &str) -> Form {
    Form::new().part(
        "file",
        Part::stream(Body::from(bytes)).file_name(name.to_string()),
    )
}

async fn generate(a: &Args, http: &Client) {
    let token = admin_token(http, a).await;
    let sample = csv_sample(50 * 1024 * 1024);
    let tasks: Vec<_> = (0..100)
        .map(|i| {
            let (http, url, token, sample) = (
                http.clone(),
                format!("{}/api/schema/load/gen{i}/generate", a.base),
                token.clone(),
                sample.clone(),
            );
            tokio::spawn(async move {
                let t = Instant::now();
                let r = http
                    .post(url)
                    .bearer_auth(token)
                    .multipart(multipart(sample, "sample.csv"))
                    .send()
                    .await;
                (answer(&r), t.elapsed().as_secs_f64())
            })
        })
        .collect();
    let mut tally = Tally::new();
    let mut slowest: f64 = 0.0;
    for t in tasks {
        let (a, secs) = t.await.unwrap();
        count(&mut tally, a);
        slowest = slowest.max(secs);
    }
    println!("generations: {tally:?}, slowest answer {slowest:.1} s");
}

fn parquet_bomb(value_len: usize) -> Bytes {
    let big = "a".repeat(value_len);
    let ids: ArrayRef = Arc::new(Int64Array::from_iter_values(1..=16));
    let notes: ArrayRef = Arc::new(StringArray::from(vec![big.as_str(); 16]));
    let batch = RecordBatch::try_from_iter([("id", ids), ("notes", notes)]).unwrap();
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::try_new(3).unwrap()))
        .set_dictionary_page_size_limit(512 << 20)
        .build();
    let mut out = Vec::new();
    let mut w = ArrowWriter::try_new(&mut out, batch.schema(), Some(props)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    Bytes::from(out)
}

async fn bombs(a: &Args, http: &Client) {
    let token = admin_token(http, a).await;
    let schema = json!({"metadata": {"domain": "bombs", "dataset": "notes", "sensitivity": "PUBLIC",
        "owners": [{"name": "Load", "email": "load@example.com"}]},
        "columns": [{"name": "id", "data_type": "int", "allow_null": false},
                    {"name": "notes", "data_type": "string", "allow_null": true}]});
    let r = http
        .post(format!("{}/api/schema", a.base))
        .bearer_auth(&token)
        .json(&schema)
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success(), "schema: {}", r.status());
    let parquet = parquet_bomb(50 * 1024 * 1024);
    let mut csv = b"id,notes\n1,\"".to_vec();
    csv.resize(csv.len() + 300 * 1024 * 1024, b'x');
    csv.extend(b"\"\n");
    let csv = Bytes::from(csv);
    println!(
        "parquet bomb: {} bytes on disk; csv bomb: {} bytes",
        parquet.len(),
        csv.len()
    );
    let url = format!("{}/api/datasets/default/bombs/notes", a.base);
    let tasks: Vec<_> = (0..8)
        .map(|i| {
            let (http, url, token) = (http.clone(), url.clone(), token.clone());
            let (body, name) = if i % 2 == 0 {
                (parquet.clone(), "bomb.parquet")
            } else {
                (csv.clone(), "bomb.csv")
            };
            tokio::spawn(async move {
                let r = http
                    .post(url)
                    .bearer_auth(token)
                    .multipart(multipart(body, name))
                    .send()
                    .await;
                let detail = match r {
                    Ok(r) => format!(
                        "{} {}",
                        r.status().as_u16(),
                        r.text().await.unwrap_or_default()
                    ),
                    Err(e) => format!("error {e}"),
                };
                format!("{name}: {}", detail.chars().take(200).collect::<String>())
            })
        })
        .collect();
    for t in tasks {
        println!("{}", t.await.unwrap());
    }
}

#[tokio::main]
async fn main() {
    let a = args();
    let http = Client::builder()
        .pool_max_idle_per_host(300)
        .timeout(Duration::from_secs(120))
        .build()
        .unwrap();
    let peak = start_rss_sampler(a.pid);
    println!("phase {}: RSS at start {}", a.phase, mb(rss_kb(a.pid)));
    match a.phase.as_str() {
        "signin" => signin(&a, &http).await,
        "generate" => generate(&a, &http).await,
        "bombs" => bombs(&a, &http).await,
        other => panic!("unknown phase {other}"),
    }
    println!("peak RSS {}", mb(peak.load(Ordering::Relaxed)));
    tokio::time::sleep(Duration::from_secs(12)).await;
    // One more failure after the quiet: the server then logs its sign-in counters.
    let _ = http
        .post(format!("{}/api/oauth2/token", a.base))
        .basic_auth("nobody", Some("x"))
        .send()
        .await;
    println!("RSS after 12 s idle {}", mb(rss_kb(a.pid)));
}
