//! How many uploads are being validated and written right now, so that each can size its
//! threads: one upload alone parses and writes on every core, but with others running the cores
//! are already busy, and the hand-offs between threads would only cost (16 concurrent uploads
//! went from 121 to 167 MB/s when a single one got faster; see benches/README.md).

use std::sync::atomic::{AtomicUsize, Ordering};

static RUNNING: AtomicUsize = AtomicUsize::new(0);

/// One upload counted while this lives.
pub(super) struct Running(());

impl Running {
    pub(super) fn enter() -> Running {
        RUNNING.fetch_add(1, Ordering::SeqCst);
        Running(())
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        RUNNING.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The machine's cores shared out among the uploads running now (at least 1).
pub fn cores_each() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    (cores / RUNNING.load(Ordering::SeqCst).max(1)).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn many_running_uploads_leave_each_one_core() {
        // Other tests may upload meanwhile: they only add to the count.
        let guards: Vec<Running> = (0..256).map(|_| Running::enter()).collect();
        assert_eq!(cores_each(), 1);
        drop(guards);
        assert!(cores_each() >= 1);
    }
}
