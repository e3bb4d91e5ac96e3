//! The unique index as sorted runs of keys (docs/DESIGN.md, Unique index), the same on both
//! catalogs: each commit writes one run per `unique` column (its keys sorted, each with the
//! origin of its row, in blocks of [`block::BLOCK_ENTRIES`] with a Bloom filter each), in the
//! commit's own transaction. A check is a merge-join of the upload's sorted keys against each run,
//! skipping runs and blocks by their first and last keys and keys by the filters. Runs of one size
//! tier are merged once there are [`FANOUT`] of them (size-tiered, as an LSM tree), so a check
//! meets a few runs per tier however many commits the version had.
//!
//! An entry counts only while its origin (`key_origins`) exists: OVERWRITE, a raw file's deletion
//! and erasure drop origins, and their entries in earlier runs are dead from then on (merges leave
//! them out). Origin ids are never reused (AUTOINCREMENT, IDENTITY), so a dead entry stays dead.
//!
//! The catalogs implement [`RunStore`]: the rows and blobs, nothing of the algorithm.

mod block;
mod build;
mod merge;
mod read;
mod record;

use std::borrow::Cow;
use std::collections::HashMap;

pub(super) use block::Entry;
use block::{key_hash, BlockBuilder, Bloom, SealedBlock, BLOCK_ENTRIES};
use merge::settle;
use read::join;
pub(crate) use record::{record_backfill, record_new_keys};

use crate::catalog::{KeyHit, KeyList};
use crate::error::Result;

/// Runs of one tier merged into one: each key is rewritten about log8(keys / 8192) times.
const FANOUT: usize = 8;

/// The index of one `unique` column of one version.
#[derive(Debug, Clone, Copy)]
pub(crate) struct IndexOf<'a> {
    pub dataset_id: i64,
    pub version: i64,
    pub column: &'a str,
}

/// A run as listed (its blocks are read on demand).
pub(crate) struct RunRow {
    pub id: i64,
    pub level: i64,
    /// Above the version's manifest generation its writer read (written in the transaction
    /// that takes the generation past it): a check that read generation `g` saw every run
    /// tagged `g` or less.
    pub generation: i64,
    pub min_key: Vec<u8>,
    pub max_key: Vec<u8>,
}

/// A block's place in its run: its first and last keys.
pub(crate) struct BlockRow {
    pub block: i64,
    pub min_key: Vec<u8>,
    pub max_key: Vec<u8>,
}

/// A block as written.
pub(crate) struct NewBlock<'a> {
    pub run: i64,
    pub block: i64,
    pub min_key: &'a [u8],
    pub max_key: &'a [u8],
    pub bloom: &'a [u8],
    pub entries: &'a [u8],
}

