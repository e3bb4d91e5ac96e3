//! Waiting for the stored files to settle before queries are timed: a background compactor may
//! merge small files after commits and delete the old ones once no query reads them. The Parquet
//! files under each dataset's data folder are counted, and the bytes of all its files summed (so a
//! merged file being written counts as a change too), until neither has changed for `quiet`, or
//! `timeout` has passed. Without a compactor they are stable at once, and this waits `quiet`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How often the files are counted.
const POLL: Duration = Duration::from_millis(500);

/// The Parquet files under `dir`, at any depth.
pub(crate) fn parquet_files(dir: &Path) -> usize {
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

/// The bytes of every file under `dir` (Parquet or not: a file being written may have another
/// name until it is complete).
fn bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => bytes(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

pub(crate) struct Settled {
    /// The file counts of each folder when the wait began, and when it ended.
    pub before: Vec<usize>,
    pub after: Vec<usize>,
    /// From the start of the wait to the last change seen (zero: nothing changed).
    pub changing: Duration,
    /// The whole wait.
    pub waited: Duration,
    /// The folders had not been stable for `quiet` by the timeout.
    pub timed_out: bool,
}

/// Counts the Parquet files of `dirs` and sums their bytes every [`POLL`] until neither has
/// changed for `quiet` (at once when `quiet` is zero), or until `timeout`.
pub(crate) fn settle(dirs: &[PathBuf], quiet: Duration, timeout: Duration) -> Settled {
    let count = || dirs.iter().map(|d| parquet_files(d)).collect::<Vec<_>>();
    let size = || dirs.iter().map(|d| bytes(d)).sum::<u64>();
    let start = Instant::now();
    let before = count();
    let (mut now, mut stored, mut changed_at) = (before.clone(), size(), start);
    let timed_out = loop {
        if changed_at.elapsed() >= quiet {
            break false;
        }
        if start.elapsed() >= timeout {
            break true;
        }
        std::thread::sleep(POLL.min(quiet));
        let (counted, sized) = (count(), size());
        if counted != now || sized != stored {
            eprintln!(
                "settling: {counted:?} Parquet files, {:.1} MB after {:.1} s",
                sized as f64 / 1e6,
                start.elapsed().as_secs_f64()
            );
            (now, stored, changed_at) = (counted, sized, Instant::now());
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
