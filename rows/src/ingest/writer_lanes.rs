//! The staged Parquet writer on threads of its own, so encoding and compression overlap with
//! parsing. A partitioned upload is written on up to [`MAX_LANES`] lanes, each owning a share
//! of the partitions (a partition's rows always go to the same lane, in order): the single
//! writer thread was the busiest of a CSV upload (0.36 s of 0.70 s for 1M rows) and, after the
//! last chunk was parsed, finished the queued batches alone on one core.
//!
//! Batches are split by partition on the caller's thread; the parts wait for their lane under
//! one budget of [`IN_FLIGHT_BYTES`] (at least one part always passes), so memory stays bounded
//! however the rows fall into partitions.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

use arrow::array::RecordBatch;

use super::writer::{PartitionedWriter, StagedDataFile};
use crate::error::{Error, Result};

/// Most writer threads of one upload.
const MAX_LANES: usize = 2;

/// Most bytes of split batches waiting for or being written by the lanes (about two batches of
/// 64k rows of ten columns).
const IN_FLIGHT_BYTES: usize = 16 << 20;

/// Partitions assigned to lanes in the order they first appear (balanced); past this many,
/// further ones by hash, so the map stays small whatever the partition count.
const MAX_ASSIGNED: usize = 4096;

pub(super) struct BackgroundWriter {
    /// Splits batches by partition; holds no files.
    splitter: PartitionedWriter,
    lanes: Vec<Lane>,
    assigned: HashMap<String, usize>,
    in_flight: Arc<InFlight>,
}

struct Lane {
    tx: Sender<(String, RecordBatch, usize)>,
    thread: JoinHandle<Result<Vec<StagedDataFile>>>,
}

#[derive(Default)]
struct InFlight {
    state: Mutex<Lanes>,
    changed: Condvar,
}

#[derive(Default)]
struct Lanes {
    /// Bytes handed to lanes and not yet written.
    bytes: usize,
    /// A lane's thread has ended: nothing it was sent will be released any more.
    stopped: bool,
}

impl InFlight {
    fn lock(&self) -> std::sync::MutexGuard<'_, Lanes> {
        // A panicking lane is reported by its join; the counter itself stays consistent.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits until `bytes` more fit (or nothing is in flight, or a lane stopped).
    fn reserve(&self, bytes: usize) {
        let mut state = self.lock();
        while state.bytes > 0 && state.bytes + bytes > IN_FLIGHT_BYTES && !state.stopped {
            state = self.changed.wait(state).unwrap_or_else(|p| p.into_inner());
        }
        state.bytes += bytes;
    }

    fn release(&self, bytes: usize) {
        self.lock().bytes -= bytes;
        self.changed.notify_all();
    }

    fn stop(&self) {
        self.lock().stopped = true;
        self.changed.notify_all();
    }
}

/// Marks the lanes' budget as stopped when a lane's thread ends, however it ends: the caller
/// must not wait for bytes that lane will never release.
struct StopOnExit(Arc<InFlight>);

impl Drop for StopOnExit {
    fn drop(&mut self) {
        self.0.stop();
    }
}

impl BackgroundWriter {
    /// `lanes` threads (at most [`MAX_LANES`]; one for a writer without partitions).
    pub(super) fn start(writer: PartitionedWriter, lanes: usize) -> BackgroundWriter {
        let count = if writer.is_partitioned() {
            lanes.clamp(1, MAX_LANES)
        } else {
            1
        };
        let in_flight = Arc::new(InFlight::default());
        let lanes = (0..count)
            .map(|i| {
                let mut lane = writer.lane(i, count);
                let (tx, rx) = channel::<(String, RecordBatch, usize)>();
                let in_flight = in_flight.clone();
                let thread = std::thread::spawn(move || {
                    let _stop = StopOnExit(in_flight.clone());
                    for (path, part, bytes) in rx {
                        let written = lane.append(path, &part);
                        drop(part);
                        in_flight.release(bytes);
                        written?;
                    }
                    lane.finish()
                });
                Lane { tx, thread }
            })
            .collect();
        BackgroundWriter {
            splitter: writer,
            lanes,
            assigned: HashMap::new(),
            in_flight,
        }
    }

    fn lane_of(&mut self, path: &str) -> usize {
        let count = self.lanes.len();
        if let Some(&lane) = self.assigned.get(path) {
            return lane;
        }
        if self.assigned.len() < MAX_ASSIGNED {
            let lane = self.assigned.len() % count;
            self.assigned.insert(path.to_string(), lane);
            return lane;
        }
        // DefaultHasher::new has fixed keys: the same path goes to the same lane every time.
        let mut hasher = DefaultHasher::new();
        path.hash(&mut hasher);
        (hasher.finish() % count as u64) as usize
    }

    pub(super) fn write(mut self, batch: RecordBatch) -> Result<BackgroundWriter> {
        let parts = self.splitter.split(&batch)?;
        drop(batch);
        for (path, part) in parts {
            let lane = self.lane_of(&path);
            let bytes = part.get_array_memory_size();
            self.in_flight.reserve(bytes);
            if self.lanes[lane].tx.send((path, part, bytes)).is_err() {
                // The lane stopped early: its result says why.
                return Err(self
                    .finish()
                    .err()
                    .unwrap_or_else(|| Error::internal("the Parquet writer stopped")));
            }
        }
        Ok(self)
    }

    /// Every lane's files, finished and synced; the first error if a lane failed.
    pub(super) fn finish(self) -> Result<Vec<StagedDataFile>> {
        let mut files = Vec::new();
        let mut first_error = None;
        // Every lane told first, so they finish (and sync) their files at the same time.
        let threads: Vec<_> = self.lanes.into_iter().map(|lane| lane.thread).collect();
        for thread in threads {
            let result = thread
                .join()
                .map_err(|_| Error::internal("the Parquet writer panicked"))
                .and_then(|r| r);
            match result {
                Ok(done) => files.extend(done),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(files),
        }
    }
}

#[cfg(test)]
#[path = "writer_lanes_tests.rs"]
mod tests;
