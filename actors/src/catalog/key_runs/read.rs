//! Reading a stored block: every entry in order ([`each_entry`]: merges, a check with many
//! candidates), or only the entries of a few keys ([`join`]), each found from the restart point
//! before it. A grown index meets an upload's keys in every block, and the filter's 1% of false
//! candidates alone touch most blocks: decoding a whole block (32,768 entries) for a handful of
//! candidates made a 1M-key append to a 10M-key index decode all ten million (issue 52).

use super::block::{Entry, FORMAT};
use crate::error::{Error, Result};

fn damaged() -> Error {
    Error::internal("a unique index block is damaged")
}

/// Where a block's entries end, and how many restart points follow them (none in format 1).
/// The offsets are read when a seek needs them: a pass over the block (merges, many
/// candidates) reads none.
struct Layout {
    end: usize,
    restarts: usize,
}

impl Layout {
    /// Restart point `i`'s offset, checked to lie among the entries.
    fn restart(&self, bytes: &[u8], i: usize) -> Result<usize> {
        let at = self.end + 4 * i;
        let word = bytes.get(at..at + 4).ok_or_else(damaged)?;
        // unwrap: a slice of 4 bytes
        let offset = u32::from_le_bytes(word.try_into().unwrap()) as usize;
        if offset < 1 || offset >= self.end.max(2) {
            return Err(damaged());
        }
        Ok(offset)
    }
}

fn layout(bytes: &[u8]) -> Result<Layout> {
    match bytes.first() {
        Some(1) => Ok(Layout {
            end: bytes.len(),
            restarts: 0,
        }),
        Some(&FORMAT) => {
            let count_at = bytes.len().checked_sub(4).ok_or_else(damaged)?;
            let word = bytes.get(count_at..).ok_or_else(damaged)?;
            // unwrap: the last 4 bytes
            let restarts = u32::from_le_bytes(word.try_into().unwrap()) as usize;
            let end = restarts
                .checked_mul(4)
                .and_then(|n| count_at.checked_sub(n))
                .filter(|&end| end >= 1)
                .ok_or_else(damaged)?;
            Ok(Layout { end, restarts })
        }
        _ => Err(damaged()),
    }
}

/// Decodes entries from `at` until `end` or until `visit` answers false; `key` holds the key
/// before `at` (empty at a restart point).
fn walk(
    bytes: &[u8],
    mut at: usize,
    end: usize,
    key: &mut Vec<u8>,
    mut visit: impl FnMut(&[u8], i64) -> bool,
) -> Result<()> {
    while at < end {
        let (shared, len) = match bytes.get(at..at + 2) {
            Some(&[shared, len]) => (shared as usize, len as usize),
            _ => return Err(damaged()),
        };
        let rest = bytes.get(at + 2..at + 2 + len).ok_or_else(damaged)?;
        if shared > key.len() {
            return Err(damaged());
        }
        key.truncate(shared);
        key.extend_from_slice(rest);
        at += 2 + len;
        let mut origin = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = *bytes.get(at).filter(|_| at < end).ok_or_else(damaged)?;
            at += 1;
            origin |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                break;
            }
        }
        if !visit(key, origin as i64) {
            break;
        }
    }
    Ok(())
}

/// Calls `visit` with each entry of a stored block, in key order, the key in a buffer reused
/// from entry to entry (no allocation per entry).
pub(super) fn each_entry(bytes: &[u8], mut visit: impl FnMut(&[u8], i64)) -> Result<()> {
    let layout = layout(bytes)?;
    let mut key = Vec::with_capacity(64);
    walk(bytes, 1, layout.end, &mut key, |k, o| {
        visit(k, o);
        true
    })
}

