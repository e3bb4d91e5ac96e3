//! The compactor: one thread per node that decides when a dataset version's small files are
//! merged ([`crate::compaction`]) and has the dataset's actor commit the result. It runs at the
//! lowest CPU priority, one merge at a time, reading and writing a batch at a time; uploads and
//! queries never wait for a merge, only for its short catalog commit.
//!
//! After each commit the version is checked at once for partitions with `min_files` small files
//! (a dataset fed faster than the idle time still stays compact); once a version has had no
//! commit for the idle time, any partition with two small files is merged.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::catalog::{refusal::is_commit_conflict, FilePart, SharedCatalog};
use crate::compaction::{input_parts, merge, plan, CompactionSettings, Group, Trigger};
use crate::dataset::{CommitMerges, StagedMerge};
use crate::error::{Error, Result};
use crate::jobs::Jobs;
use crate::key::DatasetKey;
use crate::manifest::snapshot;
use crate::registry::Registry;
use crate::storage::Storage;
use crate::traced::Traced;

/// The compactor's counters since the engine opened, for metrics.
#[derive(Debug, Default)]
pub struct CompactionFigures {
    /// Merges committed (one merged file each).
    pub merges: AtomicU64,
    /// Small files replaced by merged ones.
    pub files_replaced: AtomicU64,
    pub rows_written: AtomicU64,
    pub bytes_written: AtomicU64,
    /// Merges dropped because another change removed one of their files first.
    pub conflicts: AtomicU64,
    pub failures: AtomicU64,
    /// 1 while a merge runs.
    pub running: AtomicU64,
}

enum Request {
    /// A commit landed on the version.
    Committed(DatasetKey, i64),
    /// Someone asked (a COMPACT job).
    Demand(DatasetKey, i64, String),
}

/// A handle on the compactor thread.
#[derive(Clone)]
pub(super) struct Compactor {
    requests: Sender<Request>,
    pub(super) figures: Arc<CompactionFigures>,
}

/// What the compactor thread works with.
struct Worker {
    catalog: SharedCatalog,
    storage: Storage,
    registry: Registry,
    jobs: Jobs,
    settings: CompactionSettings,
    runtime: tokio::runtime::Handle,
    figures: Arc<CompactionFigures>,
}

impl Compactor {
    /// Starts the thread; call inside the engine's runtime (the thread reaches actors through it).
    pub(super) fn start(
        catalog: SharedCatalog,
        storage: Storage,
        registry: Registry,
        jobs: Jobs,
        settings: CompactionSettings,
    ) -> Result<Compactor> {
        let (requests, received) = std::sync::mpsc::channel();
        let figures = Arc::new(CompactionFigures::default());
        let worker = Worker {
            catalog,
            storage,
            registry,
            jobs,
            settings,
            runtime: tokio::runtime::Handle::current(),
            figures: figures.clone(),
        };
        std::thread::Builder::new()
            .name("rapid-compactor".into())
            .spawn(move || {
                crate::query::set_thread_nice(COMPACTION_NICE);
                worker.serve(received)
            })?;
        Ok(Compactor { requests, figures })
    }

    /// A commit landed on `key`'s `version`.
    pub(super) fn committed(&self, key: &DatasetKey, version: i64) {
        let _ = self.requests.send(Request::Committed(key.clone(), version));
    }

    /// Compact `key`'s `version` now, reporting to job `job_id`.
    pub(super) fn demand(&self, key: &DatasetKey, version: i64, job_id: &str) {
        let _ = self
            .requests
            .send(Request::Demand(key.clone(), version, job_id.to_string()));
    }
}

/// How often the thread looks for versions that have gone quiet.
const TICK: Duration = Duration::from_millis(500);

