//! `rapid-bench` (also run as `rapid-rs bench`): a load tool for a running service. It creates the
//! schema(s), runs N concurrent uploaders of generated files, waits for every job, prints a
//! summary, and checks at the end, by querying counts, that every accepted row is stored exactly
//! once. Its own binary (src/main.rs), so the server's build carries no HTTP client of its own nor
//! the test kit (issue 57); `rapid-rs bench ARGS` runs this binary.

mod client;
mod data;
mod report;
mod retry;

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Args;
use serde_json::{json, Value};

use client::{create_datasets, Client};
pub use data::Shape;
use report::Outcome;
pub use report::Report;

#[derive(Debug, Clone, Args)]
pub struct BenchArgs {
    /// Base URL of the service, e.g. http://127.0.0.1:8000/api.
    #[arg(long, env = "RAPID_URL")]
    pub url: String,
    /// Client id (needs DATA_ADMIN to create schemas, and WRITE/READ for the data).
    #[arg(long, env = "RAPID_CLIENT_ID")]
    pub client_id: String,
    #[arg(long, env = "RAPID_CLIENT_SECRET", hide_env_values = true)]
    pub client_secret: String,
    /// Rows per file.
    #[arg(long, default_value_t = 10_000)]
    pub rows: u64,
    /// Value columns per file (besides `part` and `id`).
    #[arg(long, default_value_t = 8)]
    pub columns: usize,
    /// Distinct values of the partition column.
    #[arg(long, default_value_t = 4)]
    pub partitions: u64,
    /// Share of invalid rows (0-1); a file holding any is refused whole.
    #[arg(long, default_value_t = 0.0)]
    pub invalid_rows: f64,
    /// Seed of the generated data: the same seed gives the same files.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Concurrent uploaders.
    #[arg(long, default_value_t = 4)]
    pub uploaders: usize,
    /// Upload to one dataset, or one dataset per uploader.
    #[arg(long, value_enum, default_value_t = Target::One)]
    pub datasets: Target,
    /// Files to upload in all (ignored when --duration is given).
    #[arg(long, default_value_t = 20)]
    pub files: u64,
    /// Keep uploading for this many seconds instead of a number of files.
    #[arg(long)]
    pub duration: Option<u64>,
    /// Generate every file before the clock starts (needs a number of files, not --duration;
    /// they are held in memory, at most 4 GiB), so that generating does not compete with the
    /// server for the cores when both run on one machine.
    #[arg(long)]
    pub pregenerate: bool,
    /// Declare the `id` column `unique` (its values are distinct across files either way), so
    /// every commit checks and records its keys, as a keyed dataset's uploads do.
    #[arg(long)]
    pub unique: bool,
    /// Machine-readable summary on stdout.
    #[arg(long)]
    pub json: bool,
}

/// The most a pregenerated run may hold in memory.
const PREGENERATED_MAX_BYTES: u64 = 4 << 30;

/// Where each upload's file comes from.
#[derive(Clone)]
enum Files {
    /// Made by the uploader just before it sends it (inside the timed run).
    OnTheFly(Shape),
    /// Made before the clock started: each file and its invalid rows, by index.
    Ready(Arc<Vec<(bytes::Bytes, u64)>>),
}

impl Files {
    async fn prepare(args: &BenchArgs, shape: &Shape) -> Result<Files, String> {
        if !args.pregenerate {
            return Ok(Files::OnTheFly(shape.clone()));
        }
        // Estimated from the first file (kept: it is file 0); every file has the same shape.
        let first = shape.file(0);
        let estimate = (first.0.len() as u64).saturating_mul(args.files);
        if estimate > PREGENERATED_MAX_BYTES {
            return Err(format!(
                "--pregenerate would hold {} MB of files in memory (limit {} MB): fewer --files \
                 or --rows",
                estimate >> 20,
                PREGENERATED_MAX_BYTES >> 20
            ));
        }
        let (shape, count) = (shape.clone(), args.files as usize);
        let files = tokio::task::spawn_blocking(move || {
            let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
            let mut files = vec![(bytes::Bytes::new(), 0); count];
            if let Some(slot) = files.first_mut() {
                *slot = (bytes::Bytes::from(first.0), first.1);
            }
            let per_thread = count.div_ceil(threads).max(1);
            std::thread::scope(|scope| {
                for (t, chunk) in files.chunks_mut(per_thread).enumerate() {
                    let shape = &shape;
                    scope.spawn(move || {
                        for (i, slot) in chunk.iter_mut().enumerate() {
                            let index = t * per_thread + i;
                            if index > 0 {
                                let (bytes, invalid) = shape.file(index as u64);
                                *slot = (bytes::Bytes::from(bytes), invalid);
                            }
                        }
                    });
                }
            });
            files
        })
        .await
        .map_err(|e| e.to_string())?;
        Ok(Files::Ready(Arc::new(files)))
    }

