//! DuckDB's q1/q2 on the very files a dataset has stored, through the project's venv
//! (`scripts/setup-python.sh` installs duckdb in `.venv`; `BENCH_PYTHON` names another Python).
//! Any failure (no venv, no duckdb) is a reason to skip, never a failed bench.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::client::Timed;

/// DuckDB's figures on one dataset's files.
pub(crate) struct Peer {
    pub version: String,
    pub files: u64,
    pub rows: u64,
    pub q1: Timed,
    pub q2: Timed,
}

/// The Python to run DuckDB with: `BENCH_PYTHON`, else the project's `.venv/bin/python`.
pub(crate) fn python() -> Result<PathBuf, String> {
    let path = match std::env::var_os("BENCH_PYTHON") {
        Some(p) => PathBuf::from(p),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python"),
    };
    let hint = "run scripts/setup-python.sh, or set BENCH_PYTHON to a Python with duckdb";
    if !path.exists() {
        return Err(format!("no Python at {} ({hint})", path.display()));
    }
    let has_duckdb = Command::new(&path)
        .args(["-c", "import duckdb"])
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if has_duckdb {
        Ok(path)
    } else {
        Err(format!("{} cannot import duckdb ({hint})", path.display()))
    }
}

/// `{dataset folder}/{version}/**/*.parquet` for the dataset's latest schema version (storage
/// keys: `data/{layer}/{domain}/{dataset}/{version}/{partition}=../{file}.parquet`).
pub(crate) fn dataset_glob(dataset_dir: &Path) -> Option<String> {
    let version = std::fs::read_dir(dataset_dir)
        .ok()?
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i64>().ok())
        .max()?;
    Some(format!("{}/{version}/**/*.parquet", dataset_dir.display()))
}

/// Runs `benches/growth/duckdb_q.py` on `glob`, `runs` timed runs per query.
pub(crate) fn run(python: &Path, glob: &str, runs: usize) -> Result<Peer, String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/growth/duckdb_q.py");
    let out = Command::new(python)
        .arg(&script)
        .arg(glob)
        .args(["--runs", &runs.to_string()])
        .output()
        .map_err(|e| format!("start {}: {e}", python.display()))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let last = err.lines().last().unwrap_or("").to_string();
        return Err(format!(
            "{} failed ({}): {last}",
            script.display(),
            out.status
        ));
    }
    let v: Value = serde_json::from_slice(&out.stdout).map_err(|e| format!("its answer: {e}"))?;
    let timed = |q: &str| Timed {
        ms: v[q]["ms"].as_f64().unwrap_or(f64::NAN),
        rows: v[q]["rows"].as_u64().unwrap_or(0) as usize,
    };
    Ok(Peer {
        version: v["duckdb"].as_str().unwrap_or("?").to_string(),
        files: v["files"].as_u64().unwrap_or(0),
        rows: v["rows"].as_u64().unwrap_or(0),
        q1: timed("q1"),
        q2: timed("q2"),
    })
}
