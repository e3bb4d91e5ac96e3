//! What every query of one engine shares, started with it ([`QueryPools::start`], held by the
//! `Engine`, so two engines in one process have pools of their own): the limits on query
//! expressions, the threads queries run on, a memory pool with a spill folder, admission slots
//! and time limits.
//!
//! - Threads: a runtime of its own, one worker per core with large stacks and a lower priority
//!   (see [`super::runtime`]), so no query work runs on an HTTP worker and a busy engine never
//!   delays cheap requests.
//! - Admission: a sync query needs a slot; with every slot taken a request waits a moment, then
//!   is refused with `Busy` (503), rather than queueing without bound. A large-query job takes
//!   a slot or a place in a bounded wait list ([`super::job_slots`]).
//! - Time: each run is bounded; at its limit the work's future is dropped on the query runtime,
//!   which stops DataFusion (its spawned tasks abort on drop, at their next batch) and frees its
//!   memory; the slot is held until the last of those tasks has stopped.
//! - Memory: one DataFusion memory pool for all queries; sorts and aggregations spill under
//!   `{data}/spill` (emptied at start), or fail with a clear error.

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use datafusion::catalog::CatalogProviderList;
use datafusion::execution::disk_manager::{DiskManagerBuilder, DiskManagerMode};
use datafusion::execution::memory_pool::FairSpillPool;
use datafusion::execution::runtime_env::RuntimeEnvBuilder;
use datafusion::execution::SessionState;
use datafusion::prelude::{SessionConfig, SessionContext};
use tokio::sync::{oneshot, OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinHandle;

pub use super::load::QueryKind;
use super::work_scope::WorkScope;
use crate::error::{Error, ErrorKind, Result};
use crate::query::language::limits::QueryLimits;

/// The settings of the query engine (docs/security.md, Query limits).
#[derive(Debug, Clone)]
pub struct QuerySettings {
    pub limits: QueryLimits,
    /// Longest a synchronous query may run (parse to last byte of the answer).
    pub timeout: Duration,
    /// Longest a large-query job may run.
    pub large_timeout: Duration,
    /// Memory all running queries may reserve together.
    pub memory_bytes: usize,
    /// Where sorts and aggregations spill; `None`: the system's temporary folder.
    pub spill_dir: Option<PathBuf>,
    /// Most bytes spilled at once, all queries together.
    pub spill_bytes: u64,
    /// Synchronous queries running at once.
    pub concurrency: usize,
    /// Large-query jobs running at once.
    pub large_concurrency: usize,
    /// Large-query jobs accepted while every slot is taken, started as slots free (see
    /// [`super::job_slots`]).
    pub large_queue: usize,
    /// How long a query waits for a slot before it is refused.
    pub queue_wait: Duration,
    /// Threads running queries (default: one per query slot, see [`default_threads`]).
    pub threads: usize,
}

/// The machine's cores, as the default size of the query pools.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

impl Default for QuerySettings {
    fn default() -> Self {
        let concurrency = (2 * cores()).max(4);
        let large_concurrency = (cores() / 2).max(1);
        QuerySettings {
            limits: QueryLimits::default(),
            timeout: Duration::from_secs(30),
            large_timeout: Duration::from_secs(3600),
            memory_bytes: 1 << 30,
            spill_dir: None,
            spill_bytes: 10 << 30,
            concurrency,
            large_concurrency,
            large_queue: default_large_queue(large_concurrency),
            queue_wait: Duration::from_millis(1000),
            threads: default_threads(concurrency, large_concurrency),
        }
    }
}

/// A thread for every query that may run at once. Work on one thread is cooperative: a short
/// query queued behind a long one's batches waits for each of them. With a thread each, the
/// kernel shares the cores between them by time slices instead, and the short one is not held
/// up. Stacks are address space until used, and the admission slots bound the count.
pub fn default_threads(concurrency: usize, large_concurrency: usize) -> usize {
    concurrency + large_concurrency
}

/// Large-query jobs that may wait for a slot: eight per slot. A waiting job holds its checked
/// plan (kilobytes), not data.
pub fn default_large_queue(large_concurrency: usize) -> usize {
    8 * large_concurrency.max(1)
}

/// A query's place in its pool, given back when dropped.
#[derive(Debug)]
pub struct Slot {
    // Dropped first (declaration order): the place is free before `released` closes.
    _permit: OwnedSemaphorePermit,
    released: Option<oneshot::Sender<()>>,
}

impl Slot {
    pub(super) fn new(permit: OwnedSemaphorePermit) -> Slot {
        Slot {
            _permit: permit,
            released: None,
        }
    }

    /// Ends (closed, never sent) once the slot has been dropped and its place is free.
    pub(super) fn on_release(&mut self) -> oneshot::Receiver<()> {
        let (release, released) = oneshot::channel();
        self.released = Some(release);
        released
    }
}

pub struct QueryPools {
    settings: QuerySettings,
    /// Every query's session starts as a copy of this one (see session::from_template).
    template: SessionState,
    /// Where query work is spawned.
    handle: tokio::runtime::Handle,
    /// Owned so that it stops with the pools (see the `Drop` below).
    runtime: Option<tokio::runtime::Runtime>,
    sync_slots: Arc<Semaphore>,
    pub(super) large_slots: Arc<Semaphore>,
    /// Places for jobs waiting for one of `large_slots`.
    pub(super) large_queue: Arc<Semaphore>,
    pub(super) load: super::load::Counters,
    plans: crate::query::reading::plan_cache::PlanCache,
}

/// How long past its limit a caller waits for work that has not stopped by itself.
const CALLER_GRACE: Duration = Duration::from_secs(2);

tokio::task_local! {
    /// The memory limit of the pools running the current work, so that an out-of-memory error
    /// names the limit of the engine that ran it (see `reading::run::engine_error`).
    pub(crate) static MEMORY_LIMIT: usize;
}

impl QueryPools {
    /// The pools of one engine: empties the spill folder, starts the query threads.
    pub fn start(settings: QuerySettings) -> Result<Arc<QueryPools>> {
        QueryPools::new(settings).map(Arc::new)
    }

    pub(crate) fn new(settings: QuerySettings) -> Result<QueryPools> {
        let mut disk =
            DiskManagerBuilder::default().with_max_temp_directory_size(settings.spill_bytes);
        if let Some(dir) = &settings.spill_dir {
            if dir.exists() {
                std::fs::remove_dir_all(dir)?;
            }
            std::fs::create_dir_all(dir)?;
            disk = disk.with_mode(DiskManagerMode::Directories(vec![dir.clone()]));
        }
        let env = RuntimeEnvBuilder::new()
            .with_memory_pool(Arc::new(FairSpillPool::new(settings.memory_bytes)))
            .with_disk_manager_builder(disk)
            .build_arc()
            .map_err(|e| Error::internal(format!("query engine: {e}")))?;
        let runtime = super::runtime::build(settings.threads.max(1))?;
        let config = SessionConfig::new()
            .with_target_partitions(2)
            .with_information_schema(false)
            // The statement wraps the user's expressions in a few levels of its own.
            .set_usize(
                "datafusion.sql_parser.recursion_limit",
                settings.limits.max_depth + 20,
            );
        let template = crate::query::rewrites::session::new_context(config, env).state();
        Ok(QueryPools {
            template,
            sync_slots: Arc::new(Semaphore::new(settings.concurrency.max(1))),
            large_slots: Arc::new(Semaphore::new(settings.large_concurrency.max(1))),
            large_queue: Arc::new(Semaphore::new(settings.large_queue)),
            load: super::load::Counters::default(),
            plans: Default::default(),
            settings,
            handle: runtime.handle().clone(),
            runtime: Some(runtime),
        })
    }

    pub fn settings(&self) -> &QuerySettings {
        &self.settings
    }

    /// A DataFusion session over the shared memory pool and spill folder, with a catalog of
    /// its own.
    pub fn session(&self) -> SessionContext {
        crate::query::rewrites::session::from_template(&self.template)
    }

    /// A session for SQL statements: `catalogs` instead of a catalog of its own (see
    /// `query::sql::tables`), `default_catalog` for unqualified names, `information_schema` on.
    pub fn sql_session(
        &self,
        catalogs: Arc<dyn CatalogProviderList>,
        default_catalog: &str,
    ) -> SessionContext {
        let mut state = self.template.clone();
        let options = state.config_mut().options_mut();
        options.catalog.information_schema = true;
        options.catalog.default_catalog = default_catalog.to_string();
        options.catalog.default_schema = "public".to_string();
        state.register_catalog_list(catalogs);
        SessionContext::new_with_state(state)
    }

    /// A task context for executing a plan of one of [`Self::session`]'s sessions (they differ
    /// from the template only in their catalog and planning options), with the current run's
    /// token: a kept plan runs without a session being made for it.
    pub fn task_context(&self) -> Arc<datafusion::execution::TaskContext> {
        super::work_scope::task_context_of(&self.template)
    }

    /// Physical plans kept for queries asked again.
    pub fn plans(&self) -> &crate::query::reading::plan_cache::PlanCache {
        &self.plans
    }

    /// Running, waiting and refused queries of both pools, and the memory they hold (for metrics).
    pub fn load(&self) -> super::load::QueryLoad {
        let pool = |kind, slots: &Semaphore, size: usize| {
            self.load.pool(kind, size.max(1), slots.available_permits())
        };
        super::load::QueryLoad {
            sync: pool(QueryKind::Sync, &self.sync_slots, self.settings.concurrency),
            large: pool(
                QueryKind::Large,
                &self.large_slots,
                self.settings.large_concurrency,
            ),
            memory_bytes: self.template.runtime_env().memory_pool.reserved() as u64,
        }
    }

    /// A slot in `kind`'s pool: at once, or after at most the queue wait; else `Busy` (503).
    pub async fn admit(&self, kind: QueryKind) -> Result<Slot> {
        let (slots, size, setting) = match kind {
            QueryKind::Sync => (
                &self.sync_slots,
                self.settings.concurrency,
                "RAPID_QUERY_CONCURRENCY",
            ),
            QueryKind::Large => (
                &self.large_slots,
                self.settings.large_concurrency,
                "RAPID_LARGE_QUERY_CONCURRENCY",
            ),
        };
        let permit = match slots.clone().try_acquire_owned() {
            Ok(p) => Some(p),
            Err(_) => {
                let _waiting = self.load.wait(kind);
                tokio::time::timeout(self.settings.queue_wait, slots.clone().acquire_owned())
                    .await
                    .ok()
                    .and_then(|r| r.ok())
            }
        };
        if permit.is_none() {
            self.load.refuse(kind);
        }
        permit.map(Slot::new).ok_or_else(|| {
            let what = match kind {
                QueryKind::Sync => "queries",
                QueryKind::Large => "large-query jobs",
            };
            Error::new(
                ErrorKind::Busy,
                format!(
                    "The service is running as many {what} as it allows ({size}, {setting}): \
                     try again in a moment"
                ),
            )
        })
    }

    /// Runs `work` on the query runtime for at most `limit`, holding `slot` until it ends. At the
    /// limit the work is dropped there (DataFusion stops: its leaves yield after every batch, see
    /// yielding) and `timed_out` is the answer. If the caller goes away (a client disconnects),
    /// the work is dropped the same way. The answer comes at once; the slot is given back only
    /// once every pipeline of the work has stopped (see work_scope), since the partitions
    /// DataFusion spawned stop at their next batch, not at once. Should the work not yield at
    /// all, the caller still answers soon after the limit.
    pub async fn run<T: Send + 'static>(
        &self,
        slot: Option<Slot>,
        limit: Duration,
        work: impl Future<Output = Result<T>> + Send + 'static,
        timed_out: Error,
    ) -> Result<T> {
        let inside = timed_out.clone();
        let (leave, left) = oneshot::channel::<()>();
        let (answer, answered) = oneshot::channel::<Result<T>>();
        let work = MEMORY_LIMIT.scope(self.settings.memory_bytes, work);
        // Not aborted when dropped: the task ends the work itself and then frees the slot.
        self.handle.spawn(async move {
            // Declared first, dropped last: the slot is free only once the work is gone.
            let _slot = slot;
            let scope = WorkScope::new();
            let result = tokio::select! {
                done = tokio::time::timeout(limit, scope.run(work)) => match done {
                    Ok(result) => result,
                    Err(_) => Err(inside),
                },
                // The caller dropped its wait (the sender went with it): nobody needs the answer.
                _ = left => Err(Error::internal("the caller went away")),
            };
            let _ = answer.send(result);
            scope.ended().await;
        });
        let waited = async move {
            // Dropped with this wait if the caller goes away: the task then drops the work.
            let _leave = leave;
            answered.await.unwrap_or_else(|_| {
                // The sender went without an answer: the work panicked.
                Err(Error::internal("query task panicked"))
            })
        };
        match tokio::time::timeout(limit + CALLER_GRACE, waited).await {
            Ok(result) => result,
            Err(_) => Err(timed_out),
        }
    }

    /// Runs `work` on the query runtime and waits for it from any runtime, without a slot or a
    /// time limit (bounded work: dataset info, the PostgreSQL listener). Dropping the wait
    /// aborts the work.
    pub async fn spawn<T: Send + 'static>(
        &self,
        work: impl Future<Output = Result<T>> + Send + 'static,
    ) -> Result<T> {
        let work = MEMORY_LIMIT.scope(self.settings.memory_bytes, work);
        AbortOnDrop(self.handle.spawn(work)).await
    }
}

impl Drop for QueryPools {
    /// The last engine handle may go inside an async context (a test's, the server's at
    /// shutdown), where dropping a runtime blocks and so panics: its threads are told to stop
    /// and not waited for.
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// A task handle that aborts its task when dropped before the task ends.
struct AbortOnDrop<T>(JoinHandle<Result<T>>);

impl<T> Future for AbortOnDrop<T> {
    type Output = Result<T>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<T>> {
        Pin::new(&mut self.0).poll(cx).map(|joined| match joined {
            Ok(result) => result,
            Err(e) if e.is_panic() => Err(Error::internal(format!("query task panicked: {e}"))),
            Err(e) => Err(Error::internal(format!("query task: {e}"))),
        })
    }
}

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

#[cfg(test)]
#[path = "pools_tests.rs"]
mod tests;
