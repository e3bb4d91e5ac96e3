//! How busy the query pools are, for metrics: queries waiting for a slot and queries refused
//! (503) since start, per pool. Running queries are read off the pools' semaphores. The pools'
//! kinds are named here, below the pools that admit to them.

use std::sync::atomic::{AtomicU64, Ordering};

/// Which admission pool a query takes its slot from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueryKind {
    Sync,
    Large,
}

#[derive(Debug, Default)]
pub(crate) struct Counters {
    waiting: [AtomicU64; 2],
    refused: [AtomicU64; 2],
}

/// One pool's load at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PoolLoad {
    /// Slots taken now.
    pub running: u64,
    /// Queries waiting for a slot now.
    pub waiting: u64,
    /// Queries refused for want of a slot since start.
    pub refused: u64,
    /// The pool's size.
    pub slots: u64,
}

/// Both pools.
#[derive(Debug, Clone, Copy, Default)]
pub struct QueryLoad {
    pub sync: PoolLoad,
    pub large: PoolLoad,
    /// Bytes of the shared memory pool reserved by running queries now.
    pub memory_bytes: u64,
}

fn index(kind: QueryKind) -> usize {
    match kind {
        QueryKind::Sync => 0,
        QueryKind::Large => 1,
    }
}

impl Counters {
    /// Counts a query as waiting until the returned guard drops.
    pub(crate) fn wait(&self, kind: QueryKind) -> Waiting<'_> {
        self.waiting[index(kind)].fetch_add(1, Ordering::Relaxed);
        Waiting(&self.waiting[index(kind)])
    }

    pub(crate) fn refuse(&self, kind: QueryKind) {
        self.refused[index(kind)].fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn pool(&self, kind: QueryKind, slots: usize, free: usize) -> PoolLoad {
        PoolLoad {
            running: slots.saturating_sub(free) as u64,
            waiting: self.waiting[index(kind)].load(Ordering::Relaxed),
            refused: self.refused[index(kind)].load(Ordering::Relaxed),
            slots: slots as u64,
        }
    }
}

pub(crate) struct Waiting<'a>(&'a AtomicU64);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waiting_counts_while_held_and_refusals_add_up_per_pool() {
        let counters = Counters::default();
        let first = counters.wait(QueryKind::Sync);
        let second = counters.wait(QueryKind::Sync);
        counters.refuse(QueryKind::Large);
        let sync = counters.pool(QueryKind::Sync, 4, 1);
        assert_eq!(
            sync,
            PoolLoad {
                running: 3,
                waiting: 2,
                refused: 0,
                slots: 4
            }
        );
        drop(first);
        drop(second);
        assert_eq!(counters.pool(QueryKind::Sync, 4, 4).waiting, 0);
        assert_eq!(counters.pool(QueryKind::Large, 1, 1).refused, 1);
    }
}
