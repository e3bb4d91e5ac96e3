//! Group numbers for the text of a group-by key, in order of first appearance, without hashing
//! most rows (see small_groups).

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{
    Array, ArrayBuilder, ArrayRef, GenericStringArray, OffsetSizeTrait, StringViewArray,
    StringViewBuilder,
};

/// Slots of the view cache (a power of two): 8 KB, within the first-level cache.
const CACHE_SLOTS: usize = 256;

/// One slot of the view cache. A view of 12 bytes or fewer holds the whole string, so equal
/// views mean equal strings in any batch; a longer view points into its array's buffers, so
/// it is trusted only within the batch (`batch`) it was seen in.
#[derive(Clone, Copy)]
struct Slot {
    view: u128,
    group: u32,
    batch: u32,
}

const EMPTY: u32 = u32::MAX;
const EMPTY_SLOT: Slot = Slot {
    view: 0,
    group: EMPTY,
    batch: 0,
};

/// Group numbers for text values, in order of first appearance.
pub(crate) struct TextGroups {
    cache: Box<[Slot; CACHE_SLOTS]>,
    /// Every group by its text: the cache's fallback.
    by_text: HashMap<Box<[u8]>, u32, foldhash::fast::RandomState>,
    null_group: Option<u32>,
    /// One entry per group, in group order.
    values: StringViewBuilder,
    /// Bytes of group text held.
    pub bytes: usize,
    /// The batch being interned (never 0, so a fresh slot matches no batch).
    batch: u32,
}

impl TextGroups {
    pub(crate) fn new() -> Self {
        TextGroups {
            cache: Box::new([EMPTY_SLOT; CACHE_SLOTS]),
            by_text: HashMap::default(),
            null_group: None,
            values: StringViewBuilder::new(),
            bytes: 0,
            batch: 0,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.values.len()
    }

    /// Sets `indices` to the group of each row of `keys`, adding new groups.
    pub(crate) fn intern(&mut self, keys: &StringViewArray, indices: &mut Vec<usize>) {
        self.batch = self.batch.wrapping_add(1);
        if self.batch == 0 {
            // Wrapped: forget every long view rather than trust one from 2^32 batches ago.
            self.cache.fill(EMPTY_SLOT);
            self.batch = 1;
        }
        // Written in place: pushing stored the vector's length back on every row.
        indices.clear();
        indices.resize(keys.len(), 0);
        let rows = indices.iter_mut().zip(keys.views()).enumerate();
        match keys.nulls().filter(|n| n.null_count() > 0) {
            None => {
                for (i, (index, &view)) in rows {
                    *index = self.group_of_view(keys, i, view) as usize;
                }
            }
            Some(nulls) => {
                for (i, (index, &view)) in rows {
                    let group = if nulls.is_null(i) {
                        self.null_group()
                    } else {
                        self.group_of_view(keys, i, view)
                    };
                    *index = group as usize;
                }
            }
        }
    }

    /// Sets `indices` for text without views (a partition column, say): a row with the same
    /// text as the row before it takes its group without hashing.
    pub(crate) fn intern_runs<O: OffsetSizeTrait>(
        &mut self,
        keys: &GenericStringArray<O>,
        indices: &mut Vec<usize>,
    ) {
        indices.clear();
        indices.resize(keys.len(), 0);
        let mut last: Option<(&str, u32)> = None;
        for (index, key) in indices.iter_mut().zip(keys.iter()) {
            let group = match (key, last) {
                (None, _) => self.null_group(),
                (Some(text), Some((before, group))) if text == before => group,
                (Some(text), _) => {
                    let group = self.group_by_text(text);
                    last = Some((text, group));
                    group
                }
            };
            *index = group as usize;
        }
    }

    /// The group of row `i`, whose view is `view`: from the cache if it has it (the path
    /// nearly every row takes), else by its text.
    #[inline(always)]
    fn group_of_view(&mut self, keys: &StringViewArray, i: usize, view: u128) -> u32 {
        let slot = &self.cache[slot_of(view)];
        if slot.view == view
            && slot.group != EMPTY
            && ((view as u32) <= 12 || slot.batch == self.batch)
        {
            return slot.group;
        }
        self.miss(keys, i, view)
    }

    #[cold]
    #[inline(never)]
    fn miss(&mut self, keys: &StringViewArray, i: usize, view: u128) -> u32 {
        let group = self.group_by_text(keys.value(i));
        self.cache[slot_of(view)] = Slot {
            view,
            group,
            batch: self.batch,
        };
        group
    }

    fn group_by_text(&mut self, text: &str) -> u32 {
        if let Some(&group) = self.by_text.get(text.as_bytes()) {
            return group;
        }
        let group = self.len() as u32;
        self.by_text.insert(text.as_bytes().into(), group);
        self.values.append_value(text);
        self.bytes += text.len();
        group
    }

    fn null_group(&mut self) -> u32 {
        if let Some(group) = self.null_group {
            return group;
        }
        let group = self.len() as u32;
        self.values.append_null();
        self.null_group = Some(group);
        group
    }

    /// The group values in group order; starts again with no groups.
    pub(crate) fn take(&mut self) -> ArrayRef {
        let values = Arc::new(self.values.finish());
        *self = TextGroups {
            batch: self.batch,
            ..TextGroups::new()
        };
        values
    }
}

/// A cache slot for a view: the two halves folded and multiplied (Fibonacci hashing).
#[inline]
fn slot_of(view: u128) -> usize {
    let folded = (view as u64) ^ ((view >> 64) as u64).rotate_left(29);
    (folded.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - CACHE_SLOTS.trailing_zeros())) as usize
}
