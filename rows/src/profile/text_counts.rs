//! Each text value's count while a column has few values. Such values are mostly short (codes,
//! regions, categories), so a value of up to 15 bytes is keyed by its bytes and its length in
//! one `u128`, read straight from Arrow's value buffer: counting it is a load, a mask and an
//! integer hash, where a `String` key cost a string hash, a `memcmp` and a call each (half of a
//! low-cardinality text column's profile time, issue 37). Longer values keep `String` keys.
//! In front of the map, a small direct-mapped table finds a value seen before without the map's
//! hash and probe.

use std::collections::HashMap;

use arrow::array::{Array, StringArray};

type Fast = foldhash::fast::RandomState;

/// The longest value keyed as a number: its bytes fill the key's low 15 bytes, its length the
/// top one, so two different values never share a key.
const SHORT: usize = 15;

/// Slots of the table in front of the map (a power of two): 2 KiB a column.
const FRONT: usize = 64;

pub(super) struct TextCounts {
    /// A short value's key and its place in `values`.
    short: HashMap<u128, usize, Fast>,
    values: Vec<(String, u64)>,
    /// Keys found lately, direct-mapped, with their place in `values` plus one (0: free).
    front: Box<[(u128, u32); FRONT]>,
    long: HashMap<String, u64, Fast>,
}

impl Default for TextCounts {
    fn default() -> TextCounts {
        TextCounts {
            short: HashMap::default(),
            values: Vec::new(),
            front: Box::new([(0, 0); FRONT]),
            long: HashMap::default(),
        }
    }
}

fn front_slot(key: u128) -> usize {
    let folded = (key as u64) ^ ((key >> 64) as u64);
    (folded.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - FRONT.trailing_zeros())) as usize
}

/// The key of `data[start..end]` when it has at most [`SHORT`] bytes.
fn short_key(data: &[u8], start: usize, end: usize) -> Option<u128> {
    let len = end - start;
    if len > SHORT {
        return None;
    }
    // 16 bytes from the value's start, masked to its own: one load unless the buffer ends
    // within 16 bytes of it.
    let word = match data.get(start..start + 16) {
        Some(bytes) => u128::from_le_bytes(bytes.try_into().ok()?),
        None => {
            let mut bytes = [0u8; 16];
            bytes[..len].copy_from_slice(&data[start..end]);
            u128::from_le_bytes(bytes)
        }
    };
    let mask = u128::MAX.checked_shr(128 - 8 * len as u32).unwrap_or(0);
    Some((word & mask) | ((len as u128) << 120))
}

impl TextCounts {
    /// The number of different values counted.
    pub(super) fn len(&self) -> usize {
        self.values.len() + self.long.len()
    }

    /// The count of the short value `key`, if counted: from its slot in front, else from the
    /// map (and then put in front).
    #[inline(always)]
    fn short_count(&mut self, key: u128) -> Option<&mut u64> {
        let slot = front_slot(key);
        let (kept, place) = self.front[slot];
        let at = if place != 0 && kept == key {
            place as usize - 1
        } else {
            let at = *self.short.get(&key)?;
            self.front[slot] = (key, at as u32 + 1);
            at
        };
        Some(&mut self.values[at].1)
    }

    /// Counts the non-null values of `a` from the first on while at most `max` different ones
    /// are counted; the index of the value that would be one too many, if any (it and the
    /// values after it are not counted).
    pub(super) fn count_batch(&mut self, a: &StringArray, max: usize) -> Option<usize> {
        let (offsets, data) = (a.value_offsets(), a.value_data());
        for i in 0..a.len() {
            if a.is_null(i) {
                continue;
            }
            let (start, end) = (offsets[i] as usize, offsets[i + 1] as usize);
            let count = match short_key(data, start, end) {
                Some(key) => self.short_count(key),
                None => self.long.get_mut(a.value(i)),
            };
            if let Some(n) = count {
                *n += 1;
            } else if self.len() < max {
                self.add(a.value(i), 1);
            } else {
                return Some(i);
            }
        }
        None
    }

    /// Adds `n` of `value`.
    pub(super) fn add(&mut self, value: &str, n: u64) {
        let bytes = value.as_bytes();
        match short_key(bytes, 0, bytes.len()) {
            Some(key) => match self.short.get(&key) {
                Some(&at) => self.values[at].1 += n,
                None => {
                    self.short.insert(key, self.values.len());
                    self.values.push((value.into(), n));
                }
            },
            None => *self.long.entry(value.into()).or_insert(0) += n,
        }
    }

    /// Each value and its count, in no particular order.
    pub(super) fn entries(&self) -> impl Iterator<Item = (&str, u64)> {
        let short = self.values.iter().map(|(v, n)| (v.as_str(), *n));
        short.chain(self.long.iter().map(|(v, n)| (v.as_str(), *n)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_counted_apart_whatever_their_bytes_and_place_in_the_buffer() {
        // Values differing only in length, trailing NULs, the 15/16-byte edge, and the last
        // values of the buffer (read without the 16-byte load).
        let values = [
            "",
            "a",
            "a\0",
            "a\0\0",
            "ab",
            "ba",
            "fifteen bytes!!",
            "fifteen bytes!!!",
            "sixteen bytes!!!",
            "é",
            "a",
        ];
        let a = StringArray::from(
            values
                .iter()
                .map(|v| Some(*v))
                .chain([None, Some("a\0"), Some("")])
                .collect::<Vec<_>>(),
        );
        let mut c = TextCounts::default();
        assert_eq!(c.count_batch(&a, 50), None);
        let mut got: Vec<(&str, u64)> = c.entries().collect();
        got.sort();
        let mut want = vec![
            ("", 2),
            ("a", 2),
            ("a\0", 2),
            ("a\0\0", 1),
            ("ab", 1),
            ("ba", 1),
            ("fifteen bytes!!", 1),
            ("fifteen bytes!!!", 1),
            ("sixteen bytes!!!", 1),
            ("é", 1),
        ];
        want.sort();
        assert_eq!(got, want);
        // A sliced array reads its own values.
        let mut sliced = TextCounts::default();
        assert_eq!(sliced.count_batch(&a.slice(4, 2), 50), None);
        let mut got: Vec<(&str, u64)> = sliced.entries().collect();
        got.sort();
        assert_eq!(got, vec![("ab", 1), ("ba", 1)]);
    }

    #[test]
    fn the_value_one_too_many_is_reported_and_not_counted() {
        let a = StringArray::from(vec![Some("x"), None, Some("y"), Some("x"), Some("z")]);
        let mut c = TextCounts::default();
        assert_eq!(c.count_batch(&a, 2), Some(4));
        assert_eq!(c.len(), 2);
        c.add("x", 5);
        let x = c.entries().find(|(v, _)| *v == "x").unwrap();
        assert_eq!(x.1, 7);
    }

    #[test]
    fn values_sharing_a_front_slot_are_counted_apart() {
        // 200 values in 64 slots: many share one, and they alternate in it.
        let names: Vec<String> = (0..200).map(|i| format!("v{i}")).collect();
        let all: Vec<&str> = (0..3)
            .flat_map(|_| names.iter().map(String::as_str))
            .collect();
        let a = StringArray::from(all);
        let mut c = TextCounts::default();
        assert_eq!(c.count_batch(&a, 1000), None);
        assert_eq!(c.len(), 200);
        assert!(c.entries().all(|(_, n)| n == 3));
        let slots: std::collections::HashSet<usize> = (names.iter())
            .map(|v| front_slot(short_key(v.as_bytes(), 0, v.len()).unwrap()))
            .collect();
        assert!(slots.len() < names.len());
    }
}
