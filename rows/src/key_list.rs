//! A list of unique index keys in one buffer: a staged file's keys, a commit's, a check's. A
//! million `int` keys take 17 MB in two allocations, where a vector per key took a million
//! allocations (and their frees) and 40 MB: most of the cost of reading an upload's keys back
//! and of recording them was that.

use std::borrow::Cow;

/// Keys back to back in `bytes`; `ends[i]` is where key `i` ends.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeyList {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl KeyList {
    /// An empty list with room for `keys` keys of `bytes` bytes in all.
    pub fn with_capacity(keys: usize, bytes: usize) -> KeyList {
        KeyList {
            bytes: Vec::with_capacity(bytes),
            ends: Vec::with_capacity(keys),
        }
    }

    pub fn push(&mut self, key: &[u8]) {
        self.bytes.extend_from_slice(key);
        self.ends.push(self.bytes.len());
    }

    /// Empties the list, keeping its buffers.
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.ends.clear();
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Key `i`. Panics past the end, as indexing does.
    pub fn get(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.bytes[start..self.ends[i]]
    }

    pub fn first(&self) -> Option<&[u8]> {
        (!self.is_empty()).then(|| self.get(0))
    }

    pub fn last(&self) -> Option<&[u8]> {
        self.len().checked_sub(1).map(|i| self.get(i))
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = &[u8]> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// The first index whose key does not satisfy `pred`, the keys being partitioned by it (as
    /// `slice::partition_point`: a binary search).
    pub fn partition_point(&self, mut pred: impl FnMut(&[u8]) -> bool) -> usize {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if pred(self.get(mid)) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    pub fn is_sorted(&self) -> bool {
        (1..self.len()).all(|i| self.get(i - 1) <= self.get(i))
    }

    /// The list in ascending order (sorted here only if it is not).
    pub fn ascending(&self) -> Cow<'_, KeyList> {
        if self.is_sorted() {
            return Cow::Borrowed(self);
        }
        let mut order: Vec<usize> = (0..self.len()).collect();
        order.sort_unstable_by(|&a, &b| self.get(a).cmp(self.get(b)));
        let mut sorted = KeyList::with_capacity(self.len(), self.bytes.len());
        for i in order {
            sorted.push(self.get(i));
        }
        Cow::Owned(sorted)
    }
}

impl<K: AsRef<[u8]>> FromIterator<K> for KeyList {
    fn from_iter<I: IntoIterator<Item = K>>(keys: I) -> KeyList {
        let mut list = KeyList::default();
        for key in keys {
            list.push(key.as_ref());
        }
        list
    }
}

/// Index keys of one `unique` column (see `crate::unique_index` for their encoding). Shared,
/// not copied, between a staged upload and each attempt of its commit (a million keys are a
/// million small buffers).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ColumnKeys {
    pub column: String,
    pub keys: std::sync::Arc<KeyList>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_come_back_as_pushed_and_sort() {
        let keys: [&[u8]; 5] = [&[3, 1], &[], &[1], &[3], &[2, 9, 9]];
        let list: KeyList = keys.iter().collect();
        assert_eq!(list.len(), 5);
        assert_eq!(list.iter().collect::<Vec<_>>(), keys);
        assert_eq!(
            (list.first(), list.last()),
            (Some(&[3, 1][..]), Some(&[2, 9, 9][..]))
        );
        assert!(!list.is_sorted());
        let sorted = list.ascending();
        let mut want = keys.to_vec();
        want.sort();
        assert_eq!(sorted.iter().collect::<Vec<_>>(), want);
        assert!(matches!(sorted.ascending(), Cow::Borrowed(_)));
        assert_eq!(sorted.partition_point(|k| k < &[2][..]), 2);
        assert_eq!(sorted.partition_point(|k| k <= &[9][..]), 5);
        assert_eq!(KeyList::default().last(), None);
    }
}
