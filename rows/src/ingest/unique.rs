//! Values of `unique` columns seen in this upload: duplicates within the file are found here;
//! duplicates against stored data are found when the dataset actor commits.

use std::collections::HashSet;

use arrow::array::{Array, ArrayRef, AsArray};
use arrow::datatypes::{Date32Type, Float64Type, Int64Type};

use super::problems::{Place, Problems};
use crate::schema::{DataType, ValidColumn};

/// A value of any column type, hashable (doubles by their bits).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum UniqueValue {
    Int(i64),
    Double(u64),
    Str(String),
    Bool(bool),
    Date(i32),
}

impl UniqueValue {
    /// An `int`, `double` or `date` value as the unsigned number whose big-endian bytes its
    /// index key holds: numbers in this order are keys in byte order, and 8 bytes stand for the
    /// value in the upload's set.
    pub fn bits(&self) -> Option<u64> {
        match self {
            UniqueValue::Int(i) => Some(*i as u64),
            UniqueValue::Double(bits) => Some(*bits),
            UniqueValue::Date(d) => Some(u64::from(*d as u32)),
            UniqueValue::Str(_) | UniqueValue::Bool(_) => None,
        }
    }

    /// The value of `data_type` (`int`, `double` or `date`) whose [`Self::bits`] are `bits`.
    pub fn from_bits(data_type: DataType, bits: u64) -> UniqueValue {
        match data_type {
            DataType::Double => UniqueValue::Double(bits),
            DataType::Date => UniqueValue::Date(bits as u32 as i32),
            _ => UniqueValue::Int(bits as i64),
        }
    }

    pub fn display(&self) -> String {
        match self {
            UniqueValue::Int(v) => v.to_string(),
            UniqueValue::Double(bits) => f64::from_bits(*bits).to_string(),
            UniqueValue::Str(s) => format!("\"{s}\""),
            UniqueValue::Bool(b) => b.to_string(),
            UniqueValue::Date(d) => crate::ingest::date32_to_string(*d),
        }
    }
}

/// The `i`th value of `array` (non-null) as a [`UniqueValue`].
pub fn value_at(data_type: DataType, array: &dyn Array, i: usize) -> UniqueValue {
    match data_type {
        DataType::Int => UniqueValue::Int(array.as_primitive::<Int64Type>().value(i)),
        DataType::Double => {
            UniqueValue::Double(array.as_primitive::<Float64Type>().value(i).to_bits())
        }
        DataType::String => UniqueValue::Str(array.as_string::<i32>().value(i).to_string()),
        DataType::Boolean => UniqueValue::Bool(array.as_boolean().value(i)),
        DataType::Date => UniqueValue::Date(array.as_primitive::<Date32Type>().value(i)),
    }
}

type Fast = foldhash::fast::RandomState;

/// The values of one `unique` column seen in an upload. `int`, `double` and `date` values are kept
/// as the 64-bit numbers of their bits ([`NumberSet`]), others as they are. foldhash rather than
/// SipHash: every value of a keyed upload goes through this set, and the values are the
/// uploader's own (a flood of colliding values only slows their own upload).
#[derive(Debug)]
pub enum ValueSet {
    Numbers(DataType, NumberSet),
    Other(HashSet<UniqueValue, Fast>),
}

/// Numbers seen so far, in two parts: the values that arrived in ascending order (each above all
/// before it: a counter's ids, a time-ordered key), appended to a sorted list with no hashing,
/// and the rest in a hash set. Keys that arrive in order, as most keys do, cost a comparison and
/// an 8-byte push instead of a random access into a table of the whole upload; keys in any
/// other order cost what a hash set does.
#[derive(Debug, Default)]
pub struct NumberSet {
    ascending: Vec<u64>,
    others: HashSet<u64, Fast>,
}

impl NumberSet {
    /// Adds `n`; false when it was already there. Every value in `others` is below the last
    /// ascending value (it was at most that when it came, and equal ones are refused), so a
    /// value above it is new.
    fn insert(&mut self, n: u64) -> bool {
        match self.ascending.last() {
            Some(&last) if n <= last => {
                self.ascending.binary_search(&n).is_err() && self.others.insert(n)
            }
            _ => {
                self.ascending.push(n);
                true
            }
        }
    }

    fn contains(&self, n: u64) -> bool {
        self.ascending.binary_search(&n).is_ok() || self.others.contains(&n)
    }

    fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        self.ascending.iter().chain(self.others.iter()).copied()
    }
}

impl ValueSet {
    fn new(data_type: DataType) -> ValueSet {
        match data_type {
            DataType::Int | DataType::Double | DataType::Date => {
                ValueSet::Numbers(data_type, NumberSet::default())
            }
            DataType::String | DataType::Boolean => ValueSet::Other(HashSet::default()),
        }
    }

