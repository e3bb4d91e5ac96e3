//! One column's profile: counted batch by batch while an upload is validated, kept as
//! [`StoredColumn`] (sketches as base64 bytes), merged with other uploads' when read.

use std::cmp::Ordering;
use std::collections::HashMap;

use arrow::array::{Array, ArrowPrimitiveType, AsArray, BooleanArray, PrimitiveArray, StringArray};
use arrow::compute::{max, min};
use arrow::datatypes::{Date32Type, Float64Type, Int64Type};

use super::bins::Bins;
use super::cheap::{finite_bounds, text_bounds};
use super::distinct::Distinct;
use super::text_counts::TextCounts;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::MAX_FREQUENT;
use crate::schema::{DataType, ValidColumn};

/// DataSketches' HyperLogLog precision of the sketches profiles kept before [`Distinct`]:
/// 2^12 buckets.
pub(super) const LG_K: u8 = 12;

pub(super) const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

/// A column's profile as kept: counts, bounds (JSON of the column's type; dates as
/// `YYYY-MM-DD`), the sketches' bytes, and each value's count when there were few.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct StoredColumn {
    pub name: String,
    pub data_type: String,
    pub rows: u64,
    pub nulls: u64,
    pub min: Option<Value>,
    pub max: Option<Value>,
    /// DataSketches' HyperLogLog sketch of the non-null values (base64), as profiles kept it
    /// before [`Distinct`]; empty in later ones, still read when merging (`merged.rs`).
    pub distinct: String,
    /// HyperLogLog sketch of the non-null values ([`Distinct`]'s base64); absent in profiles kept
    /// before it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub hll: String,
    /// Each non-null value and its count; `None` past [`MAX_FREQUENT`] distinct values.
    pub frequent: Option<Vec<(Value, u64)>>,
    /// Histogram of numbers and dates (dates as days since 1970-01-01).
    pub bins: Option<Bins>,
}

/// A bound, in the column's own order (doubles by value, NaN left out).
#[derive(Debug, Clone, PartialEq)]
enum Bound {
    Int(i64),
    Double(f64),
    Text(String),
    Bool(bool),
    Date(i32),
}

impl Bound {
    fn json(&self) -> Value {
        match self {
            Bound::Int(v) => Value::from(*v),
            Bound::Double(v) => Value::from(*v),
            Bound::Text(v) => Value::from(v.as_str()),
            Bound::Bool(v) => Value::from(*v),
            Bound::Date(d) => Value::from(crate::schema::date_format::date32_to_string(*d)),
        }
    }
}

/// Each value's count while there are few, keyed without allocating for numbers.
enum Counts {
    /// Ints, dates and booleans by value, doubles by their bits.
    Numbers(HashMap<u64, (Bound, u64), Fast>),
    Texts(TextCounts),
}

type Fast = foldhash::fast::RandomState;

/// Counts one column of an upload. While it has at most [`MAX_FREQUENT`] values they are
/// counted exactly (and the distinct count is exact); past that, each value goes to the
/// HyperLogLog sketch instead.
pub struct ColumnProfiler {
    name: String,
    data_type: DataType,
    rows: u64,
    nulls: u64,
    min: Option<Bound>,
    max: Option<Bound>,
    distinct: Distinct,
    frequent: Option<Counts>,
    bins: Option<Bins>,
}

impl Bound {
    /// Feeds the value to `sketch` by the key the per-value paths use (`observe`'s `key`).
    fn sketch(&self, sketch: &mut Distinct) {
        match self {
            Bound::Int(v) => sketch.add_number(*v as u64),
            Bound::Double(v) => sketch.add_number(v.to_bits()),
            Bound::Text(v) => sketch.add_text(v),
            Bound::Bool(v) => sketch.add_number(*v as u64),
            Bound::Date(v) => sketch.add_number(*v as i64 as u64),
        }
    }
}

/// Calls `f` with each non-null value of `a`; a batch without nulls is read as a plain slice.
/// Generic over `f` so that each caller's closure is inlined into its loop.
fn each_value<T: ArrowPrimitiveType>(a: &PrimitiveArray<T>, mut f: impl FnMut(T::Native)) {
    if a.null_count() == 0 {
        a.values().iter().for_each(|v| f(*v));
    } else {
        a.iter().flatten().for_each(f);
    }
}

fn text(v: &str) -> Bound {
    Bound::Text(v.to_string())
}

/// The smaller (`want` Less) or larger of a kept bound and a batch's, by the column's order.
fn keep(slot: &mut Option<Bound>, new: Option<Bound>, want: Ordering) {
    let Some(new) = new else { return };
    let better = match (slot.as_ref(), &new) {
        (None, _) => true,
        (Some(Bound::Int(a)), Bound::Int(b)) => b.cmp(a) == want,
        (Some(Bound::Double(a)), Bound::Double(b)) => b.total_cmp(a) == want,
        (Some(Bound::Text(a)), Bound::Text(b)) => b.cmp(a) == want,
        (Some(Bound::Bool(a)), Bound::Bool(b)) => b.cmp(a) == want,
        (Some(Bound::Date(a)), Bound::Date(b)) => b.cmp(a) == want,
        _ => false,
    };
    if better {
        *slot = Some(new);
    }
}