impl Worker {
    fn serve(self, received: Receiver<Request>) {
        // Versions with commits not yet settled, and when their last commit landed. At start,
        // every dataset's latest version: files stored before (or by a crash mid-merge) settle.
        let mut quiet_since: HashMap<(DatasetKey, i64), Instant> = HashMap::new();
        if self.settings.automatic {
            for (key, version) in self.latest_versions() {
                quiet_since.insert((key, version), Instant::now());
            }
        }
        loop {
            let mut busy: Vec<(DatasetKey, i64)> = Vec::new();
            let mut next = received.recv_timeout(TICK);
            loop {
                match next {
                    Ok(Request::Committed(key, version)) => {
                        quiet_since.insert((key.clone(), version), Instant::now());
                        if !busy.contains(&(key.clone(), version)) {
                            busy.push((key, version));
                        }
                    }
                    Ok(Request::Demand(key, version, job_id)) => {
                        self.on_demand(&key, version, &job_id)
                    }
                    Err(RecvTimeoutError::Timeout) => break,
                    Err(RecvTimeoutError::Disconnected) => return,
                }
                // Everything already queued is taken before any work: a burst is one check.
                next = received.try_recv().map_err(|e| match e {
                    std::sync::mpsc::TryRecvError::Empty => RecvTimeoutError::Timeout,
                    std::sync::mpsc::TryRecvError::Disconnected => RecvTimeoutError::Disconnected,
                });
            }
            if !self.settings.automatic {
                quiet_since.clear();
                continue;
            }
            for (key, version) in busy {
                self.run_logged(&key, version, Trigger::Busy);
            }
            let settled: Vec<(DatasetKey, i64)> = quiet_since
                .iter()
                .filter(|(_, since)| since.elapsed() >= self.settings.idle)
                .map(|(k, _)| k.clone())
                .collect();
            for (key, version) in settled {
                quiet_since.remove(&(key.clone(), version));
                self.run_logged(&key, version, Trigger::Settled);
            }
        }
    }

    fn latest_versions(&self) -> Vec<(DatasetKey, i64)> {
        let keys = self.catalog.dataset_keys().unwrap_or_else(|e| {
            tracing::warn!(error = %e.report(), "compactor: could not list datasets");
            Vec::new()
        });
        keys.into_iter()
            .filter_map(|key| match self.catalog.find_dataset(&key) {
                Ok(Some(record)) => Some((key, record.latest_version)),
                _ => None,
            })
            .collect()
    }

    fn on_demand(&self, key: &DatasetKey, version: i64, job_id: &str) {
        let outcome = self.run(key, version, Trigger::Settled, Some(job_id));
        let recorded = match outcome {
            Ok(_) => self.jobs.succeed(job_id),
            Err(e) => {
                tracing::warn!(dataset = %key.display(), version, error = %e.report(), "compaction failed");
                self.jobs.fail(job_id, &crate::ingest::messages(&e))
            }
        };
        if let Err(e) = recorded {
            tracing::error!(job_id, error = %e.report(), "could not record a compaction job");
        }
    }

    fn run_logged(&self, key: &DatasetKey, version: i64, trigger: Trigger) {
        if let Err(e) = self.run(key, version, trigger, None) {
            self.figures.failures.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(dataset = %key.display(), version, error = %e.report(), "compaction failed");
        }
    }

    /// Merges what `trigger` asks for in the version; returns the files replaced. The files are
    /// leased while read, so no commit deletes them under the merge. Merged files are committed
    /// a batch at a time ([`MERGES_PER_COMMIT`]).
    fn run(
        &self,
        key: &DatasetKey,
        version: i64,
        trigger: Trigger,
        job_id: Option<&str>,
    ) -> Result<usize> {
        let Some(record) = self.catalog.find_dataset(key)? else {
            return Err(key.not_found());
        };
        let (files, _lease) = snapshot(self.catalog.as_ref(), &self.storage, record.id, version)?;
        let groups = plan(&files, &self.settings, trigger);
        if groups.is_empty() {
            return Ok(0);
        }
        let parts = input_parts(self.catalog.as_ref(), &groups)?;
        let mut done = Done::default();
        let mut batch = Batch::default();
        for group in groups {
            self.figures.running.store(1, Ordering::Relaxed);
            let staged = self.stage(group, &parts);
            self.figures.running.store(0, Ordering::Relaxed);
            batch.push(staged?);
            if batch.full(&self.settings) {
                let full = std::mem::take(&mut batch);
                self.commit_batch(record.id, key, version, full, &mut done, job_id)?;
            }
        }
        self.commit_batch(record.id, key, version, batch, &mut done, job_id)?;
        tracing::info!(dataset = %key.display(), version, replaced = done.files, "compacted");
        Ok(done.files)
    }