    pub fn contains(&self, value: &UniqueValue) -> bool {
        match self {
            ValueSet::Numbers(_, set) => value.bits().is_some_and(|n| set.contains(n)),
            ValueSet::Other(set) => set.contains(value),
        }
    }

    /// Every value, in no order.
    pub fn iter(&self) -> Box<dyn Iterator<Item = UniqueValue> + '_> {
        match self {
            ValueSet::Numbers(t, set) => {
                Box::new(set.iter().map(|n| UniqueValue::from_bits(*t, n)))
            }
            ValueSet::Other(set) => Box::new(set.iter().cloned()),
        }
    }
}

/// Calls `visit` with the index and [`UniqueValue::bits`] of every valid value of `array`, an
/// `int`, `double` or `date` column (typed once for the whole array, not per value).
pub fn each_number(data_type: DataType, array: &dyn Array, mut visit: impl FnMut(usize, u64)) {
    let mut each = |bits: &dyn Fn(usize) -> u64| {
        for i in 0..array.len() {
            if array.is_valid(i) {
                visit(i, bits(i));
            }
        }
    };
    match data_type {
        DataType::Int => {
            let values = array.as_primitive::<Int64Type>().values();
            each(&|i| values[i] as u64)
        }
        DataType::Double => {
            let values = array.as_primitive::<Float64Type>().values();
            each(&|i| values[i].to_bits())
        }
        DataType::Date => {
            let values = array.as_primitive::<Date32Type>().values();
            each(&|i| u64::from(values[i] as u32))
        }
        DataType::String | DataType::Boolean => {}
    }
}

#[derive(Debug)]
pub struct UniqueColumn {
    pub name: String,
    pub data_type: DataType,
    pub partition: bool,
    pub values: ValueSet,
}

impl UniqueColumn {
    pub(super) fn new(column: &ValidColumn) -> UniqueColumn {
        UniqueColumn {
            name: column.name.clone(),
            data_type: column.data_type,
            partition: column.partition_index.is_some(),
            values: ValueSet::new(column.data_type),
        }
    }

    pub(super) fn observe(&mut self, array: &ArrayRef, first_row: u64, problems: &mut Problems) {
        self.observe_except(array, first_row, &[], problems)
    }

    /// As [`Self::observe`], leaving out the rows marked in `skipped` (rows already rejected,
    /// whose values are not kept, so they cannot clash with a kept row).
    pub(super) fn observe_except(
        &mut self,
        array: &ArrayRef,
        first_row: u64,
        skipped: &[bool],
        problems: &mut Problems,
    ) {
        let name = &self.name;
        let skipped = |i: usize| skipped.get(i).copied().unwrap_or(false);
        let mut repeat = |row: u64, value: UniqueValue| {
            let place = Place::row(row, name, "unique", Some(value.display()));
            problems.add_at(place, || {
                format!(
                    "Column [{name}] must be unique: value {} in row {row} appears more than once in the file",
                    value.display(),
                )
            });
        };
        match &mut self.values {
            ValueSet::Numbers(data_type, set) => {
                let data_type = *data_type;
                each_number(data_type, array.as_ref(), |i, n| {
                    if !skipped(i) && !set.insert(n) {
                        repeat(first_row + i as u64, UniqueValue::from_bits(data_type, n));
                    }
                });
            }
            ValueSet::Other(set) => {
                for i in 0..array.len() {
                    if array.is_null(i) || skipped(i) {
                        continue;
                    }
                    let v = value_at(self.data_type, array.as_ref(), i);
                    // Looked up before it is moved in: a clone per value would cost an
                    // allocation per text value.
                    if set.contains(&v) {
                        repeat(first_row + i as u64, v);
                    } else {
                        set.insert(v);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whatever the order values come in, a value is refused exactly when it came before.
    #[test]
    fn numbers_in_any_order_are_refused_exactly_when_seen() {
        let orders: [Vec<u64>; 4] = [
            (0..500).collect(),
            (0..500).rev().collect(),
            (0..500).map(|i| (i * 7919) % 503).collect(),
            [10, 20, 5, 30, 5, 20, 25, 40, 35, 10, 41, 0, 0, u64::MAX, 1].to_vec(),
        ];
        for order in orders {
            let mut set = NumberSet::default();
            let mut seen = std::collections::HashSet::new();
            for &n in &order {
                assert_eq!(set.insert(n), seen.insert(n), "{n} in {order:?}");
                assert!(set.contains(n));
            }
            let mut all: Vec<u64> = set.iter().collect();
            all.sort_unstable();
            let mut expected: Vec<u64> = seen.into_iter().collect();
            expected.sort_unstable();
            assert_eq!(all, expected);
        }
    }
}