    async fn get(&self, index: u64) -> (bytes::Bytes, u64) {
        match self {
            Files::Ready(files) => files[index as usize].clone(),
            Files::OnTheFly(shape) => {
                let shape = shape.clone();
                let (bytes, invalid) = tokio::task::spawn_blocking(move || shape.file(index))
                    .await
                    .unwrap_or_default();
                (bytes::Bytes::from(bytes), invalid)
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Target {
    One,
    Many,
}

/// The command line of the `rapid-bench` binary: only the tool's settings.
#[derive(Debug, clap::Parser)]
#[command(
    name = "rapid-bench",
    version,
    about = "Benchmark concurrent uploads against a running rapid-rs, and check every row is stored once"
)]
pub struct Cli {
    #[command(flatten)]
    pub args: BenchArgs,
}

/// Runs the tool on its own runtime and returns its report (what `main` prints; the tests call
/// it in-process).
pub fn run_blocking(args: BenchArgs) -> Result<Report, String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    runtime.block_on(run(args))
}

/// `rapid-bench`: runs the tool and prints the report (JSON on stdout with `--json`, text
/// otherwise); fails unless every accepted row is stored exactly once.
pub fn main(args: BenchArgs) -> std::process::ExitCode {
    let json = args.json;
    match run_blocking(args) {
        Ok(report) => {
            if json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&report).unwrap_or_default()
                );
            } else {
                eprintln!();
                print!("{}", report.text());
            }
            // A run whose accepted rows are not all stored exactly once is a failure.
            if report.exactly_once {
                std::process::ExitCode::SUCCESS
            } else {
                std::process::ExitCode::FAILURE
            }
        }
        Err(e) => {
            eprintln!("rapid-bench: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

pub async fn run(args: BenchArgs) -> Result<Report, String> {
    if args.pregenerate && args.duration.is_some() {
        return Err("--pregenerate needs --files, not --duration".into());
    }
    let client = Arc::new(Client::connect(&args).await?);
    let shape = Shape {
        rows: args.rows,
        columns: args.columns,
        partitions: args.partitions,
        invalid_rows: args.invalid_rows,
        seed: args.seed,
        unique_id: args.unique,
    };
    let names = create_datasets(&client, &args, &shape).await?;
    let files = Files::prepare(&args, &shape).await?;

    let next = Arc::new(AtomicU64::new(0));
    let outcomes: Arc<Mutex<Vec<Outcome>>> = Arc::default();
    let started = Instant::now();
    let deadline = args.duration.map(|s| started + Duration::from_secs(s));
    let progress = spawn_progress(
        outcomes.clone(),
        args.duration.is_none().then_some(args.files),
        args.json,
    );
    let mut workers = Vec::new();
    for worker in 0..args.uploaders.max(1) {
        let (client, next, outcomes, files) = (
            client.clone(),
            next.clone(),
            outcomes.clone(),
            files.clone(),
        );
        let rows = shape.rows;
        let dataset = names[worker % names.len()].clone();
        let limit = args.files;
        workers.push(tokio::spawn(async move {
            loop {
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    break;
                }
                let index = next.fetch_add(1, Ordering::Relaxed);
                if deadline.is_none() && index >= limit {
                    break;
                }
                let outcome = upload_one(&client, &files, rows, &dataset, index).await;
                outcomes
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(outcome);
            }
        }));
    }
    for w in workers {
        w.await.map_err(|e| e.to_string())?;
    }
    let elapsed = started.elapsed();
    progress.abort();
    let outcomes = std::mem::take(&mut *outcomes.lock().unwrap_or_else(|p| p.into_inner()));

    let verification = verify(&client, &names, &outcomes).await?;
    Ok(Report::new(
        &args,
        outcomes,
        elapsed,
        verification,
        client.retries.count(),
    ))
}

/// What each dataset should hold (the rows of its stored uploads) against what a count finds.
async fn verify(
    client: &Client,
    names: &[String],
    outcomes: &[Outcome],
) -> Result<Vec<report::Verification>, String> {
    let mut expected: BTreeMap<String, u64> = names.iter().map(|n| (n.clone(), 0)).collect();
    for o in outcomes.iter().filter(|o| o.stored) {
        *expected.entry(o.dataset.clone()).or_default() += o.rows;
    }
    let mut verification = Vec::new();
    for (name, want) in &expected {
        let body = json!({"select_columns": ["count(*) AS n", "count(DISTINCT id) AS d"]});
        let (status, answer) = client
            .query(&format!("/datasets/default/bench/{name}/query"), &body)
            .await?;
        let (n, d, error) = if status == 200 {
            (
                answer["0"]["n"].as_u64().unwrap_or(0),
                answer["0"]["d"].as_u64().unwrap_or(0),
                None,
            )
        } else {
            (
                0,
                0,
                Some(format!("count query answered {status}: {answer}")),
            )
        };
        verification.push(report::Verification {
            dataset: name.clone(),
            expected: *want,
            stored: n,
            distinct_ids: d,
            error,
        });
    }
    Ok(verification)
}

async fn upload_one(
    client: &Client,
    files: &Files,
    rows: u64,
    dataset: &str,
    index: u64,
) -> Outcome {
    let (bytes, invalid) = files.get(index).await;
    let size = bytes.len() as u64;
    let mut outcome = Outcome::new(dataset, rows, size, invalid);
    let t0 = Instant::now();
    let part = reqwest::multipart::Part::stream_with_length(bytes, size)
        .file_name(format!("bench-{index}.csv"));
    let form = reqwest::multipart::Form::new().part("file", part);
    let sent = client
        .http
        .post(format!("{}/datasets/default/bench/{dataset}", client.base))
        .bearer_auth(&client.token)
        .multipart(form)
        .send()
        .await;
    let res = match sent {
        Ok(r) => r,
        Err(e) => return outcome.failed(format!("request failed: {e}")),
    };
    let status = res.status().as_u16();
    let body: Value = res.json().await.unwrap_or(Value::Null);
    outcome.accepted_after = Some(t0.elapsed());
    if status != 202 {
        return outcome.failed(report::reason(status, &body));
    }
    let job_id = body["details"]["job_id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    match client.wait_job(&job_id).await {
        Ok(job) if job["status"] == "SUCCESS" => {
            outcome.done_after = Some(t0.elapsed());
            outcome.stored = true;
            outcome
        }
        Ok(job) => outcome.failed(report::reason(200, &json!({"details": job["errors"]}))),
        Err(e) => outcome.failed(format!("polling the job failed: {e}")),
    }
}

/// A status line on stderr twice a second, when stderr is a terminal and output is not JSON.
fn spawn_progress(
    outcomes: Arc<Mutex<Vec<Outcome>>>,
    total: Option<u64>,
    quiet: bool,
) -> tokio::task::JoinHandle<()> {
    let show = !quiet && std::io::stderr().is_terminal();
    let started = Instant::now();
    tokio::spawn(async move {
        if !show {
            return;
        }
        loop {
            tokio::time::sleep(Duration::from_millis(500)).await;
            let (done, failed, mb) = {
                let o = outcomes.lock().unwrap_or_else(|p| p.into_inner());
                let mb: f64 = o.iter().map(|x| x.bytes as f64).sum::<f64>() / 1e6;
                (o.len(), o.iter().filter(|x| !x.stored).count(), mb)
            };
            let of = total.map(|t| format!("/{t}")).unwrap_or_default();
            let rate = mb / started.elapsed().as_secs_f64();
            eprint!("\r  files {done}{of}  failed {failed}  {mb:.1} MB  {rate:.1} MB/s   ");
        }
    })
}