/// The entries of a stored block whose key is among `candidates` (ascending): each candidate
/// sought from the last restart point before it when they are few, one pass over the block when
/// they are many.
pub(super) fn join(candidates: &[&[u8]], bytes: &[u8], found: &mut Vec<Entry>) -> Result<()> {
    let layout = layout(bytes)?;
    // A seek costs a binary search and about `block::RESTART` entries; a pass, every entry.
    if candidates.len() * 3 >= layout.restarts {
        let mut c = 0;
        return each_entry(bytes, |key, origin| {
            while c < candidates.len() && candidates[c] < key {
                c += 1;
            }
            if c < candidates.len() && candidates[c] == key {
                found.push(Entry {
                    key: key.to_vec(),
                    origin,
                });
            }
        });
    }
    let restart_key = |r: usize| -> Result<&[u8]> {
        match bytes.get(r..r + 2) {
            Some(&[0, len]) => bytes.get(r + 2..r + 2 + len as usize).ok_or_else(damaged),
            _ => Err(damaged()),
        }
    };
    let mut key = Vec::with_capacity(64);
    for (n, &candidate) in candidates.iter().enumerate() {
        if n > 0 && candidates[n - 1] == candidate {
            continue;
        }
        // The last restart whose key is below the candidate: equal keys (one value's dead and
        // live entries) may begin before a restart holding it.
        let (mut lo, mut hi) = (0, layout.restarts);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if restart_key(layout.restart(bytes, mid)?)? < candidate {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        key.clear();
        let start = layout.restart(bytes, lo.saturating_sub(1))?;
        walk(bytes, start, layout.end, &mut key, |k, origin| {
            if k == candidate {
                found.push(Entry {
                    key: k.to_vec(),
                    origin,
                });
            }
            k <= candidate
        })?;
    }
    Ok(())
}

/// The entries of a stored block, in key order.
#[cfg(test)]
pub(super) fn decode(bytes: &[u8]) -> Result<Vec<Entry>> {
    let mut entries = Vec::new();
    each_entry(bytes, |key, origin| {
        entries.push(Entry {
            key: key.to_vec(),
            origin,
        })
    })?;
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::key_runs::block::BlockBuilder;

    fn int(v: u32) -> Vec<u8> {
        let mut key = vec![1];
        key.extend_from_slice(&v.to_be_bytes());
        key
    }

    /// A block of even keys, 3 entries each for every key divisible by 20 (across restarts).
    fn block() -> (Vec<u8>, Vec<Entry>) {
        let mut b = BlockBuilder::default();
        let mut entries = Vec::new();
        for v in (0..4_000u32).step_by(2) {
            let copies = if v % 20 == 0 { 3 } else { 1 };
            for origin in 0..copies {
                b.push(&int(v), origin);
                entries.push(Entry {
                    key: int(v),
                    origin,
                });
            }
        }
        b.seal();
        (b.bytes, entries)
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
        block.seal();
        let mut found = Vec::new();
        join(&[&[0], &[3], &[6], &[7]], &block.bytes, &mut found).unwrap();
        assert_eq!(found, [entry(3, 1), entry(3, 2), entry(7, 1)]);
    }

    #[test]
    fn seeks_and_passes_find_the_same_entries() {
        let (bytes, entries) = block();
        assert_eq!(decode(&bytes).unwrap(), entries);
        for step in [1usize, 7, 13, 97, 1_999] {
            let keys: Vec<Vec<u8>> = (0..4_100u32).step_by(step).map(int).collect();
            let candidates: Vec<&[u8]> = keys.iter().map(|k| k.as_slice()).collect();
            let mut found = Vec::new();
            join(&candidates, &bytes, &mut found).unwrap();
            let want: Vec<Entry> = entries
                .iter()
                .filter(|e| candidates.contains(&e.key.as_slice()))
                .cloned()
                .collect();
            assert_eq!(found, want, "every {step}th key");
        }
    }

    #[test]
    fn format_one_blocks_are_still_read_and_damage_is_refused() {
        let mut one = vec![1u8];
        for (v, origin) in [(3u32, 1u8), (5, 2)] {
            let key = int(v);
            one.extend([0, key.len() as u8]);
            one.extend(&key);
            one.push(origin);
        }
        let mut found = Vec::new();
        join(&[&int(5)], &one, &mut found).unwrap();
        assert_eq!(
            found,
            [Entry {
                key: int(5),
                origin: 2
            }]
        );
        let (bytes, _) = block();
        assert!(decode(&bytes[..bytes.len() - 1]).is_err());
        let mut wrong_count = bytes.clone();
        let n = wrong_count.len();
        wrong_count[n - 4..].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(decode(&wrong_count).is_err());
        assert!(decode(&bytes[1..]).is_err(), "no format byte");
    }
}
