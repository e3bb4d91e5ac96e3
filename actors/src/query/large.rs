//! Large queries: the result streams as CSV into `results/{job_id}.csv` (written as `.part`
//! and renamed when complete, so a half-written result is never served), with progress on the job.

use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use futures_util::StreamExt;

use super::output::CsvRows;
use super::run::{engine_error, PreparedQuery};
use crate::error::Result;
use crate::jobs::Jobs;
use crate::storage::Storage;

/// Runs `query` to `results/{job_id}.csv`; returns the file and the number of rows. If the run
/// fails or is dropped (its time limit), the partial `.part` file is removed.
pub async fn write_csv_result(
    query: PreparedQuery,
    jobs: &Jobs,
    job_id: &str,
    storage: &Storage,
) -> Result<(PathBuf, u64)> {
    let results = &storage.results_dir();
    std::fs::create_dir_all(results)?;
    let done = storage.result_file(&format!("{job_id}.csv"));
    let part = PartFile(crate::storage::part_file(&done));
    let mut stream = query.stream().await?;
    let names: Vec<String> = stream
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    let mut rows = CsvRows::new(BufWriter::with_capacity(
        1 << 20,
        std::fs::File::create(&part.0)?,
    ));
    rows.header(&names)?;
    let mut reported = 0u64;
    while let Some(batch) = stream.next().await {
        rows.write(&batch.map_err(engine_error)?)?;
        if rows.rows() - reported >= 100_000 {
            reported = rows.rows();
            let _ = jobs.set_progress(job_id, reported);
        }
    }
    let count = rows.rows();
    let mut file = rows.finish()?;
    std::io::Write::flush(&mut file)?;
    crate::storage::sync_file(file.get_ref())?;
    let _ = jobs.set_progress(job_id, count);
    std::fs::rename(&part.0, &done)?;
    // SUCCESS promises the file: its name (and the folder's, which may be new) synced.
    crate::storage::sync_dir(results)?;
    if let Some(root) = results.parent() {
        crate::storage::sync_dir(root)?;
    }
    Ok((done, count))
}

/// A result being written: removed when dropped, which is a no-op once renamed into place.
struct PartFile(PathBuf);

impl Drop for PartFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Removes results older than `ttl` and unfinished `.part` files older than a day; returns how many.
pub fn remove_expired_results(results: &Path, ttl: Duration) -> usize {
    let Ok(entries) = std::fs::read_dir(results) else {
        return 0;
    };
    let now = SystemTime::now();
    let mut removed = 0;
    for entry in entries.flatten() {
        let path = entry.path();
        let age = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| now.duration_since(t).ok())
            .unwrap_or_default();
        let limit = if path.extension().is_some_and(|e| e == "part") {
            ttl.max(Duration::from_secs(86_400))
        } else {
            ttl
        };
        if age > limit && std::fs::remove_file(&path).is_ok() {
            removed += 1;
        }
    }
    removed
}
