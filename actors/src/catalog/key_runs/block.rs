//! A key run's block as stored: its entries (sorted keys, each with the origin of its row) and a
//! Bloom filter over its keys, so a check loads a block's entries only for the keys the filter
//! cannot rule out.

use crate::error::{Error, Result};

/// Entries per block: a block is one catalog row (about 600 KiB for `int` keys), loaded whole.
pub(super) const BLOCK_ENTRIES: usize = 32 * 1024;

/// Filter bits per key, and probes per key: about 1% false positives, as RocksDB's default.
const BITS_PER_KEY: usize = 10;
const PROBES: u32 = 7;

/// A key of the index (a type tag and the value's bytes, at most 33 bytes) and the origin
/// (`key_origins.id`) of the row holding it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Entry {
    pub key: Vec<u8>,
    pub origin: i64,
}

/// The 64-bit hash the filter probes with, computed once per key for every block it meets.
pub(crate) fn key_hash(key: &[u8]) -> u64 {
    twox_hash::XxHash3_64::oneshot(key)
}

/// Bit positions by double hashing (Kirsch and Mitzenmacher): two 32-bit halves of one hash,
/// position `i` being `(h1 + i * h2) % bits`. Computed by stepping (two divisions a key instead of
/// one a probe: the filters are built for every key a commit writes); the same positions, since
/// `h1 + i * h2` stays far below 2^64.
fn positions(hash: u64, bits: u64) -> impl Iterator<Item = u64> {
    let (h1, h2) = (hash & 0xffff_ffff, (hash >> 32) | 1);
    // Both halves fit 32 bits, and so does every block's filter: a 32-bit division is several
    // times cheaper than a 64-bit one, and these are most of a filter's cost to build.
    let (at, step) = match u32::try_from(bits) {
        Ok(small) => ((h1 as u32 % small) as u64, (h2 as u32 % small) as u64),
        Err(_) => (h1 % bits, h2 % bits),
    };
    let mut at = at;
    (0..PROBES).map(move |_| {
        let p = at;
        at += step;
        if at >= bits {
            at -= bits;
        }
        p
    })
}

/// A Bloom filter as stored: little-endian 64-bit words.
fn bloom(hashes: impl ExactSizeIterator<Item = u64>) -> Vec<u8> {
    let words = (hashes.len() * BITS_PER_KEY).div_ceil(64).max(1);
    let bits = (words * 64) as u64;
    let mut set = vec![0u64; words];
    for hash in hashes {
        for p in positions(hash, bits) {
            set[(p / 64) as usize] |= 1 << (p % 64);
        }
    }
    let mut bytes = Vec::with_capacity(words * 8);
    for word in set {
        bytes.extend_from_slice(&word.to_le_bytes());
    }
    bytes
}

/// A stored filter, read to be probed.
pub(super) struct Bloom(Vec<u64>);

impl Bloom {
    pub(super) fn read(bytes: &[u8]) -> Result<Bloom> {
        if bytes.is_empty() || !bytes.len().is_multiple_of(8) {
            return Err(Error::internal(format!(
                "a unique index filter of {} bytes is damaged",
                bytes.len()
            )));
        }
        Ok(Bloom(
            bytes
                .chunks_exact(8)
                // unwrap: chunks of exactly 8 bytes
                .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
                .collect(),
        ))
    }

    /// False only when the key is certainly not in the block.
    pub(super) fn may_hold(&self, hash: u64) -> bool {
        let bits = (self.0.len() * 64) as u64;
        positions(hash, bits).all(|p| self.0[(p / 64) as usize] & (1 << (p % 64)) != 0)
    }
}

/// The first byte of a block as written: format 2, entries with restart points. Format 1 (no
/// restarts, no trailer) is still read.
pub(super) const FORMAT: u8 = 2;

/// Every this many entries, one shares nothing with the entry before (a restart point): a
/// lookup starts at the restart before its key instead of at the block's first entry.
const RESTART: usize = 16;

/// A block being written: its entries encoded as they come, after a format byte: per entry the
/// length of the prefix it shares with the entry before (one byte), the length of the rest (one
/// byte), the rest, and the origin as a LEB128 varint. Keys in order share most of their bytes
/// (an `int` key of an ordered id costs 4 bytes, not 18), so a commit writes less to the catalog.
/// [`Self::seal`] then appends the restart points' offsets (`u32` each) and their count (`u32`),
/// little-endian. Also the entries' hashes for the filter, and the block's first and last key.
#[derive(Default)]
pub(super) struct BlockBuilder {
    pub(super) bytes: Vec<u8>,
    hashes: Vec<u64>,
    restarts: Vec<u32>,
    pub(super) first: Vec<u8>,
    pub(super) last: Vec<u8>,
}

impl BlockBuilder {
    pub(super) fn push(&mut self, key: &[u8], origin: i64) {
        if self.hashes.is_empty() {
            self.first.clear();
            self.first.extend_from_slice(key);
            self.bytes.clear();
            self.bytes.push(FORMAT);
            self.restarts.clear();
        }
        let shared = if self.hashes.len().is_multiple_of(RESTART) {
            self.restarts.push(self.bytes.len() as u32);
            0
        } else {
            self.last
                .iter()
                .zip(key)
                .take_while(|(a, b)| a == b)
                .count()
        };
        self.bytes.push(shared as u8);
        self.bytes.push((key.len() - shared) as u8);
        self.bytes.extend_from_slice(&key[shared..]);
        let mut rest = origin as u64;
        while rest >= 0x80 {
            self.bytes.push((rest as u8) | 0x80);
            rest >>= 7;
        }
        self.bytes.push(rest as u8);
        self.last.clear();
        self.last.extend_from_slice(key);
        self.hashes.push(key_hash(key));
    }