impl ColumnProfiler {
    pub fn new(column: &ValidColumn) -> ColumnProfiler {
        let t = column.data_type;
        let numeric = matches!(t, DataType::Int | DataType::Double | DataType::Date);
        let counts = match t {
            DataType::String => Counts::Texts(TextCounts::default()),
            _ => Counts::Numbers(HashMap::default()),
        };
        ColumnProfiler {
            name: column.name.clone(),
            data_type: t,
            rows: 0,
            nulls: 0,
            min: None,
            max: None,
            distinct: Distinct::default(),
            frequent: Some(counts),
            bins: numeric.then(Bins::default),
        }
    }

    /// Counts `array` (this column's values in one batch) in: bounds by Arrow's kernels, then
    /// each value once.
    pub fn observe(&mut self, array: &dyn Array) {
        self.rows += array.len() as u64;
        self.nulls += array.null_count() as u64;
        match self.data_type {
            DataType::Int => {
                let a = array.as_primitive::<Int64Type>();
                let (lo, hi) = (min(a), max(a));
                self.bounds(lo.map(Bound::Int), hi.map(Bound::Int));
                self.cover(lo.map(|v| v as f64), hi.map(|v| v as f64));
                self.numbers(a, |v| v as f64, |v| v as u64, Bound::Int);
            }
            DataType::Date => {
                let a = array.as_primitive::<Date32Type>();
                let (lo, hi) = (min(a), max(a));
                self.bounds(lo.map(Bound::Date), hi.map(Bound::Date));
                self.cover(lo.map(f64::from), hi.map(f64::from));
                self.numbers(a, f64::from, |v| v as i64 as u64, Bound::Date);
            }
            DataType::Double => self.doubles(array.as_primitive::<Float64Type>()),
            DataType::String => self.texts(array.as_string::<i32>()),
            DataType::Boolean => self.booleans(array.as_boolean()),
        }
    }

    /// Text: counted one by one while few, and then the counted values give the bounds (at
    /// [`Self::too_many`] or [`Self::finish`]), so a batch of few values has no bounds pass.
    /// Past that, the batch's bounds in one pass and each value sketched.
    fn texts(&mut self, a: &StringArray) {
        let mut rest = 0;
        if let Some(Counts::Texts(counts)) = &mut self.frequent {
            match counts.count_batch(a, MAX_FREQUENT) {
                None => return,
                Some(first_uncounted) => rest = first_uncounted,
            }
            self.too_many();
        }
        let (lo, hi) = text_bounds(a).unzip();
        self.bounds(
            lo.map(|v| Bound::Text(v.into())),
            hi.map(|v| Bound::Text(v.into())),
        );
        let uncounted = a.slice(rest, a.len() - rest);
        uncounted
            .iter()
            .flatten()
            .for_each(|v| self.distinct.add_text(v));
    }

    /// Booleans have two values, so they are counted by Arrow's bit counts, not one by one.
    fn booleans(&mut self, a: &BooleanArray) {
        let counts = [(false, a.false_count()), (true, a.true_count())];
        for (v, n) in counts.into_iter().filter(|(_, n)| *n > 0) {
            self.bounds(Some(Bound::Bool(v)), Some(Bound::Bool(v)));
            self.count_number(v as u64, n as u64, || Bound::Bool(v));
        }
    }

    /// Doubles: NaN and infinities are left out of the bounds and the histogram.
    fn doubles(&mut self, a: &arrow::array::Float64Array) {
        let (lo, hi) = finite_bounds(a).unzip();
        self.bounds(lo.map(Bound::Double), hi.map(Bound::Double));
        self.cover(lo, hi);
        self.numbers(a, |v| v, f64::to_bits, Bound::Double);
    }

    /// A batch of numbers: the histogram, and each value counted (while few, in a second pass)
    /// or, past that, sketched in the same pass. Per value: no closure call through `Option`s,
    /// no division (the cost issue 37 measured).
    fn numbers<T: ArrowPrimitiveType>(
        &mut self,
        a: &PrimitiveArray<T>,
        value: impl Fn(T::Native) -> f64,
        key: impl Fn(T::Native) -> u64,
        bound: impl Fn(T::Native) -> Bound,
    ) {
        let counting = matches!(self.frequent, Some(Counts::Numbers(_)));
        if let Some(bins) = &mut self.bins {
            let (mut batch, mut n) = (bins.batch(), 0usize);
            if counting {
                each_value(a, |v| {
                    batch.add(value(v), n);
                    n += 1;
                });
            } else {
                let distinct = &mut self.distinct;
                each_value(a, |v| {
                    batch.add(value(v), n);
                    n += 1;
                    distinct.add_number(key(v));
                });
            }
            bins.add_batch(&batch);
            if !counting {
                return;
            }
        }
        if counting {
            each_value(a, |v| self.count_number(key(v), 1, || bound(v)));
            return;
        }
        let distinct = &mut self.distinct;
        each_value(a, |v| distinct.add_number(key(v)));
    }

