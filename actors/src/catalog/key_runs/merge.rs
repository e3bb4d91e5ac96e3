//! Merging in key order: a tier's runs into one ([`settle`]), and a commit's sorted lists into
//! its run ([`MergeSorted`]).

use std::cmp::Reverse;
use std::collections::binary_heap::PeekMut;
use std::collections::{BinaryHeap, HashMap};

use super::read::each_entry;
use super::{BlockRow, IndexOf, RunStore, RunWriter, FANOUT};
use crate::catalog::KeyList;
use crate::error::Result;

/// Merges the runs of any tier holding [`FANOUT`] or more, leaving dead entries out. Each run
/// is read a block at a time into one buffer, and the smallest head of the few runs is taken by
/// comparing them in turn: no allocation per entry (a merge rewrites hundreds of thousands).
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
        let mut merged = RunWriter::new(store, index);
        loop {
            let mut smallest: Option<(usize, &[u8])> = None;
            for (n, cursor) in cursors.iter().enumerate() {
                if let Some(key) = cursor.key() {
                    if smallest.is_none_or(|(_, least)| key < least) {
                        smallest = Some((n, key));
                    }
                }
            }
            let Some((n, key)) = smallest else { break };
            let origin = cursors[n].origin();
            if origins.contains_key(&origin) {
                merged.push(key, origin)?;
            }
            cursors[n].advance()?;
        }
        merged.finish()?;
        for run in full {
            store.drop_run(run)?;
        }
    }
}

/// A run read block by block, in key order: the current block's keys in one list.
struct Cursor<'s> {
    store: &'s dyn RunStore,
    run: i64,
    blocks: std::vec::IntoIter<BlockRow>,
    keys: KeyList,
    origins: Vec<i64>,
    at: usize,
}

impl<'s> Cursor<'s> {
    fn open(store: &'s dyn RunStore, run: i64) -> Result<Cursor<'s>> {
        let mut cursor = Cursor {
            store,
            run,
            blocks: store.blocks(run)?.into_iter(),
            keys: KeyList::default(),
            origins: Vec::new(),
            at: 0,
        };
        cursor.load()?;
        Ok(cursor)
    }

    /// The current entry's key; `None` past the run's end.
    fn key(&self) -> Option<&[u8]> {
        (self.at < self.keys.len()).then(|| self.keys.get(self.at))
    }

    fn origin(&self) -> i64 {
        self.origins[self.at]
    }

    fn advance(&mut self) -> Result<()> {
        self.at += 1;
        if self.at == self.keys.len() {
            self.load()?;
        }
        Ok(())
    }

    /// The next block with entries, if any, in place of the current one.
    fn load(&mut self) -> Result<()> {
        self.keys.clear();
        self.origins.clear();
        self.at = 0;
        while self.keys.is_empty() {
            let Some(block) = self.blocks.next() else {
                return Ok(());
            };
            let bytes = self.store.entries(self.run, block.block)?;
            let (keys, origins) = (&mut self.keys, &mut self.origins);
            each_entry(&bytes, |key, origin| {
                keys.push(key);
                origins.push(origin);
            })?;
        }
        Ok(())
    }
}

/// Sorted lists of keys, each with its origin, merged into one ascending sequence (a heap of each
/// list's next key; the keys are borrowed, not copied, and the merged sequence is never held
/// whole: a commit writes it into blocks as it comes).
pub(super) struct MergeSorted<'k> {
    lists: Vec<(i64, &'k KeyList)>,
    /// Where each list's part in the merge ends.
    ends: Vec<usize>,
    heap: BinaryHeap<Reverse<Head<'k>>>,
}

/// A list's next key in the merge: its [`prefix`], the key, the list and the key's place in it.
type Head<'k> = (u128, &'k [u8], usize, usize);

impl<'k> MergeSorted<'k> {
    /// The merge of the whole lists (what the ranges of a commit's run are checked against).
    #[cfg(test)]
    pub(super) fn new(lists: &[(i64, &'k KeyList)]) -> MergeSorted<'k> {
        let whole: Vec<(usize, usize)> = lists.iter().map(|(_, keys)| (0, keys.len())).collect();
        MergeSorted::within(lists, &whole)
    }

    /// The merge of the part `bounds[i]` (start, end) of each list `i`.
    pub(super) fn within(
        lists: &[(i64, &'k KeyList)],
        bounds: &[(usize, usize)],
    ) -> MergeSorted<'k> {
        let heap = lists
            .iter()
            .zip(bounds)
            .enumerate()
            .filter(|(_, (_, (start, end)))| start < end)
            .map(|(n, ((_, keys), &(start, _)))| {
                Reverse((prefix(keys.get(start)), keys.get(start), n, start))
            })
            .collect();
        MergeSorted {
            lists: lists.to_vec(),
            ends: bounds.iter().map(|&(_, end)| end).collect(),
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
        if at + 1 < self.ends[n] {
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
}
