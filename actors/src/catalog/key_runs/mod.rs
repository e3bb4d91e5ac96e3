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
mod record;

use std::borrow::Cow;
use std::cmp::Reverse;
use std::collections::binary_heap::PeekMut;
use std::collections::{BinaryHeap, HashMap};

pub use block::Entry;
use block::{decode, each_entry, key_hash, BlockBuilder, Bloom, BLOCK_ENTRIES};
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

/// The entries of a stored block whose key is among `candidates` (ascending).
fn join(candidates: &[&[u8]], block: &[u8], found: &mut Vec<Entry>) -> Result<()> {
    let mut c = 0;
    each_entry(block, |key, origin| {
        while c < candidates.len() && candidates[c] < key {
            c += 1;
        }
        if c < candidates.len() && candidates[c] == key {
            found.push(Entry {
                key: key.to_vec(),
                origin,
            });
        }
    })
}

/// Writes one run from ascending entries (key, origin); none when there are no entries.
pub(super) fn write_run<K: AsRef<[u8]>>(
    store: &dyn RunStore,
    index: IndexOf<'_>,
    entries: impl Iterator<Item = Result<(K, i64)>>,
) -> Result<()> {
    let mut run = None;
    let mut block = BlockBuilder::default();
    let mut blocks = 0;
    let mut count = 0;
    let mut min: Option<Vec<u8>> = None;
    let mut flush = |block: &mut BlockBuilder, run: &mut Option<i64>| -> Result<()> {
        let id = match run {
            Some(id) => *id,
            None => *run.insert(store.new_run(index)?),
        };
        store.add_block(&NewBlock {
            run: id,
            block: blocks,
            min_key: &block.first,
            max_key: &block.last,
            bloom: &block.bloom(),
            entries: &block.bytes,
        })?;
        blocks += 1;
        block.clear();
        Ok(())
    };
    for entry in entries {
        let (key, origin) = entry?;
        let key = key.as_ref();
        min.get_or_insert_with(|| key.to_vec());
        count += 1;
        block.push(key, origin);
        if block.len() == BLOCK_ENTRIES {
            flush(&mut block, &mut run)?;
        }
    }
    if block.len() > 0 {
        flush(&mut block, &mut run)?;
    }
    if let (Some(id), Some(min)) = (run, min) {
        store.finish_run(id, level_of(count), count as i64, &min, &block.last)?;
    }
    Ok(())
}

/// Merges the runs of any tier holding [`FANOUT`] or more, leaving dead entries out.
pub(super) fn settle(store: &dyn RunStore, index: IndexOf<'_>) -> Result<()> {
    loop {
        let runs = store.runs(index)?;
        let mut tiers: HashMap<i64, Vec<i64>> = HashMap::new();
        for run in &runs {
            tiers.entry(run.level).or_default().push(run.id);
        }
        let Some(full) = tiers.into_values().find(|ids| ids.len() >= FANOUT) else {
            return Ok(());
        };
        let origins = store.origins(index.dataset_id, index.version)?;
        let mut cursors = full
            .iter()
            .map(|&run| Cursor::open(store, run))
            .collect::<Result<Vec<_>>>()?;
        let merged = MergedEntries::new(&mut cursors)?
            .filter(|e| e.as_ref().map_or(true, |e| origins.contains_key(&e.origin)))
            .map(|e| e.map(|e| (e.key, e.origin)));
        write_run(store, index, merged)?;
        for run in full {
            store.drop_run(run)?;
        }
    }
}

/// A run read block by block, in key order.
struct Cursor<'s> {
    store: &'s dyn RunStore,
    run: i64,
    blocks: std::vec::IntoIter<BlockRow>,
    current: std::vec::IntoIter<Entry>,
}

impl<'s> Cursor<'s> {
    fn open(store: &'s dyn RunStore, run: i64) -> Result<Cursor<'s>> {
        Ok(Cursor {
            store,
            run,
            blocks: store.blocks(run)?.into_iter(),
            current: Vec::new().into_iter(),
        })
    }

    fn next_entry(&mut self) -> Result<Option<Entry>> {
        loop {
            if let Some(e) = self.current.next() {
                return Ok(Some(e));
            }
            let Some(block) = self.blocks.next() else {
                return Ok(None);
            };
            self.current = decode(&self.store.entries(self.run, block.block)?)?.into_iter();
        }
    }
}

/// The entries of several runs, merged in key order (a heap of each run's next entry).
struct MergedEntries<'c, 's> {
    cursors: &'c mut [Cursor<'s>],
    heap: BinaryHeap<Reverse<(Entry, usize)>>,
}