    /// One group merged into a staged file.
    fn stage(&self, group: Group, parts: &HashMap<i64, Vec<FilePart>>) -> Result<StagedMerge> {
        let staged = self
            .storage
            .staging_root()
            .join(format!("compact-{}.parquet", uuid::Uuid::new_v4().simple()));
        match merge(&self.storage, &group.files, parts, &staged, &mut |_| {}) {
            Ok(merged) => Ok(StagedMerge {
                staged,
                partition_path: group.partition_path,
                replaces: group.files.iter().map(|f| f.id).collect(),
                merged,
            }),
            Err(e) => {
                let _ = std::fs::remove_file(&staged);
                Err(e)
            }
        }
    }

    /// The batch committed by the dataset's actor in one catalog step. A conflict (another
    /// change took one of its files) drops the batch's work, counted; the commit that caused it
    /// wakes the compactor, which plans again from what is left.
    fn commit_batch(
        &self,
        dataset_id: i64,
        key: &DatasetKey,
        version: i64,
        batch: Batch,
        done: &mut Done,
        job_id: Option<&str>,
    ) -> Result<()> {
        if batch.merges.is_empty() {
            return Ok(());
        }
        let (count, rows, bytes) = batch.figures();
        let staged: Vec<PathBuf> = batch.merges.iter().map(|m| m.staged.clone()).collect();
        let message = CommitMerges {
            dataset_id,
            version,
            merges: batch.take(),
        };
        let registry = self.registry.clone();
        let key = key.clone();
        let committed = self.runtime.block_on(async move {
            let actor = registry.dataset_actor(&key).await?;
            actor
                .send(Traced::new(message))
                .await
                .map_err(Error::from)?
        });
        // A commit moved them into place; one that failed part-way may have left some.
        for path in &staged {
            let _ = std::fs::remove_file(path);
        }
        let files = match committed {
            Ok(files) => files,
            Err(e) if is_commit_conflict(&e) => {
                self.figures.conflicts.fetch_add(1, Ordering::Relaxed);
                return Ok(());
            }
            Err(e) => return Err(e),
        };
        let figures = &self.figures;
        figures.merges.fetch_add(count, Ordering::Relaxed);
        figures
            .files_replaced
            .fetch_add(files as u64, Ordering::Relaxed);
        figures.rows_written.fetch_add(rows, Ordering::Relaxed);
        figures.bytes_written.fetch_add(bytes, Ordering::Relaxed);
        done.files += files;
        done.rows += rows;
        match job_id {
            Some(job_id) => self.jobs.set_progress(job_id, done.rows),
            None => Ok(()),
        }
    }
}

/// Merged files committed together: one catalog commit (its fsyncs, Delta log version and
/// retention pass) for up to this many, not one each. Appends spread over a version's
/// partitions make them all due at once, and a commit per partition had each append wait in
/// the dataset's actor behind a score of merge commits (issue 33's growth benchmark).
const MERGES_PER_COMMIT: usize = 64;

/// What a run has committed so far.
#[derive(Default)]
struct Done {
    files: usize,
    rows: u64,
}

/// Staged merges not yet committed; their staged files are removed when dropped (a commit
/// moves them into place first).
#[derive(Default)]
struct Batch {
    merges: Vec<StagedMerge>,
    bytes: u64,
}

impl Batch {
    fn push(&mut self, merge: StagedMerge) {
        self.bytes += merge.merged.bytes.max(0) as u64;
        self.merges.push(merge);
    }

    /// Enough to commit now: many merges, or about a merged file's target size of them.
    fn full(&self, settings: &CompactionSettings) -> bool {
        self.merges.len() >= MERGES_PER_COMMIT || self.bytes >= settings.target_bytes
    }

    /// (merges, rows, bytes).
    fn figures(&self) -> (u64, u64, u64) {
        let rows = self
            .merges
            .iter()
            .map(|m| m.merged.rows.max(0) as u64)
            .sum();
        (self.merges.len() as u64, rows, self.bytes)
    }

    fn take(mut self) -> Vec<StagedMerge> {
        std::mem::take(&mut self.merges)
    }
}

impl Drop for Batch {
    fn drop(&mut self) {
        for merge in &self.merges {
            let _ = std::fs::remove_file(&merge.staged);
        }
    }
}

/// Compaction waits for everything else on the machine.
const COMPACTION_NICE: i32 = 19;