    fn bounds(&mut self, lo: Option<Bound>, hi: Option<Bound>) {
        keep(&mut self.min, lo, Ordering::Less);
        keep(&mut self.max, hi, Ordering::Greater);
    }

    fn cover(&mut self, lo: Option<f64>, hi: Option<f64>) {
        if let (Some(bins), Some(lo), Some(hi)) = (&mut self.bins, lo, hi) {
            bins.cover(lo, hi);
        }
    }

    /// `n` of a number or boolean, counted by `key` while the column has few values; past that
    /// (also when this value is the one too many) sketched.
    fn count_number(&mut self, key: u64, n: u64, bound: impl FnOnce() -> Bound) {
        let Some(Counts::Numbers(counts)) = &mut self.frequent else {
            self.distinct.add_number(key);
            return;
        };
        if let Some((_, count)) = counts.get_mut(&key) {
            *count += n;
        } else if counts.len() < MAX_FREQUENT {
            counts.insert(key, (bound(), n));
        } else {
            self.too_many();
            self.distinct.add_number(key);
        }
    }

    /// Adds what `other` counted of the same column: bounds, bins, and either the counts (while
    /// both have few values together) or everything in the sketch.
    pub fn merge(&mut self, mut other: ColumnProfiler) {
        self.rows += other.rows;
        self.nulls += other.nulls;
        self.bounds(other.min.take(), other.max.take());
        if let (Some(mine), Some(theirs)) = (&mut self.bins, &other.bins) {
            mine.merge(theirs);
        }
        let mut theirs_counted = Vec::new();
        let both = match (&mut self.frequent, other.frequent.take()) {
            (Some(Counts::Numbers(a)), Some(Counts::Numbers(b))) => {
                b.into_iter()
                    .for_each(|(k, (bound, n))| a.entry(k).or_insert((bound, 0)).1 += n);
                a.len() <= MAX_FREQUENT
            }
            (Some(Counts::Texts(a)), Some(Counts::Texts(b))) => {
                b.entries().for_each(|(v, n)| a.add(v, n));
                a.len() <= MAX_FREQUENT
            }
            (_, theirs) => {
                // One side has too many values: the other's counted values join the sketch.
                theirs_counted = match &theirs {
                    Some(Counts::Numbers(c)) => c.values().map(|(b, _)| b.clone()).collect(),
                    Some(Counts::Texts(c)) => c.entries().map(|(v, _)| text(v)).collect(),
                    None => Vec::new(),
                };
                false
            }
        };
        self.fold_in(&theirs_counted);
        if !both {
            self.too_many();
        }
        self.distinct.union(&other.distinct);
    }

    /// Past [`MAX_FREQUENT`] values: the counted ones go to the sketch, the counts are dropped.
    fn too_many(&mut self) {
        let counted = self.counted_values();
        self.fold_in(&counted);
        self.frequent = None;
    }

    /// Counted values into the sketch and the bounds (text columns take no bounds per batch
    /// while their values are counted).
    fn fold_in(&mut self, values: &[Bound]) {
        for b in values {
            b.sketch(&mut self.distinct);
            self.bounds(Some(b.clone()), Some(b.clone()));
        }
    }

    fn counted_values(&self) -> Vec<Bound> {
        self.counted().into_iter().map(|(b, _)| b).collect()
    }

    fn counted(&self) -> Vec<(Bound, u64)> {
        match &self.frequent {
            Some(Counts::Numbers(c)) => c.values().map(|(b, n)| (b.clone(), *n)).collect(),
            Some(Counts::Texts(c)) => c.entries().map(|(v, n)| (text(v), n)).collect(),
            None => Vec::new(),
        }
    }

    pub fn finish(mut self) -> StoredColumn {
        let (counted, counts): (Vec<Bound>, Vec<u64>) = self.counted().into_iter().unzip();
        let frequent = self.frequent.is_some().then(|| {
            let list = counted.iter().map(Bound::json).zip(counts).collect();
            by_count(list)
        });
        // Values counted one by one are in the sketch too, so that uploads merge.
        self.fold_in(&counted);
        StoredColumn {
            name: self.name,
            data_type: self.data_type.as_str().to_string(),
            rows: self.rows,
            nulls: self.nulls,
            min: self.min.as_ref().map(Bound::json),
            max: self.max.as_ref().map(Bound::json),
            distinct: String::new(),
            hll: self.distinct.encode(),
            frequent,
            bins: self.bins,
        }
    }
}

/// Most frequent first; ties by the value's text, so the order is the same every time.
pub(super) fn by_count(mut list: Vec<(Value, u64)>) -> Vec<(Value, u64)> {
    list.sort_by(|a, b| {
        b.1.cmp(&a.1)
            .then_with(|| a.0.to_string().cmp(&b.0.to_string()))
    });
    list
}
