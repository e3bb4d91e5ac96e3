//! What keeps a column's profile cheap per value: repeated numbers skip the sketch, and the
//! bounds of text and doubles are found in one pass without a call per comparison.

use arrow::array::{Float64Array, StringArray};

/// Slots of the repeat filter (a power of two): 4 KiB a column, within the first-level cache.
const SLOTS: usize = 512;
const SHIFT: u32 = 64 - SLOTS.trailing_zeros();

/// The numbers a column saw last, direct-mapped by a multiplicative hash of their key. Feeding
/// a sketch a value it already holds changes nothing, so a value found here is not hashed into
/// the sketch again: columns of a few thousand values (dates, small counts) skip most of the
/// sketch's work, columns of distinct values pay one multiply and compare more.
pub struct Repeats {
    keys: Box<[u64; SLOTS]>,
}

fn slot(key: u64) -> usize {
    (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> SHIFT) as usize
}

impl Default for Repeats {
    fn default() -> Repeats {
        // Each slot starts with a key that does not map to it, so nothing is found at first.
        let (a, b) = (1u64, 2u64);
        let mut keys = Box::new([a; SLOTS]);
        keys[slot(a)] = if slot(b) != slot(a) { b } else { 3 };
        Repeats { keys }
    }
}

impl Repeats {
    /// Whether `key` is new here (then it is remembered, in place of what its slot held).
    pub fn first_time(&mut self, key: u64) -> bool {
        let s = &mut self.keys[slot(key)];
        let new = *s != key;
        *s = key;
        new
    }
}

/// The first 8 bytes of `s`, zero-padded, as a big-endian number: two strings whose prefixes
/// differ compare as their prefixes do (a shorter string pads with 0, the least byte).
fn prefix(s: &str) -> u64 {
    let bytes = s.as_bytes();
    let mut head = [0u8; 8];
    let n = bytes.len().min(8);
    head[..n].copy_from_slice(&bytes[..n]);
    u64::from_be_bytes(head)
}

/// The smallest and largest non-null string of `a` (byte order, as Arrow's kernels), in one
/// pass comparing prefixes first and whole strings only when the prefixes are equal.
pub fn text_bounds(a: &StringArray) -> Option<(&str, &str)> {
    let mut values = a.iter().flatten();
    let first = values.next()?;
    let (mut lo, mut hi) = (first, first);
    let (mut lo_p, mut hi_p) = (prefix(first), prefix(first));
    for v in values {
        let p = prefix(v);
        if p < lo_p || (p == lo_p && v < lo) {
            (lo, lo_p) = (v, p);
        }
        if p > hi_p || (p == hi_p && v > hi) {
            (hi, hi_p) = (v, p);
        }
    }
    Some((lo, hi))
}

/// The smallest and largest finite double of `a` (NaN and infinities left out), in one pass.
pub fn finite_bounds(a: &Float64Array) -> Option<(f64, f64)> {
    let mut bounds: Option<(f64, f64)> = None;
    for v in a.iter().flatten().filter(|v| v.is_finite()) {
        bounds = Some(match bounds {
            None => (v, v),
            Some((lo, hi)) => (
                if v.total_cmp(&lo).is_lt() { v } else { lo },
                if v.total_cmp(&hi).is_gt() { v } else { hi },
            ),
        });
    }
    bounds
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::compute::{max_string, min_string};

    #[test]
    fn text_bounds_equal_arrows_kernels() {
        let cases: Vec<Vec<Option<&str>>> = vec![
            vec![Some("b"), Some("a"), Some("c")],
            vec![Some("ab"), Some("ab\u{1}"), Some("ab\0"), Some("a")],
            vec![
                Some("item 123, x"),
                Some("item 1234"),
                Some("item 123"),
                None,
            ],
            vec![
                Some("same prefix A"),
                Some("same prefix B"),
                Some("same prefix"),
            ],
            vec![None, Some("é"), Some("e"), Some("")],
            vec![None, None],
        ];
        for case in cases {
            let a = StringArray::from(case.clone());
            let want = min_string(&a).zip(max_string(&a));
            assert_eq!(text_bounds(&a), want, "{case:?}");
        }
    }

    #[test]
    fn finite_bounds_leave_out_nan_and_infinities() {
        let a = Float64Array::from(vec![
            Some(f64::NAN),
            Some(2.5),
            None,
            Some(f64::INFINITY),
            Some(-1.0),
            Some(f64::NEG_INFINITY),
        ]);
        assert_eq!(finite_bounds(&a), Some((-1.0, 2.5)));
        assert_eq!(finite_bounds(&Float64Array::from(vec![f64::NAN])), None);
    }

    #[test]
    fn repeats_find_a_key_seen_last_in_its_slot_only() {
        let mut r = Repeats::default();
        for key in [1u64, 2, 3, 0, u64::MAX] {
            assert!(r.first_time(key), "{key} is new");
            assert!(!r.first_time(key), "{key} was just seen");
        }
        // A key of the same slot replaces it: the old one is new again.
        let first = 7u64;
        let other = (8u64..).find(|k| slot(*k) == slot(first)).unwrap();
        assert!(r.first_time(first));
        assert!(r.first_time(other));
        assert!(r.first_time(first));
    }
}
