//! Waiting for the stored files to settle before queries are timed: a background compactor may
//! merge small files after commits and delete the old ones once no query reads them. The Parquet
//! files under each dataset's data folder are counted until no count has changed for `quiet`, or
//! `timeout` has passed. Without a compactor the counts are stable at once, and this waits `quiet`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How often the files are counted.
const POLL: Duration = Duration::from_millis(500);

/// The Parquet files under `dir`, at any depth.
pub fn parquet_files(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| {
            let path = e.path();
            if path.is_dir() {
                parquet_files(&path)
            } else {
                usize::from(path.extension().is_some_and(|x| x == "parquet"))
            }
        })
        .sum()
}

pub struct Settled {
    /// The file counts of each folder when the wait began, and when it ended.
    pub before: Vec<usize>,
    pub after: Vec<usize>,
    /// From the start of the wait to the last change seen (zero: nothing changed).
    pub changing: Duration,
    /// The whole wait.
    pub waited: Duration,
    /// The counts were still changing at the timeout.
    pub timed_out: bool,
}

/// Counts the Parquet files of `dirs` every [`POLL`] until the counts have not changed for
/// `quiet` (at once when `quiet` is zero), or until `timeout`.
pub fn settle(dirs: &[PathBuf], quiet: Duration, timeout: Duration) -> Settled {
    let count = || dirs.iter().map(|d| parquet_files(d)).collect::<Vec<_>>();
    let start = Instant::now();
    let before = count();
    let (mut now, mut changed_at) = (before.clone(), start);
    let timed_out = loop {
        if changed_at.elapsed() >= quiet {
            break false;
        }
        if start.elapsed() >= timeout {
            break true;
        }
        std::thread::sleep(POLL.min(quiet));
        let counted = count();
        if counted != now {
            eprintln!(
                "settling: {counted:?} Parquet files after {:.1} s",
                start.elapsed().as_secs_f64()
            );
            (now, changed_at) = (counted, Instant::now());
        }
    };
    Settled {
        before,
        after: now,
        changing: changed_at - start,
        waited: start.elapsed(),
        timed_out,
    }
}
