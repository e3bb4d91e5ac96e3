//! The distinct count of a column's values past the ones counted exactly: a HyperLogLog sketch
//! (2^12 one-byte registers, about 1.6% error, estimated by `hyperloglockless`) fed 64-bit hashes
//! computed here. Numbers are hashed by a multiply-xorshift finaliser of their 64 bits, text by
//! XXH3, both fixed algorithms, so sketches kept in the catalog merge with later ones whatever
//! the release. DataSketches' sketch (`datasketches`), kept by profiles before this one, ran
//! Murmur3-128 through `Hash` for every value: two thirds of the profile's cost
//! (benches/README.md).
//!
//! A value sets its register here, as `hyperloglockless::HyperLogLog::insert_hash` would (the
//! hash's top 12 bits pick the register, one plus its trailing zeros is the candidate), but
//! without the crate's running estimator sum: that `f64` chain, stored and reloaded per value,
//! was a third of the sketch's time in the upload (`perf`, issue 37). The estimate is the
//! crate's, over the registers.
//!
//! Kept as base64 of a format byte and the registers: [`SPARSE`] (index and value of each
//! non-zero register) while that is smaller, else [`DENSE`] (all 4,096).

use std::hash::{BuildHasher, Hasher};

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use hyperloglockless::HyperLogLog;

/// 2^12 registers.
const PRECISION: u8 = 12;
const REGISTERS: usize = 1 << PRECISION;
/// A register holds one plus the trailing zeros of a 64-bit hash: at most 65.
const MAX_REGISTER: u8 = 65;
const SPARSE: u8 = 1;
const DENSE: u8 = 2;

/// The sketch's hasher passes on the hash it is given: values are hashed before they reach it
/// ([`Distinct::add_number`], [`Distinct::add_text`]), never through `Hash`.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Prehashed;

pub(super) struct PrehashedHasher(u64);

impl BuildHasher for Prehashed {
    type Hasher = PrehashedHasher;
    fn build_hasher(&self) -> PrehashedHasher {
        PrehashedHasher(0)
    }
}

impl Hasher for PrehashedHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    /// Only reached through `HyperLogLog::insert`, which this module never calls.
    fn write(&mut self, bytes: &[u8]) {
        self.0 = twox_hash::XxHash3_64::oneshot(bytes);
    }
}

/// A number's 64 bits mixed so that every input bit moves about half the output bits (the
/// finaliser of MurmurHash3 / SplitMix64); a bijection, so distinct numbers stay distinct.
#[inline(always)]
fn mix(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^ (k >> 33)
}

pub(super) struct Distinct {
    registers: Box<[u8; REGISTERS]>,
}

impl Default for Distinct {
    fn default() -> Distinct {
        Distinct {
            registers: Box::new([0; REGISTERS]),
        }
    }
}

impl Distinct {
    /// A number (ints and dates by value, doubles by their bits, booleans as 0 and 1).
    #[inline(always)]
    pub(super) fn add_number(&mut self, key: u64) {
        self.add_hash(mix(key));
    }

    #[inline(always)]
    pub(super) fn add_text(&mut self, value: &str) {
        self.add_hash(twox_hash::XxHash3_64::oneshot(value.as_bytes()));
    }

    #[inline(always)]
    fn add_hash(&mut self, hash: u64) {
        let register = &mut self.registers[(hash >> (64 - PRECISION)) as usize];
        *register = (*register).max(1 + hash.trailing_zeros() as u8);
    }

    pub(super) fn union(&mut self, other: &Distinct) {
        for (mine, theirs) in self.registers.iter_mut().zip(other.registers.iter()) {
            *mine = (*mine).max(*theirs);
        }
    }

    /// The crate's estimate, its running state computed from the registers.
    pub(super) fn estimate(&self) -> f64 {
        let registers = &self.registers[..];
        let zeros = registers.iter().filter(|r| **r == 0).count();
        let sum = registers.iter().map(|r| 0.5f64.powi(*r as i32)).sum();
        HyperLogLog::from_parts(registers.into(), Prehashed, zeros, sum).raw_count()
    }

    pub(super) fn encode(&self) -> String {
        let registers = &self.registers[..];
        let set: Vec<(usize, u8)> = (registers.iter().copied().enumerate())
            .filter(|(_, r)| *r > 0)
            .collect();
        let mut out;
        if set.len() * 3 < REGISTERS {
            out = Vec::with_capacity(1 + set.len() * 3);
            out.push(SPARSE);
            for (i, r) in set {
                out.extend_from_slice(&(i as u16).to_le_bytes());
                out.push(r);
            }
        } else {
            out = Vec::with_capacity(1 + REGISTERS);
            out.push(DENSE);
            out.extend_from_slice(registers);
        }
        B64.encode(out)
    }

