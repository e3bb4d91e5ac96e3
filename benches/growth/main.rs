//! Growth: the same rows as one upload and as K appends, against a server over loopback.
//! Prints the median time to SUCCESS of the first and of the last 25 appends, the Parquet files
//! stored (after waiting for them to settle: a compactor may merge them), q1/q2 (as
//! `benches/query.rs`) on both datasets, DuckDB's q1/q2 on the same files, and a summary table.
//!
//! cargo bench --bench growth   # settings (environment):
//!   BENCH_APPENDS (K, default 2,000), BENCH_APPEND_ROWS (500), BENCH_UNIQUE (1; 0: no unique
//!   column), BENCH_UPLOADERS (1; N: N concurrent uploaders share the K appends),
//!   BENCH_SETTLE_SECS (15), BENCH_SETTLE_TIMEOUT (600), BENCH_QUERY_RUNS (21),
//!   BENCH_DUCKDB_RUNS (5), BENCH_PYTHON (default .venv/bin/python), RAPID_BIN (the server
//!   binary; default the one cargo built with the bench)

mod appends;
mod client;
mod duckdb;
mod report;
mod settle;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use reqwest::blocking::Client;

use appends::{rows, CATEGORIES, ENDS};
use client::Bench;
use report::Line;

const ID: &str = "bench-admin";
const SECRET: &str = "bench-admin-secret-0123456789abcdef";

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

struct Settings {
    appends: usize,
    per_append: u64,
    unique: bool,
    uploaders: usize,
    settle_quiet: Duration,
    settle_timeout: Duration,
    query_runs: usize,
    duckdb_runs: usize,
}

impl Settings {
    fn from_env() -> Self {
        let s = Settings {
            appends: env_or("BENCH_APPENDS", 2000) as usize,
            per_append: env_or("BENCH_APPEND_ROWS", 500),
            unique: env_or("BENCH_UNIQUE", 1) == 1,
            uploaders: env_or("BENCH_UPLOADERS", 1).max(1) as usize,
            settle_quiet: Duration::from_secs(env_or("BENCH_SETTLE_SECS", 15)),
            settle_timeout: Duration::from_secs(env_or("BENCH_SETTLE_TIMEOUT", 600)),
            query_runs: env_or("BENCH_QUERY_RUNS", 21).max(1) as usize,
            duckdb_runs: env_or("BENCH_DUCKDB_RUNS", 5).max(1) as usize,
        };
        assert!(
            s.appends >= 2 * ENDS,
            "BENCH_APPENDS must be at least {}",
            2 * ENDS
        );
        s
    }

    fn total(&self) -> u64 {
        self.appends as u64 * self.per_append
    }

    /// The run's settings in a few words (the summary table's first column).
    fn case(&self) -> String {
        let unique = if self.unique {
            "unique id"
        } else {
            "no unique"
        };
        let who = match self.uploaders {
            1 => "1 uploader".to_string(),
            n => format!("{n} uploaders"),
        };
        format!(
            "K={} x {} rows, {unique}, {who}",
            self.appends, self.per_append
        )
    }
}

/// `RAPID_BIN`, else the `rapid-rs` cargo built with this bench (release under `cargo bench`,
/// debug under `cargo test --bench growth`).
fn server_binary() -> PathBuf {
    std::env::var_os("RAPID_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_rapid-rs")))
}

/// The server process, stopped when dropped (also when the bench panics).
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start(data: &Path) -> (Server, Bench) {
    let bin = server_binary();
    eprintln!("server: {}", bin.display());
    let (server, base) = rapid_testkit::spawn_server(
        Command::new(&bin)
            .args(["serve", "--bind", "127.0.0.1:0", "--log-level", "warn"])
            .arg("--data-dir")
            .arg(data)
            .env("RAPID_ADMIN_CLIENT_ID", ID)
            .env("RAPID_ADMIN_CLIENT_SECRET", SECRET)
            // DuckDB globs the folder: keep no files of earlier commits (history retention).
            .env("RAPID_HISTORY_KEEP_COMMITS", "1")
            .env("RAPID_HISTORY_KEEP_SECONDS", "0")
            .stdout(Stdio::piped()),
    )
    .unwrap();
    let http = Client::builder()
        .timeout(Duration::from_secs(3600))
        .build()
        .unwrap();
    let token = rapid_testkit::token(&http, &base, ID, SECRET);
    (Server(server), Bench { http, base, token })
}

