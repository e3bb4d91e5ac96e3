//! A histogram of numbers (dates as day numbers) in [`FINE`] equal bins whose range doubles as
//! values arrive outside it: each value costs a division, no sort and no allocation, so a whole
//! upload is counted exactly at its bins' resolution. Two uploads' bins merge by moving each bin's
//! count to the bin holding its middle (exact when their ranges agree).

use serde::{Deserialize, Serialize};

/// Bins kept per column.
pub const FINE: usize = 256;

/// Histograms a batch is counted into, in turn (a power of two).
const LANES: usize = 4;

/// A batch's counts, in [`LANES`] histograms taken in turn, so that a run of values in one bin
/// (sorted ids, one day's dates) does not wait on the store of the count before: that chain
/// was the largest part of the profile's time for sorted ids (`perf`, issue 37). A multiply
/// per value instead of a division.
pub struct BatchCounts {
    lo: f64,
    per_unit: f64,
    /// A batch has far fewer than 2^32 values.
    lanes: [[u32; FINE]; LANES],
}

impl BatchCounts {
    /// Counts `x` unless it is NaN or infinite, in the lane of `n`, the value's place in the
    /// batch. The caller's counter, not a field: a field of this struct was kept in memory,
    /// one more stored and reloaded chain.
    #[inline(always)]
    pub fn add(&mut self, x: f64, n: usize) {
        if x.is_finite() {
            let i = (((x - self.lo) * self.per_unit) as usize).min(FINE - 1);
            self.lanes[n & (LANES - 1)][i] += 1;
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Bins {
    /// The first bin's lower end.
    pub lo: f64,
    pub width: f64,
    /// [`FINE`] counts, or none before the first value.
    pub counts: Vec<u64>,
}

impl Default for Bins {
    fn default() -> Self {
        Bins {
            lo: 0.0,
            width: 1.0,
            counts: Vec::new(),
        }
    }
}

impl Bins {
    fn hi(&self) -> f64 {
        self.lo + self.width * FINE as f64
    }

    /// Makes the range hold `[min, max]` (finite), doubling it as often as needed.
    pub fn cover(&mut self, min: f64, max: f64) {
        if self.counts.is_empty() {
            self.counts = vec![0; FINE];
            self.lo = min;
            // A little over the span, so that the largest value falls inside the last bin.
            self.width = ((max - min) / FINE as f64 * 1.0001).max(f64::MIN_POSITIVE * 1e10);
            if max == min {
                self.width = 1.0;
            }
        }
        while max >= self.hi() {
            self.double(false);
        }
        while min < self.lo {
            self.double(true);
        }
    }

    /// Twice as wide: pairs of bins become one; `down`, the new range starts a whole old range
    /// lower (the old bins land in the upper half).
    fn double(&mut self, down: bool) {
        let pairs: Vec<u64> = self.counts.chunks(2).map(|p| p.iter().sum()).collect();
        let half = FINE / 2;
        self.counts = vec![0; FINE];
        let at = if down { half } else { 0 };
        self.counts[at..at + half].copy_from_slice(&pairs);
        if down {
            self.lo -= self.width * FINE as f64;
        }
        self.width *= 2.0;
    }

    /// Where a batch's values are counted, after [`Self::cover`] made room for them; its counts
    /// join these with [`Self::add_batch`].
    pub fn batch(&self) -> BatchCounts {
        BatchCounts {
            lo: self.lo,
            per_unit: 1.0 / self.width,
            lanes: [[0; FINE]; LANES],
        }
    }

    pub fn add_batch(&mut self, batch: &BatchCounts) {
        // No room was made: the batch had no finite value.
        if self.counts.is_empty() {
            return;
        }
        for lane in &batch.lanes {
            for (count, n) in self.counts.iter_mut().zip(lane) {
                *count += u64::from(*n);
            }
        }
    }

    /// Counts `value`, which [`Self::cover`] has made room for: the reference a batch's counts
    /// are tested against (uploads count through [`Self::batch`]).
    #[cfg(test)]
    pub fn add(&mut self, value: f64) {
        let i = ((value - self.lo) / self.width) as usize;
        self.counts[i.min(FINE - 1)] += 1;
    }

    /// Adds `other`'s counts, each at its bin's middle.
    pub fn merge(&mut self, other: &Bins) {
        let Some(last) = other.counts.iter().rposition(|c| *c > 0) else {
            return;
        };
        let first = other.counts.iter().position(|c| *c > 0).unwrap_or(0);
        let middle = |i: usize| other.lo + other.width * (i as f64 + 0.5);
        self.cover(middle(first), middle(last));
        for (i, count) in other.counts.iter().enumerate().filter(|(_, c)| **c > 0) {
            let j = ((middle(i) - self.lo) / self.width) as usize;
            self.counts[j.min(FINE - 1)] += count;
        }
    }

    /// `n` equal bins between `min` and `max`: (from, to, count), each fine bin counted in the one
    /// holding its middle.
    pub fn regroup(&self, min: f64, max: f64, n: usize) -> Vec<(f64, f64, u64)> {
        if self.counts.is_empty() {
            return Vec::new();
        }
        let width = (max - min) / n as f64;
        let mut out: Vec<(f64, f64, u64)> = (0..n)
            .map(|i| (min + width * i as f64, min + width * (i + 1) as f64, 0))
            .collect();
        if let Some(last) = out.last_mut() {
            last.1 = max;
        }
        for (i, count) in self.counts.iter().enumerate().filter(|(_, c)| **c > 0) {
            let middle = self.lo + self.width * (i as f64 + 0.5);
            let j = if width > 0.0 {
                ((middle - min) / width).max(0.0) as usize
            } else {
                0
            };
            out[j.min(n - 1)].2 += count;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn total(b: &Bins) -> u64 {
        b.counts.iter().sum()
    }

    /// A batch counts as one value at a time would: sorted runs, a spread, NaN and infinities.
    #[test]
    fn a_batch_counts_as_values_added_one_by_one() {
        let mut values: Vec<f64> = (0..10_000).map(f64::from).collect();
        values.extend((0..5_000).map(|i| ((i * 7919) % 10_000) as f64 + 0.5));
        values.extend([f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 9_999.0]);
        let (mut one_by_one, mut batched) = (Bins::default(), Bins::default());
        one_by_one.cover(0.0, 9_999.5);
        batched.cover(0.0, 9_999.5);
        values
            .iter()
            .filter(|v| v.is_finite())
            .for_each(|v| one_by_one.add(*v));
        let mut batch = batched.batch();
        values
            .iter()
            .enumerate()
            .for_each(|(n, v)| batch.add(*v, n));
        batched.add_batch(&batch);
        assert_eq!(batched, one_by_one);
        assert_eq!(total(&batched), 15_001);
        // A batch with no finite value, before any room was made: nothing counted.
        let mut empty = Bins::default();
        let mut batch = empty.batch();
        batch.add(f64::NAN, 0);
        empty.add_batch(&batch);
        assert_eq!(empty, Bins::default());
    }

    #[test]
    fn the_range_grows_both_ways_and_keeps_every_count() {
        let mut b = Bins::default();
        b.cover(10.0, 20.0);
        (10..=20).for_each(|v| b.add(v as f64));
        b.cover(-1000.0, 5000.0);
        b.add(-1000.0);
        b.add(5000.0);
        assert_eq!(total(&b), 13);
        assert!(b.lo <= -1000.0 && b.hi() > 5000.0, "{} {}", b.lo, b.hi());
        let ten = b.regroup(-1000.0, 5000.0, 10);
        assert_eq!(ten.iter().map(|x| x.2).sum::<u64>(), 13);
        assert_eq!((ten[0].2, ten[9].2), (1, 1), "{ten:?}");
    }

    #[test]
    fn merged_bins_equal_one_run_over_both() {
        let (mut a, mut b, mut both) = (Bins::default(), Bins::default(), Bins::default());
        a.cover(0.0, 99.0);
        b.cover(100.0, 199.0);
        both.cover(0.0, 199.0);
        (0..100).for_each(|v| a.add(v as f64));
        (100..200).for_each(|v| b.add(v as f64));
        (0..200).for_each(|v| both.add(v as f64));
        a.merge(&b);
        // Each fine bin lands whole in one bar: a bar may gain or lose the values of the fine
        // bin at its edge, never more.
        let (merged, one) = (a.regroup(0.0, 199.0, 10), both.regroup(0.0, 199.0, 10));
        assert_eq!(merged.iter().map(|x| x.2).sum::<u64>(), 200);
        for (m, o) in merged.iter().zip(&one) {
            assert!(m.2.abs_diff(o.2) <= 2, "{merged:?} against {one:?}");
        }
    }
}
