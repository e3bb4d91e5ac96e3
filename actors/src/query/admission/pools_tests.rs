//! The pools' admission, time limits, cancellation and threads. Each test builds its own
//! pools and drives them from a separate small runtime (a pools' runtime must not be dropped
//! inside another runtime's task).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::*;

fn engine_with(concurrency: usize, queue_wait_ms: u64) -> QueryPools {
    QueryPools::new(QuerySettings {
        concurrency,
        large_concurrency: 1,
        queue_wait: Duration::from_millis(queue_wait_ms),
        threads: 2,
        ..QuerySettings::default()
    })
    .unwrap()
}

fn block_on<F: Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

/// Sets its flag when dropped: shows that a piece of work was really dropped.
struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

fn wait_for(flag: &AtomicBool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if flag.load(Ordering::SeqCst) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    false
}

#[test]
fn a_full_pool_refuses_with_busy_after_the_wait() {
    let engine = engine_with(1, 50);
    block_on(async {
        let first = engine.admit(QueryKind::Sync).await.unwrap();
        let err = engine.admit(QueryKind::Sync).await.unwrap_err();
        assert_eq!(err.kind, ErrorKind::Busy);
        assert!(err.to_string().contains("RAPID_QUERY_CONCURRENCY"), "{err}");
        // The large-query pool is separate.
        let large = engine.admit(QueryKind::Large).await.unwrap();
        let err = engine.admit(QueryKind::Large).await.unwrap_err();
        assert!(
            err.to_string().contains("RAPID_LARGE_QUERY_CONCURRENCY"),
            "{err}"
        );
        drop((first, large));
        engine.admit(QueryKind::Sync).await.unwrap();
    });
}

#[test]
fn a_waiting_query_gets_the_slot_freed_during_its_wait() {
    let engine = engine_with(1, 5_000);
    block_on(async {
        let first = engine.admit(QueryKind::Sync).await.unwrap();
        let release = async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            drop(first);
        };
        let (_, second) = tokio::join!(release, engine.admit(QueryKind::Sync));
        second.unwrap();
    });
}

/// Runs `work` in a sync slot with a 100 ms limit; the work never ends by itself, so the answer
/// is the limit's error.
async fn run_past_its_limit(
    engine: &QueryPools,
    work: impl Future<Output = Result<()>> + Send + 'static,
) -> Error {
    let slot = engine.admit(QueryKind::Sync).await.unwrap();
    engine
        .run(
            Some(slot),
            Duration::from_millis(100),
            work,
            Error::invalid("too long"),
        )
        .await
        .unwrap_err()
}

#[test]
fn work_past_its_limit_is_dropped_and_its_slot_freed() {
    let engine = engine_with(1, 0);
    let dropped = Arc::new(AtomicBool::new(false));
    let flag = DropFlag(dropped.clone());
    block_on(async {
        let err = run_past_its_limit(&engine, async move {
            let _flag = flag;
            std::future::pending::<Result<()>>().await
        })
        .await;
        assert_eq!(err.to_string(), "Invalid: too long");
        assert!(dropped.load(Ordering::SeqCst), "the work was dropped");
        // The slot goes back once the work's pipelines have stopped, on the query runtime: soon,
        // not necessarily before this thread looks (with other tests busy on every core).
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match engine.admit(QueryKind::Sync).await {
                Ok(_) => break,
                Err(_) if Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                Err(e) => panic!("slot given back: {e:?}"),
            }
        }
    });
}

