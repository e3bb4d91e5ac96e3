//! Large queries: the result streams as CSV into a part file in staging, which is kept as the
//! object `results/{job_id}.csv` when complete (so a half-written result is never served), with
//! progress on the job.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use datafusion::execution::SendableRecordBatchStream;
use futures_util::StreamExt;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;

use super::output::{csv_header, csv_rows};
use crate::error::{Error, Result};
use crate::jobs::Jobs;
use crate::query::reading::run::{engine_error, PreparedQuery};
use crate::storage::{keys, StagedObject, Storage};

/// Runs `query` to the object `results/{job_id}.csv`; returns its key and the number of rows. If
/// the run fails or is dropped (its time limit), the partial file is removed.
pub async fn write_csv_result(
    query: PreparedQuery,
    jobs: &Jobs,
    job_id: &str,
    storage: &Storage,
) -> Result<(String, u64)> {
    let (names, streams) = query.partition_streams().await?;
    write_csv_streams(names, streams, jobs, job_id, storage).await
}

/// As [`write_csv_result`], for a plan's partition streams and their column `names` (SQL jobs).
pub async fn write_csv_streams(
    names: Vec<String>,
    streams: Vec<SendableRecordBatchStream>,
    jobs: &Jobs,
    job_id: &str,
    storage: &Storage,
) -> Result<(String, u64)> {
    std::fs::create_dir_all(storage.staging_root())?;
    let part = PartFile(storage.staged_result(job_id));
    let mut file = std::fs::File::create(&part.0)?;
    let mut header = Vec::new();
    csv_header(&names, &mut header);
    file.write_all(&header)?;
    let count = write_rows(streams, &mut file, |rows| {
        let _ = jobs.set_progress(job_id, rows);
    })
    .await?;
    storage.durability().sync_file(&file)?;
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

/// Formatted rows of one batch, numbered from `first`, holding a place among those in flight.
struct Formatted {
    first: u64,
    rows: u64,
    bytes: Vec<u8>,
    _place: OwnedSemaphorePermit,
}

/// Formats each partition's batches on its own task (the query threads: one per core at work)
/// and writes them in row-index order. A task takes the next index range only once it holds a
/// place, and the writer always drains the channel, so at most `IN_FLIGHT` formatted batches
/// wait in memory and the range the writer waits for is always being formatted. Partitions
/// come in any order: a query whose rows are ordered (ORDER BY, LIMIT) plans to one partition.
async fn write_rows(
    streams: Vec<SendableRecordBatchStream>,
    file: &mut std::fs::File,
    progress: impl Fn(u64),
) -> Result<u64> {
    let places = Arc::new(Semaphore::new(IN_FLIGHT));
    let next = Arc::new(AtomicU64::new(0));
    let (tx, mut rx) = tokio::sync::mpsc::channel::<Result<Formatted>>(IN_FLIGHT);
    // Dropped with this future (a failure, the time limit): the formatting tasks end with it.
    let mut tasks = JoinSet::new();
    for mut stream in streams {
        let (places, next, tx) = (places.clone(), next.clone(), tx.clone());
        tasks.spawn(async move {
            while let Some(batch) = stream.next().await {
                let formatted = match batch {
                    // An empty batch would take the same first index as the next one.
                    Ok(batch) if batch.num_rows() == 0 => continue,
                    Ok(batch) => {
                        // unwrap: the semaphore is never closed.
                        let place = places.clone().acquire_owned().await.unwrap();
                        let rows = batch.num_rows() as u64;
                        let first = next.fetch_add(rows, Ordering::SeqCst);
                        let mut bytes =
                            Vec::with_capacity(batch.num_rows() * (8 + 12 * batch.num_columns()));
                        csv_rows(&batch, first, &mut bytes);
                        Ok(Formatted {
                            first,
                            rows,
                            bytes,
                            _place: place,
                        })
                    }
                    Err(e) => Err(engine_error(e)),
                };
                let failed = formatted.is_err();
                if tx.send(formatted).await.is_err() || failed {
                    return;
                }
            }
        });
    }
    drop(tx);
    let (mut written, mut reported) = (0u64, 0u64);
    let mut waiting: BTreeMap<u64, Formatted> = BTreeMap::new();
    while let Some(formatted) = rx.recv().await {
        let formatted = formatted?;
        waiting.insert(formatted.first, formatted);
        while let Some(ready) = waiting.remove(&written) {
            file.write_all(&ready.bytes)?;
            written += ready.rows;
        }
        if written - reported >= 100_000 {
            reported = written;
            progress(written);
        }
    }
    // A task that panicked sent nothing more: its rows must not go missing quietly.
    while let Some(ended) = tasks.join_next().await {
        ended.map_err(|e| Error::internal(format!("formatting a large query's rows: {e}")))?;
    }
    if !waiting.is_empty() {
        return Err(Error::internal("a large query's rows were not all written"));
    }
    Ok(written)
}

/// Formatted batches in memory at once (each about a batch of Arrow data, 8,192 rows).
const IN_FLIGHT: usize = 8;

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

#[cfg(test)]
#[path = "large_tests.rs"]
mod tests;
