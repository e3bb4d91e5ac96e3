//! What keeps a column's profile cheap per value: the bounds of text and doubles are found in
//! one pass without a call per comparison.

use arrow::array::{Float64Array, StringArray};

/// The first 16 bytes of `s`, zero-padded, as a big-endian number: two strings whose prefixes
/// differ compare as their prefixes do (a shorter string pads with 0, the least byte). 16
/// bytes, because values such as `item 12345, batch 12` share their first 8 and would each
/// cost a `memcmp` call.
fn prefix(s: &str) -> u128 {
    let bytes = s.as_bytes();
    // Loads, no copy through the stack (a `memcpy` call and a stalled reload were a sixth of
    // the profile's time).
    if let Some(head) = bytes.first_chunk::<16>() {
        return u128::from_be_bytes(*head);
    }
    let Some(head) = bytes.first_chunk::<8>() else {
        let mut head = [0u8; 8];
        head[..bytes.len()].copy_from_slice(bytes);
        return (u64::from_be_bytes(head) as u128) << 64;
    };
    // 8 to 15 bytes: the last 8 as one number, shifted so that the bytes after the 8th lead.
    let last = bytes
        .last_chunk::<8>()
        .map_or(0, |b| u64::from_be_bytes(*b));
    let rest = last.checked_shl(8 * (16 - bytes.len()) as u32).unwrap_or(0);
    ((u64::from_be_bytes(*head) as u128) << 64) | rest as u128
}

/// The smallest and largest non-null string of `a` (byte order, as Arrow's kernels), in one
/// pass comparing prefixes first and whole strings only when the prefixes are equal.
pub(super) fn text_bounds(a: &StringArray) -> Option<(&str, &str)> {
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
pub(super) fn finite_bounds(a: &Float64Array) -> Option<(f64, f64)> {
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
            // Differences within and past the first 16 bytes, lengths 8 to 17.
            vec![
                Some("twelve bytes"),
                Some("twelve bytez"),
                Some("twelve byte"),
                Some("eight by"),
                Some("sixteen bytes ok"),
                Some("sixteen bytes ok!"),
                Some("sixteen bytes oj~"),
                Some("twelve bytes\0"),
            ],
            vec![Some("eight byz"), Some("eight by"), Some("eight by\0")],
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
}