impl<'c, 's> MergedEntries<'c, 's> {
    fn new(cursors: &'c mut [Cursor<'s>]) -> Result<MergedEntries<'c, 's>> {
        let mut heap = BinaryHeap::new();
        for (n, cursor) in cursors.iter_mut().enumerate() {
            if let Some(e) = cursor.next_entry()? {
                heap.push(Reverse((e, n)));
            }
        }
        Ok(MergedEntries { cursors, heap })
    }
}

impl Iterator for MergedEntries<'_, '_> {
    type Item = Result<Entry>;

    fn next(&mut self) -> Option<Result<Entry>> {
        let Reverse((entry, n)) = self.heap.pop()?;
        match self.cursors[n].next_entry() {
            Ok(Some(e)) => self.heap.push(Reverse((e, n))),
            Ok(None) => {}
            Err(e) => return Some(Err(e)),
        }
        Some(Ok(entry))
    }
}

/// Sorted lists of keys, each with its origin, merged into one ascending sequence (a heap of each
/// list's next key; the keys are borrowed, not copied, and the merged sequence is never held
/// whole: a commit writes it into blocks as it comes).
pub(crate) struct MergeSorted<'k> {
    lists: Vec<(i64, &'k KeyList)>,
    heap: BinaryHeap<Reverse<Head<'k>>>,
}

/// A list's next key in the merge: its [`prefix`], the key, the list and the key's place in it.
type Head<'k> = (u128, &'k [u8], usize, usize);

impl<'k> MergeSorted<'k> {
    pub(crate) fn new(lists: &[(i64, &'k KeyList)]) -> MergeSorted<'k> {
        let heap = lists
            .iter()
            .enumerate()
            .filter(|(_, (_, keys))| !keys.is_empty())
            .map(|(n, (_, keys))| Reverse((prefix(keys.get(0)), keys.get(0), n, 0)))
            .collect();
        MergeSorted {
            lists: lists.to_vec(),
            heap,
        }
    }
}

impl<'k> Iterator for MergeSorted<'k> {
    type Item = (&'k [u8], i64);

    fn next(&mut self) -> Option<(&'k [u8], i64)> {
        // The top is replaced in place by its list's next key (one sift), not popped and pushed.
        let mut top = self.heap.peek_mut()?;
        let Reverse((_, key, n, at)) = *top;
        let (origin, keys) = self.lists[n];
        if at + 1 < keys.len() {
            let next = keys.get(at + 1);
            *top = Reverse((prefix(next), next, n, at + 1));
        } else {
            PeekMut::pop(top);
        }
        Some((key, origin))
    }
}

/// A key's first 16 bytes as a number (zero-padded): ordered as the keys are, so the heap
/// compares one number and falls back to the bytes only on a tie (an `int` key is 9 bytes).
fn prefix(key: &[u8]) -> u128 {
    let mut bytes = [0u8; 16];
    let n = key.len().min(16);
    bytes[..n].copy_from_slice(&key[..n]);
    u128::from_be_bytes(bytes)
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

    #[test]
    fn sorted_lists_merge_in_key_order_with_their_origins() {
        let a: KeyList = [&[1][..], &[4], &[9]].into_iter().collect();
        let b: KeyList = [&[2][..], &[4, 0], &[8]].into_iter().collect();
        let none = KeyList::default();
        let merged: Vec<_> = MergeSorted::new(&[(10, &a), (20, &b), (30, &none)]).collect();
        let want: [(&[u8], i64); 6] = [
            (&[1], 10),
            (&[2], 20),
            (&[4], 10),
            (&[4, 0], 20),
            (&[8], 20),
            (&[9], 10),
        ];
        assert_eq!(merged, want);
    }

    #[test]
    fn prefixes_order_as_their_keys() {
        let keys: [&[u8]; 7] = [&[], &[0], &[0, 0], &[1], &[1; 16], &[1; 17], &[2, 0, 0]];
        for a in keys {
            for b in keys {
                if prefix(a) != prefix(b) {
                    assert_eq!(prefix(a) < prefix(b), a < b, "{a:?} {b:?}");
                }
            }
        }
    }

    #[test]
    fn the_join_finds_every_entry_of_a_candidate() {
        let entry = |k: u8, origin| Entry {
            key: vec![k],
            origin,
        };
        let entries = vec![
            entry(1, 1),
            entry(3, 1),
            entry(3, 2),
            entry(5, 1),
            entry(7, 1),
        ];
        let mut block = BlockBuilder::default();
        for e in &entries {
            block.push(&e.key, e.origin);
        }
        let mut found = Vec::new();
        join(&[&[0], &[3], &[6], &[7]], &block.bytes, &mut found).unwrap();
        assert_eq!(found, [entry(3, 1), entry(3, 2), entry(7, 1)]);
    }
}
