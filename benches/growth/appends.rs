//! The rows, and the K appends: sequential, or `uploaders` threads each taking the next append
//! until all K are sent. Append `k` always carries rows `k * per_append ..`, so the appended
//! dataset holds exactly the rows of the one upload, whatever the order of the commits.

use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::client::{median, Bench};

/// The `rapid-rs bench` schema's partitioning: 20 categories.
pub(crate) const CATEGORIES: usize = 20;
/// How many appends are timed at each end.
pub(crate) const ENDS: usize = 25;
/// Progress goes to stderr every this many finished appends.
const PROGRESS: usize = 250;

/// Rows `first..first + n` as CSV (ids in random order, so min/max per file prune nothing).
pub(crate) fn rows(first: u64, n: u64, header: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(n as usize * 48);
    if header {
        writeln!(out, "category,id,price,qty,region").unwrap();
    }
    for i in first..first + n {
        // A bijection on 0..2^32 (odd multiplier): distinct ids, scattered.
        let id = (i.wrapping_mul(2_654_435_761)) & 0xFFFF_FFFF;
        let x = id ^ (id >> 7);
        writeln!(
            out,
            "c{},{id},{}.{:02},{},r{}",
            x % CATEGORIES as u64,
            x % 1000,
            (x >> 10) % 100,
            (x >> 20) % 50,
            (x >> 30) % 20
        )
        .unwrap();
    }
    out
}

/// The appends' times to SUCCESS, by append index (the order in which they were sent), and the
/// wall time of them all.
pub(crate) struct Appends {
    pub times: Vec<Duration>,
    pub all: Duration,
}

impl Appends {
    /// Medians of the first and of the last [`ENDS`] appends sent, in ms.
    pub(crate) fn ends(&self) -> (f64, f64) {
        let k = self.times.len();
        (median(&self.times[..ENDS]), median(&self.times[k - ENDS..]))
    }
}

/// Sends `appends` uploads of `per_append` rows to `dataset` from `uploaders` threads.
pub(crate) fn run(
    bench: &Bench,
    dataset: &str,
    appends: usize,
    per_append: u64,
    uploaders: usize,
) -> Appends {
    let next = AtomicUsize::new(0);
    let times = Mutex::new(vec![Duration::ZERO; appends]);
    // Times in the order the appends finished, for the progress lines.
    let finished = Mutex::new(Vec::with_capacity(appends));
    let started = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..uploaders {
            scope.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                if k >= appends {
                    break;
                }
                let csv = rows(k as u64 * per_append, per_append, true);
                let t = bench.upload(dataset, csv);
                times.lock().unwrap()[k] = t;
                progress(&finished, t, started);
            });
        }
    });
    Appends {
        times: times.into_inner().unwrap(),
        all: started.elapsed(),
    }
}

fn progress(finished: &Mutex<Vec<Duration>>, t: Duration, started: Instant) {
    let mut finished = finished.lock().unwrap();
    finished.push(t);
    let n = finished.len();
    if n.is_multiple_of(PROGRESS) {
        eprintln!(
            "{n} appends in {:.1} s, last {ENDS} finished: median {:.1} ms",
            started.elapsed().as_secs_f64(),
            median(&finished[n - ENDS..])
        );
    }
}