fn catalog_mb(data: &Path) -> f64 {
    ["catalog.sqlite", "catalog.sqlite-wal"]
        .iter()
        .filter_map(|f| std::fs::metadata(data.join(f)).ok())
        .map(|m| m.len())
        .sum::<u64>() as f64
        / 1e6
}

fn print_settled(names: &[&str], s: &settle::Settled) {
    let counts: Vec<String> = (0..names.len())
        .map(|i| format!("{} {} -> {}", names[i], s.before[i], s.after[i]))
        .collect();
    let how = if s.timed_out {
        "TIMED OUT before the counts were stable for BENCH_SETTLE_SECS"
    } else {
        "settled"
    };
    println!(
        "  files {}: {how}; changes for {:.1} s, waited {:.1} s",
        counts.join(", "),
        s.changing.as_secs_f64(),
        s.waited.as_secs_f64()
    );
}

/// DuckDB on each dataset's files, or why not (printed, then skipped).
fn peers(dirs: &[PathBuf], runs: usize) -> Vec<Option<duckdb::Peer>> {
    let python = match duckdb::python() {
        Ok(p) => p,
        Err(why) => {
            println!("  DuckDB skipped: {why}");
            return dirs.iter().map(|_| None).collect();
        }
    };
    let peer = |dir: &PathBuf| {
        let glob = duckdb::dataset_glob(dir).ok_or(format!("no version folder in {dir:?}"))?;
        duckdb::run(&python, &glob, runs)
    };
    dirs.iter()
        .map(|dir| {
            peer(dir)
                .map_err(|why| println!("  DuckDB skipped on {}: {why}", dir.display()))
                .ok()
        })
        .collect()
}

fn main() {
    let s = Settings::from_env();
    let total = s.total();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let (server, bench) = start(&data);
    let names = ["once", "appended"];
    let dirs: Vec<PathBuf> = names
        .iter()
        .map(|n| data.join("data/default/bench").join(n))
        .collect();

    bench.create("once", s.unique);
    let once = bench.upload("once", rows(0, total, true));
    bench.create("appended", s.unique);
    let appended = appends::run(&bench, "appended", s.appends, s.per_append, s.uploaders);
    let (first, last) = appended.ends();

    println!(
        "growth: {total} rows, {CATEGORIES} partitions, {}",
        s.case()
    );
    println!("  one upload: {:.2} s to SUCCESS", once.as_secs_f64());
    println!(
        "  {} appends of {}: all {:.1} s; median to SUCCESS first {ENDS} {first:.1} ms, last {ENDS} {last:.1} ms (x{:.2})",
        s.appends,
        s.per_append,
        appended.all.as_secs_f64(),
        last / first
    );
    let settled = settle::settle(&dirs, s.settle_quiet, s.settle_timeout);
    print_settled(&names, &settled);
    println!(
        "  catalog file (both datasets): {:.1} MB",
        catalog_mb(&data)
    );
    let line = |name: &str, first_ms, last_ms| {
        let (q1, q2) = bench.queries(name, s.query_runs);
        Line {
            dataset: name.to_string(),
            files: 0,
            first_ms,
            last_ms,
            q1,
            q2,
            peer: None,
        }
    };
    let mut lines = [
        line("once", once.as_secs_f64() * 1000.0, None),
        line("appended", first, Some(last)),
    ];
    lines[0].dataset = "once (1 upload)".into();
    drop(server);
    report::ours(&lines);
    let found = peers(&dirs, s.duckdb_runs);
    for ((line, peer), &files) in lines.iter_mut().zip(found).zip(&settled.after) {
        (line.peer, line.files) = (peer, files);
        report::check_peer(line, total);
    }
    report::summary(&s.case(), &lines);
}