    /// A kept sketch; `None` when it is not one this module wrote (damaged, another format).
    pub(super) fn decode(text: &str) -> Option<Distinct> {
        let bytes = B64.decode(text).ok()?;
        let (&format, body) = bytes.split_first()?;
        let mut registers = Box::new([0u8; REGISTERS]);
        match format {
            DENSE if body.len() == REGISTERS => registers.copy_from_slice(body),
            SPARSE if body.len() % 3 == 0 => {
                for entry in body.chunks_exact(3) {
                    let i = u16::from_le_bytes([entry[0], entry[1]]) as usize;
                    *registers.get_mut(i)? = entry[2];
                }
            }
            _ => return None,
        }
        if registers.iter().any(|r| *r > MAX_REGISTER) {
            return None;
        }
        Some(Distinct { registers })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(estimate: f64, truth: f64, error: f64) -> bool {
        (estimate - truth).abs() <= truth * error
    }

    #[test]
    fn estimates_numbers_and_text_within_the_error() {
        let mut ints = Distinct::default();
        let mut texts = Distinct::default();
        for i in 0..100_000u64 {
            ints.add_number(i);
            ints.add_number(i); // repeats change nothing
            texts.add_text(&format!("value {i}"));
        }
        assert!(
            close(ints.estimate(), 100_000.0, 0.05),
            "{}",
            ints.estimate()
        );
        assert!(
            close(texts.estimate(), 100_000.0, 0.05),
            "{}",
            texts.estimate()
        );
        let mut few = Distinct::default();
        [0u64, 1, 2, 0].into_iter().for_each(|k| few.add_number(k));
        assert!(close(few.estimate(), 3.0, 0.1), "{}", few.estimate());
        assert_eq!(Distinct::default().estimate(), 0.0);
    }

    /// The registers and the estimate are the crate's own for the same hashes, so sketches kept
    /// before registers were set here read the same.
    #[test]
    fn registers_are_set_as_the_crate_sets_them() {
        let mut ours = Distinct::default();
        let mut theirs = HyperLogLog::with_hasher(PRECISION, Prehashed);
        for n in [0u64, 1, 5, 70, 3_000, 40_000, 250_000] {
            // Hashes with every trailing-zero count, up to all 64 bits zero.
            let hash = match n {
                0 => 0,
                1 => 1 << 63,
                _ => mix(n) >> (n % 60),
            };
            ours.add_hash(hash);
            theirs.insert_hash(hash);
            (0..n).for_each(|k| {
                ours.add_number(k);
                theirs.insert_hash(mix(k));
            });
            assert_eq!(&ours.registers[..], theirs.parts().0, "{n}");
            let (a, b) = (ours.estimate(), theirs.raw_count());
            assert!((a - b).abs() <= b * 1e-9, "{n}: {a} {b}");
        }
    }

    #[test]
    fn kept_sketches_read_back_the_same_sparse_or_dense_and_merge() {
        for n in [0u64, 10, 300, 50_000] {
            let mut a = Distinct::default();
            (0..n).for_each(|k| a.add_number(k));
            let text = a.encode();
            let sparse = B64.decode(&text).unwrap()[0] == SPARSE;
            assert_eq!(sparse, n < 1000, "{n}");
            let back = Distinct::decode(&text).expect("reads back");
            assert_eq!(back.estimate(), a.estimate(), "{n}");
            assert_eq!(back.encode(), text);
        }
        let (mut a, mut b) = (Distinct::default(), Distinct::default());
        (0..30_000u64).for_each(|k| a.add_number(k));
        (20_000..60_000u64).for_each(|k| b.add_number(k));
        let mut kept = Distinct::decode(&a.encode()).unwrap();
        kept.union(&Distinct::decode(&b.encode()).unwrap());
        assert!(
            close(kept.estimate(), 60_000.0, 0.05),
            "{}",
            kept.estimate()
        );
    }

    #[test]
    fn damaged_sketches_are_not_read() {
        let bad_register = B64.encode([SPARSE, 0, 0, MAX_REGISTER + 1]);
        let past_the_end = B64.encode([SPARSE, 0xff, 0xff, 1]);
        let short_dense = B64.encode([DENSE, 1, 2]);
        for text in [
            "",
            "not base64!",
            &bad_register,
            &past_the_end,
            &short_dense,
        ] {
            assert!(Distinct::decode(text).is_none(), "{text}");
        }
    }
}