/// The rows of the index, inside the caller's transaction or snapshot.
pub(crate) trait RunStore {
    /// The finished runs of the index.
    fn runs(&self, index: IndexOf<'_>) -> Result<Vec<RunRow>>;
    /// A run's blocks in key order, without their contents.
    fn blocks(&self, run: i64) -> Result<Vec<BlockRow>>;
    fn bloom(&self, run: i64, block: i64) -> Result<Vec<u8>>;
    fn entries(&self, run: i64, block: i64) -> Result<Vec<u8>>;
    /// A new, empty run, tagged with the version's manifest generation plus one: listed by
    /// [`Self::runs`] once finished.
    fn new_run(&self, index: IndexOf<'_>) -> Result<i64>;
    fn add_block(&self, block: &NewBlock<'_>) -> Result<()>;
    fn finish_run(&self, run: i64, level: i64, count: i64, min: &[u8], max: &[u8]) -> Result<()>;
    fn drop_run(&self, run: i64) -> Result<()>;
    /// The version's live origins and their partitions.
    fn origins(&self, dataset_id: i64, version: i64) -> Result<HashMap<i64, String>>;
    /// The id of an origin, recorded on first use.
    fn origin_id(
        &self,
        dataset_id: i64,
        version: i64,
        raw_filename: &str,
        partition_path: &str,
    ) -> Result<i64>;
}

/// The size tier of a run of `count` entries: 0 under 8,192, then each tier 8 times larger.
fn level_of(count: usize) -> i64 {
    let mut level = 0;
    let mut bound = 8 * 1024;
    while count >= bound {
        level += 1;
        bound *= FANOUT;
    }
    level
}

/// The live entries of `index` holding any of `lists`' keys (each list ascending: the staged
/// files' own lists, never merged for a check), with the partition of their row. Holds one block
/// at a time, whatever the index's size.
pub(crate) fn find(
    store: &dyn RunStore,
    index: IndexOf<'_>,
    lists: &[&KeyList],
) -> Result<Vec<KeyHit>> {
    let sorted: Vec<Cow<'_, KeyList>> = lists.iter().map(|keys| keys.ascending()).collect();
    let lists: Vec<&KeyList> = sorted.iter().map(|k| k.as_ref()).collect();
    find_sorted(store, index, &lists, None)
}

/// [`find`] over lists already ascending, in the runs tagged above generation `since` (every
/// run when `None`).
fn find_sorted(
    store: &dyn RunStore,
    index: IndexOf<'_>,
    lists: &[&KeyList],
    since: Option<i64>,
) -> Result<Vec<KeyHit>> {
    let found = entries_holding(store, index, lists, since)?;
    if found.is_empty() {
        return Ok(Vec::new());
    }
    let origins = store.origins(index.dataset_id, index.version)?;
    Ok(found
        .into_iter()
        .filter_map(|e| {
            origins.get(&e.origin).map(|partition| KeyHit {
                key: e.key,
                partition_path: partition.clone(),
            })
        })
        .collect())
}

/// A list of keys to look up, its hashes computed when a block first needs them.
struct Probe<'k> {
    keys: &'k KeyList,
    hashes: Option<Vec<u64>>,
}

/// Every entry, live or dead, whose key is in one of `lists`, in the runs tagged above `since`.
fn entries_holding(
    store: &dyn RunStore,
    index: IndexOf<'_>,
    lists: &[&KeyList],
    since: Option<i64>,
) -> Result<Vec<Entry>> {
    let mut probes: Vec<Probe<'_>> = lists
        .iter()
        .filter(|keys| !keys.is_empty())
        .map(|keys| Probe { keys, hashes: None })
        .collect();
    let Some(first) = probes.iter().filter_map(|p| p.keys.first()).min() else {
        return Ok(Vec::new());
    };
    // unwrap: the lists are not empty
    let last = probes.iter().filter_map(|p| p.keys.last()).max().unwrap();
    let mut found = Vec::new();
    for run in store.runs(index)? {
        if since.is_some_and(|g| run.generation <= g) {
            continue;
        }
        if run.max_key.as_slice() < first || run.min_key.as_slice() > last {
            continue;
        }
        for block in store.blocks(run.id)? {
            let mut filter = None;
            let mut candidates: Vec<&[u8]> = Vec::new();
            for probe in &mut probes {
                let keys = probe.keys;
                let lo = keys.partition_point(|k| k < block.min_key.as_slice());
                let hi = keys.partition_point(|k| k <= block.max_key.as_slice());
                if lo == hi {
                    continue;
                }
                let filter = match &mut filter {
                    Some(f) => f,
                    None => filter.insert(Bloom::read(&store.bloom(run.id, block.block)?)?),
                };
                let hashes = probe
                    .hashes
                    .get_or_insert_with(|| keys.iter().map(key_hash).collect());
                candidates.extend(
                    (lo..hi)
                        .filter(|&i| filter.may_hold(hashes[i]))
                        .map(|i| keys.get(i)),
                );
            }
            if candidates.is_empty() {
                continue;
            }
            candidates.sort_unstable();
            join(
                &candidates,
                &store.entries(run.id, block.block)?,
                &mut found,
            )?;
        }
    }
    Ok(found)
}

/// A run being written, block by block: from entries pushed in key order, or from blocks a
/// commit built beforehand ([`build`]), each written as it comes. The one place a run's rows are
/// made: its blocks numbered in order, then the run listed with its count, tier and bounds.
pub(super) struct RunWriter<'s> {
    store: &'s dyn RunStore,
    index: IndexOf<'s>,
    run: Option<i64>,
    block: BlockBuilder,
    blocks: i64,
    count: usize,
    min: Option<Vec<u8>>,
    max: Vec<u8>,
}

impl<'s> RunWriter<'s> {
    pub(super) fn new(store: &'s dyn RunStore, index: IndexOf<'s>) -> RunWriter<'s> {
        RunWriter {
            store,
            index,
            run: None,
            block: BlockBuilder::default(),
            blocks: 0,
            count: 0,
            min: None,
            max: Vec::new(),
        }
    }

    pub(super) fn push(&mut self, key: &[u8], origin: i64) -> Result<()> {
        self.block.push(key, origin);
        if self.block.len() == BLOCK_ENTRIES {
            let sealed = self.block.sealed();
            self.write_block(&sealed)?;
        }
        Ok(())
    }

    /// Writes the next block of the run (its keys follow every block's before it).
    fn write_block(&mut self, block: &SealedBlock) -> Result<()> {
        let id = match self.run {
            Some(id) => id,
            None => *self.run.insert(self.store.new_run(self.index)?),
        };
        self.store.add_block(&NewBlock {
            run: id,
            block: self.blocks,
            min_key: &block.first,
            max_key: &block.last,
            bloom: &block.bloom,
            entries: &block.entries,
        })?;
        self.blocks += 1;
        self.count += block.len;
        self.min.get_or_insert_with(|| block.first.clone());
        self.max.clone_from(&block.last);
        Ok(())
    }

    /// The run listed (nothing written when no entry was pushed).
    pub(super) fn finish(mut self) -> Result<()> {
        if self.block.len() > 0 {
            let sealed = self.block.sealed();
            self.write_block(&sealed)?;
        }
        if let (Some(id), Some(min)) = (self.run, &self.min) {
            let count = self.count;
            self.store
                .finish_run(id, level_of(count), count as i64, min, &self.max)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiers_grow_by_the_fanout() {
        assert_eq!(level_of(0), 0);
        assert_eq!(level_of(8_191), 0);
        assert_eq!(level_of(8_192), 1);
        assert_eq!(level_of(65_535), 1);
        assert_eq!(level_of(65_536), 2);
        assert_eq!(level_of(10_000_000), 4);
    }
}
