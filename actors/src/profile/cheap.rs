//! What keeps a column's profile cheap per value: repeated numbers skip the sketch, and the
//! bounds of text and doubles are found in one pass without a call per comparison.

use arrow::array::{Float64Array, StringArray};

/// Slots of the repeat filter (a power of two): 4 KiB a column, within the first-level cache.
const SLOTS: usize = 512;
const SHIFT: u32 = 64 - SLOTS.trailing_zeros();

/// Keys remembered exactly: those within [`WINDOW`] / 2 of the first key seen (dates within
/// 89 years of it, small counts and ids), in a bitmap of 8 KiB a column.
const WINDOW: u64 = 1 << 16;

/// The numbers a column has seen: exactly near the first one, elsewhere the ones seen last,
/// direct-mapped by a multiplicative hash of their key. Feeding a sketch a value it already
/// holds changes nothing, so a value found here is not hashed into the sketch again: columns
/// of dates or small counts hash each value once, columns of a few thousand other values
/// skip most of the sketch's work, columns of distinct values pay a compare or two more.
pub struct Repeats {
    keys: Box<[u64; SLOTS]>,
    /// The first key less half the window, and a bit for each key from there.
    window: Option<(u64, Box<[u64; (WINDOW / 64) as usize]>)>,
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
        Repeats { keys, window: None }
    }
}

impl Repeats {
    /// Whether `key` is new here (then it is remembered; outside the window, in place of what
    /// its slot held).
    pub fn first_time(&mut self, key: u64) -> bool {
        let (base, seen) = self.window.get_or_insert_with(|| {
            let base = key.wrapping_sub(WINDOW / 2);
            (base, Box::new([0; (WINDOW / 64) as usize]))
        });
        let offset = key.wrapping_sub(*base);
        if offset < WINDOW {
            let (word, bit) = (&mut seen[(offset / 64) as usize], 1u64 << (offset % 64));
            let new = *word & bit == 0;
            *word |= bit;
            return new;
        }
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
    // Most strings have 8 bytes: one load, no copy through the stack (a `memcpy` call and a
    // stalled reload were a sixth of the profile's time).
    if let Some(head) = bytes.first_chunk::<8>() {
        return u64::from_be_bytes(*head);
    }
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
    fn repeats_find_every_key_near_the_first_and_others_seen_last_in_their_slot() {
        let mut r = Repeats::default();
        for key in [1u64, 2, 3, 0, u64::MAX, 1 << 40] {
            assert!(r.first_time(key), "{key} is new");
            assert!(!r.first_time(key), "{key} was just seen");
        }
        // Near the first key (1), every key is remembered, however many came between.
        let near: Vec<u64> = (0..20_000u64)
            .map(|i| (i + 1).wrapping_sub(10_000))
            .collect();
        near.iter().for_each(|k| _ = r.first_time(*k));
        assert!(near.iter().all(|k| !r.first_time(*k)), "all seen");
        assert!(r.first_time(1 + WINDOW / 2), "the window's end is outside");
        // Outside it, a key of the same slot replaces it: the old one is new again.
        let first = 1u64 << 41;
        let other = (first + 1..).find(|k| slot(*k) == slot(first)).unwrap();
        assert!(r.first_time(first));
        assert!(r.first_time(other));
        assert!(r.first_time(first));
    }
}