/// A pipeline DataFusion spawned stops at its next batch, after the work's future is gone: the
/// answer does not wait for it, the slot does.
#[test]
fn the_slot_waits_for_every_pipeline_of_the_work_the_answer_does_not() {
    let engine = engine_with(1, 0);
    let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
    let (held_tx, held_rx) = std::sync::mpsc::channel::<()>();
    block_on(async {
        let err = run_past_its_limit(&engine, async move {
            // A context carrying this run's token, held by a "pipeline" elsewhere.
            let context =
                super::super::work_scope::task_context(&datafusion::prelude::SessionContext::new());
            std::thread::spawn(move || {
                let _context = context;
                held_tx.send(()).unwrap();
                let _ = release_rx.recv();
            });
            std::future::pending::<Result<()>>().await
        })
        .await;
        assert_eq!(err.to_string(), "Invalid: too long");
        held_rx.recv().unwrap();
        let busy = engine.admit(QueryKind::Sync).await.unwrap_err();
        assert_eq!(
            busy.kind,
            ErrorKind::Busy,
            "the pipeline still holds the slot"
        );
        assert_eq!(engine.load().sync.running, 1);
        release_tx.send(()).unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        while engine.load().sync.running != 0 {
            assert!(Instant::now() < deadline, "the slot never came back");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        engine
            .admit(QueryKind::Sync)
            .await
            .expect("slot given back");
    });
}

/// A job returns once its slot is back: a client that sees the job done and starts its next one
/// at once finds the place free, even while a pipeline of the finished work was still ending.
#[test]
fn a_job_returns_only_once_its_slot_is_given_back() {
    let engine = engine_with(1, 0);
    block_on(async {
        let ticket = engine.admit_job().await.unwrap();
        let work = async move {
            let context =
                super::super::work_scope::task_context(&datafusion::prelude::SessionContext::new());
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(300));
                drop(context);
            });
            Ok(7)
        };
        let started = Instant::now();
        let answer = engine
            .run_job(
                ticket,
                Duration::from_secs(30),
                work,
                Error::invalid("too long"),
            )
            .await
            .unwrap();
        assert_eq!(answer, 7);
        assert!(
            started.elapsed() >= Duration::from_millis(300),
            "returned before the work's pipeline ended"
        );
        engine
            .admit(QueryKind::Large)
            .await
            .expect("the slot is free when the job returns");
    });
}

/// A job asked for while every slot is taken gets a place in the wait list and starts when a
/// slot frees; only with the list full too is the request refused.
#[test]
fn jobs_past_the_slots_wait_in_a_bounded_list_and_start_in_turn() {
    let engine = QueryPools::new(QuerySettings {
        large_concurrency: 1,
        large_queue: 1,
        queue_wait: Duration::from_millis(20),
        threads: 2,
        ..QuerySettings::default()
    })
    .unwrap();
    block_on(async {
        let first = engine.admit_job().await.unwrap();
        assert!(!first.waits());
        let second = engine.admit_job().await.unwrap();
        assert!(second.waits());
        let err = engine.admit_job().await.unwrap_err();
        assert_eq!(err.kind, ErrorKind::Busy);
        assert!(err.to_string().contains("RAPID_LARGE_QUERY_QUEUE"), "{err}");
        assert_eq!(engine.load().large.refused, 1);
        let run = engine.run_job(
            second,
            Duration::from_secs(30),
            async { Ok(2) },
            Error::invalid("too long"),
        );
        tokio::pin!(run);
        let early = tokio::time::timeout(Duration::from_millis(200), &mut run).await;
        assert!(early.is_err(), "the waiting job ran without a slot");
        assert_eq!(engine.load().large.waiting, 1);
        drop(first);
        assert_eq!(run.await.unwrap(), 2);
        assert_eq!(engine.load().large.waiting, 0);
        assert!(
            !engine.admit_job().await.unwrap().waits(),
            "the slot came back"
        );
    });
}

#[test]
fn a_caller_that_goes_away_aborts_the_work() {
    let engine = engine_with(1, 0);
    let dropped = Arc::new(AtomicBool::new(false));
    let flag = DropFlag(dropped.clone());
    block_on(async {
        let run = engine.run(
            None,
            Duration::from_secs(3600),
            async move {
                let _flag = flag;
                std::future::pending::<Result<()>>().await
            },
            Error::invalid("too long"),
        );
        assert!(tokio::time::timeout(Duration::from_millis(50), run)
            .await
            .is_err());
    });
    assert!(wait_for(&dropped), "the work was aborted");
}

#[test]
fn a_panicking_query_is_an_internal_error_not_a_crash() {
    let engine = engine_with(1, 0);
    let err = block_on(engine.spawn(async { panic!("boom") as Result<()> })).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Internal);
}

/// Recurses `depth` times with a kilobyte frame each.
fn deep(depth: usize) -> usize {
    let frame = std::hint::black_box([depth as u8; 1024]);
    if depth == 0 {
        0
    } else {
        deep(depth - 1) + frame[0] as usize % 2
    }
}

#[test]
fn query_threads_have_large_stacks_and_a_lower_priority() {
    let engine = engine_with(1, 0);
    // About 20 MB of frames: ten times the 2 MiB a default thread has.
    let (sum, nice) = block_on(engine.spawn(async {
        #[cfg(target_os = "linux")]
        // SAFETY: reads this thread's nice value; no memory is involved.
        let nice = unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) };
        #[cfg(not(target_os = "linux"))]
        let nice = 10;
        Ok((deep(20_000), nice))
    }))
    .unwrap();
    assert!(sum <= 20_000);
    assert_eq!(nice, 10);
}