    pub(super) fn len(&self) -> usize {
        self.hashes.len()
    }

    /// Appends the restart points: `bytes` is then the block as stored (push nothing more).
    pub(super) fn seal(&mut self) {
        for offset in &self.restarts {
            self.bytes.extend_from_slice(&offset.to_le_bytes());
        }
        self.bytes
            .extend_from_slice(&(self.restarts.len() as u32).to_le_bytes());
    }

    /// The filter of the entries pushed so far.
    pub(super) fn bloom(&self) -> Vec<u8> {
        bloom(self.hashes.iter().copied())
    }

    pub(super) fn clear(&mut self) {
        self.bytes.clear();
        self.hashes.clear();
        self.restarts.clear();
    }

    /// The block as stored, with its filter; the builder is empty after.
    pub(super) fn sealed(&mut self) -> SealedBlock {
        self.seal();
        let block = SealedBlock {
            first: self.first.clone(),
            last: self.last.clone(),
            bloom: self.bloom(),
            entries: std::mem::take(&mut self.bytes),
            len: self.len(),
        };
        self.clear();
        block
    }
}

/// A block built and not yet stored: its first and last keys, filter, entries as stored, and how
/// many entries it holds.
pub(super) struct SealedBlock {
    pub(super) first: Vec<u8>,
    pub(super) last: Vec<u8>,
    pub(super) bloom: Vec<u8>,
    pub(super) entries: Vec<u8>,
    pub(super) len: usize,
}

#[cfg(test)]
mod tests {
    use super::super::read::decode;
    use super::*;

    #[test]
    fn entries_round_trip_and_damage_is_refused() {
        let entries = vec![
            Entry {
                key: vec![],
                origin: 0,
            },
            Entry {
                key: vec![1, 0, 0, 0, 0, 0, 0, 0, 7],
                origin: i64::MAX,
            },
            Entry {
                key: vec![5; 33],
                origin: -1,
            },
        ];
        let mut block = BlockBuilder::default();
        for e in &entries {
            block.push(&e.key, e.origin);
        }
        assert_eq!(
            (block.first.as_slice(), block.last.as_slice()),
            (&[][..], &[5; 33][..])
        );
        block.seal();
        let bytes = block.bytes;
        assert_eq!(decode(&bytes).unwrap(), entries);
        assert!(decode(&bytes[..bytes.len() - 1]).is_err());
        assert!(decode(&bytes[1..]).is_err(), "no format byte");
        assert!(Bloom::read(&[1, 2, 3]).is_err());
    }

    /// Ordered `int` keys with one origin take 4 bytes each; keys sharing a prefix round-trip.
    #[test]
    fn ordered_keys_are_stored_small() {
        let mut block = BlockBuilder::default();
        let mut entries = Vec::new();
        for v in 1_000i64..2_000 {
            let mut key = vec![1];
            key.extend_from_slice(&v.to_be_bytes());
            block.push(&key, 7);
            entries.push(Entry { key, origin: 7 });
        }
        block.seal();
        assert!(block.bytes.len() < 1_000 * 5, "{} bytes", block.bytes.len());
        assert_eq!(decode(&block.bytes).unwrap(), entries);
        block.clear();
        let texts: [&[u8]; 4] = [b"abc", b"abcd", b"abd", b"b"];
        for t in texts {
            block.push(t, 300);
        }
        block.seal();
        let back: Vec<Vec<u8>> = decode(&block.bytes)
            .unwrap()
            .into_iter()
            .map(|e| e.key)
            .collect();
        assert_eq!(back, texts.map(|t| t.to_vec()));
    }

    /// The stepped positions are the stored filters' positions, `(h1 + i * h2) % bits`.
    #[test]
    fn positions_are_the_double_hashing_formula() {
        let mut hash = 0x9e37_79b9_7f4a_7c15u64;
        for bits in [64u64, 320, 327_680, 1 << 33, u32::MAX as u64 + 7] {
            for _ in 0..1000 {
                hash = hash.rotate_left(17).wrapping_mul(0xbf58_476d_1ce4_e5b9) ^ bits;
                let (h1, h2) = (hash & 0xffff_ffff, (hash >> 32) | 1);
                let want: Vec<u64> = (0..PROBES as u64).map(|i| (h1 + i * h2) % bits).collect();
                assert_eq!(positions(hash, bits).collect::<Vec<_>>(), want);
            }
        }
    }

    #[test]
    fn the_filter_holds_every_key_and_rules_out_most_others() {
        let keys: Vec<Vec<u8>> = (0..10_000u64).map(|i| i.to_be_bytes().to_vec()).collect();
        let mut block = BlockBuilder::default();
        for k in &keys {
            block.push(k, 0);
        }
        let filter = Bloom::read(&block.bloom()).unwrap();
        assert!(keys.iter().all(|k| filter.may_hold(key_hash(k))));
        let false_positives = (10_000..110_000u64)
            .filter(|i| filter.may_hold(key_hash(&i.to_be_bytes())))
            .count();
        // About 1% expected; 2% leaves room for chance.
        assert!(false_positives < 2_000, "{false_positives} of 100,000");
    }
}
