//! Slow password hashing on a small, fixed pool of threads.
//!
//! Each argon2id check needs 19 MiB of working memory. Run on an unbounded blocking pool, a flood
//! of sign-ins holds one such buffer per request at once, and the allocator keeps what it was
//! given. Here a fixed number of threads each own one buffer, allocated once and reused, so the
//! memory for hashing is `workers × 19 MiB` whatever arrives. Jobs wait in a short bounded queue;
//! when it is full, or a job waited too long, the caller gets [`ErrorKind::Busy`] at once and
//! nothing is computed for it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use argon2::{Block, Params};

use crate::error::{Error, Result};

/// How the pool is sized.
#[derive(Debug, Clone, Copy)]
pub struct HashPoolSettings {
    /// Threads hashing at once (each owns one argon2 working buffer).
    pub workers: usize,
    /// Jobs that may wait for a thread; beyond it, 503 at once.
    pub queue: usize,
    /// Longest a job may wait for a thread before its caller is told 503.
    pub max_wait: Duration,
}

impl Default for HashPoolSettings {
    fn default() -> Self {
        // One core is always left to everything else: a flood of sign-ins must not hold them all.
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        let workers = cores.saturating_sub(1).max(1);
        HashPoolSettings {
            workers,
            queue: 2 * workers,
            max_wait: Duration::from_millis(1000),
        }
    }
}

/// The working memory one thread lends to each hash it computes.
pub type Memory = [Block];

type Job = Box<dyn FnOnce(&mut Memory) + Send>;

#[derive(Clone)]
pub struct HashPool {
    tx: SyncSender<Job>,
    max_wait: Duration,
    /// Hashes computed (and jobs skipped because their caller had given up), for the stats.
    computed: Arc<AtomicU64>,
}

const BUSY_MESSAGE: &str = "The service is busy checking other credentials: try again shortly";

impl HashPool {
    pub fn start(settings: HashPoolSettings) -> HashPool {
        let (tx, rx) = sync_channel::<Job>(settings.queue);
        let rx = Arc::new(Mutex::new(rx));
        let (ready_tx, ready_rx) = std::sync::mpsc::channel::<()>();
        let mut started = 0;
        for i in 0..settings.workers.max(1) {
            let (rx, ready) = (rx.clone(), ready_tx.clone());
            let spawned = std::thread::Builder::new()
                .name(format!("hash-{i}"))
                .spawn(move || worker(rx, ready));
            match spawned {
                Ok(_) => started += 1,
                Err(e) => tracing::error!(error = %e, "could not start a password hashing thread"),
            }
        }
        // Each thread has its memory before the service takes requests.
        for _ in 0..started {
            let _ = ready_rx.recv_timeout(Duration::from_secs(10));
        }
        HashPool {
            tx,
            max_wait: settings.max_wait,
            computed: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Runs `work` on a pool thread with its working memory. Busy when the queue is full or the
    /// job has not started within the wait bound; a job whose caller gave up is never started.
    pub async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce(&mut Memory) -> T + Send + 'static,
    ) -> Result<T> {
        let (done_tx, done_rx) = tokio::sync::oneshot::channel::<T>();
        let (started_tx, started_rx) = tokio::sync::oneshot::channel::<()>();
        let computed = self.computed.clone();
        let job: Job = Box::new(move |memory| {
            // The caller stopped waiting (timed out, or its client went away): spend nothing.
            if started_tx.send(()).is_err() {
                return;
            }
            computed.fetch_add(1, Ordering::Relaxed);
            let _ = done_tx.send(work(memory));
        });
        match self.tx.try_send(job) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => return Err(Error::busy(BUSY_MESSAGE)),
            Err(TrySendError::Disconnected(_)) => {
                return Err(Error::internal("the password hashing pool has stopped"))
            }
        }
        // Dropping `started_rx` on timeout makes the job skip itself when a thread reaches it.
        match tokio::time::timeout(self.max_wait, started_rx).await {
            Ok(Ok(())) => {}
            Ok(Err(_)) => return Err(Error::internal("a password hashing thread stopped")),
            Err(_) => return Err(Error::busy(BUSY_MESSAGE)),
        }
        done_rx
            .await
            .map_err(|_| Error::internal("a password hashing job panicked"))
    }

    /// Hashes computed since start.
    pub fn computed(&self) -> u64 {
        self.computed.load(Ordering::Relaxed)
    }
}

fn worker(rx: Arc<Mutex<Receiver<Job>>>, ready: std::sync::mpsc::Sender<()>) {
    // Allocated once per thread, reused by every hash this thread computes.
    let mut memory = vec![Block::default(); Params::DEFAULT.block_count()];
    let _ = ready.send(());
    drop(ready);
    loop {
        // A poisoned lock means another worker panicked while holding it; the receiver is fine.
        let job = {
            let guard = rx.lock().unwrap_or_else(|p| p.into_inner());
            guard.recv()
        };
        match job {
            Ok(job) => {
                let outcome =
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job(&mut memory)));
                if outcome.is_err() {
                    tracing::error!("a password hashing job panicked");
                }
            }
            // Every sender is gone: the service is stopping.
            Err(_) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn wait_for(pool: &HashPool, computed: u64) {
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while pool.computed() < computed {
            assert!(
                std::time::Instant::now() < deadline,
                "the job never started"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    #[tokio::test]
    async fn jobs_run_with_the_threads_memory_and_a_full_queue_is_busy() {
        let pool = HashPool::start(HashPoolSettings {
            workers: 1,
            queue: 1,
            max_wait: Duration::from_secs(5),
        });
        let len = pool.run(|m| m.len()).await.unwrap();
        assert_eq!(len, Params::DEFAULT.block_count());

        // Hold the only thread, fill the one queue slot: the third job is refused at once.
        let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
        let p = pool.clone();
        let holding = tokio::spawn(async move {
            p.run(move |_| {
                let _ = release_rx.recv();
            })
            .await
        });
        wait_for(&pool, 2).await;
        let p = pool.clone();
        let queued = tokio::spawn(async move { p.run(|_| 7).await });
        tokio::time::sleep(Duration::from_millis(50)).await;
        let refused = pool.run(|_| 0).await.unwrap_err();
        assert_eq!(refused.kind, crate::ErrorKind::Busy);
        release_tx.send(()).unwrap();
        holding.await.unwrap().unwrap();
        assert_eq!(queued.await.unwrap().unwrap(), 7);
    }

    #[tokio::test]
    async fn a_job_that_waited_too_long_is_busy_and_never_runs() {
        let pool = HashPool::start(HashPoolSettings {
            workers: 1,
            queue: 4,
            max_wait: Duration::from_millis(500),
        });
        let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
        let p = pool.clone();
        let holding = tokio::spawn(async move {
            p.run(move |_| {
                let _ = release_rx.recv();
            })
            .await
        });
        wait_for(&pool, 1).await;
        let late = pool.run(|_| 1).await.unwrap_err();
        assert_eq!(late.kind, crate::ErrorKind::Busy);
        release_tx.send(()).unwrap();
        holding.await.unwrap().unwrap();
        // The timed-out job was skipped: only the holding job and this one were computed.
        assert_eq!(pool.run(|_| 2).await.unwrap(), 2);
        assert_eq!(pool.computed(), 2);
    }
}
