//! Large queries: the result streams as CSV into a part file in staging, which is kept as the
//! object `results/{job_id}.csv` when complete (so a half-written result is never served), with
//! progress on the job.

use std::io::BufWriter;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use futures_util::StreamExt;

use super::output::CsvRows;
use super::run::{engine_error, PreparedQuery};
use crate::error::{Error, Result};
use crate::jobs::Jobs;
use crate::storage::{keys, StagedObject, Storage};

/// Runs `query` to the object `results/{job_id}.csv`; returns its key and the number of rows. If
/// the run fails or is dropped (its time limit), the partial file is removed.
pub async fn write_csv_result(
    query: PreparedQuery,
    jobs: &Jobs,
    job_id: &str,
    storage: &Storage,
) -> Result<(String, u64)> {
    std::fs::create_dir_all(storage.staging_root())?;
    let part = PartFile(storage.staged_result(job_id));
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
    // SUCCESS promises the result: kept durably (off the async workers: it syncs).
    let object = StagedObject {
        staged: part.0.clone(),
        key: keys::result_key(&format!("{job_id}.csv")),
    };
    let objects = storage.objects().clone();
    let key = object.key.clone();
    tokio::task::spawn_blocking(move || objects.put(&[object]))
        .await
        .map_err(|e| Error::internal(format!("keeping a query result: {e}")))??;
    Ok((key, count))
}

/// A result being written: removed when dropped, which is a no-op once kept.
struct PartFile(PathBuf);

impl Drop for PartFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Removes results older than `ttl` (unfinished ones are in staging, removed with it); returns how
/// many.
pub fn remove_expired_results(storage: &Storage, ttl: Duration) -> usize {
    let objects = storage.objects();
    let Ok(results) = objects.list(keys::RESULTS) else {
        return 0;
    };
    let now = SystemTime::now();
    let mut removed = 0;
    for result in results {
        let age = now.duration_since(result.modified).unwrap_or_default();
        // Part files of a version that wrote them here, beside the results.
        let limit = if result.key.ends_with(".part") {
            ttl.max(Duration::from_secs(86_400))
        } else {
            ttl
        };
        if age > limit && objects.delete(&result.key).is_ok() {
            removed += 1;
        }
    }
    removed
}
