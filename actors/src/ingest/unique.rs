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
/// as the 64-bit numbers of their bits (8 bytes an entry, not a 32-byte enum: a 1M-key upload's
/// set stays in a quarter of the memory and cache), others as they are. foldhash rather than
/// SipHash: every value of a keyed upload goes through this set, and the values are the
/// uploader's own (a flood of colliding values only slows their own upload).
#[derive(Debug)]
pub enum ValueSet {
    Numbers(DataType, HashSet<u64, Fast>),
    Other(HashSet<UniqueValue, Fast>),
}

impl ValueSet {
    fn new(data_type: DataType) -> ValueSet {
        match data_type {
            DataType::Int | DataType::Double | DataType::Date => {
                ValueSet::Numbers(data_type, HashSet::default())
            }
            DataType::String | DataType::Boolean => ValueSet::Other(HashSet::default()),
        }
    }

    pub fn contains(&self, value: &UniqueValue) -> bool {
        match self {
            ValueSet::Numbers(_, set) => value.bits().is_some_and(|n| set.contains(&n)),
            ValueSet::Other(set) => set.contains(value),
        }
    }

    /// Every value, in no order.
    pub fn iter(&self) -> Box<dyn Iterator<Item = UniqueValue> + '_> {
        match self {
            ValueSet::Numbers(t, set) => {
                Box::new(set.iter().map(|&n| UniqueValue::from_bits(*t, n)))
            }
            ValueSet::Other(set) => Box::new(set.iter().cloned()),
        }
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
        if let ValueSet::Numbers(_, set) = &mut self.values {
            set.reserve(array.len());
        }
        for i in 0..array.len() {
            if array.is_null(i) || skipped.get(i).copied().unwrap_or(false) {
                continue;
            }
            let v = value_at(self.data_type, array.as_ref(), i);
            let repeated = match &mut self.values {
                ValueSet::Numbers(_, set) => v.bits().is_some_and(|n| !set.insert(n)),
                // Looked up before it is moved in: a clone per value would cost an allocation
                // per text value.
                ValueSet::Other(set) => set.contains(&v),
            };
            if !repeated {
                if let ValueSet::Other(set) = &mut self.values {
                    set.insert(v);
                }
            } else {
                let row = first_row + i as u64;
                let place = Place::row(row, &self.name, "unique", Some(v.display().to_string()));
                problems.add_at(place, || {
                    format!(
                        "Column [{}] must be unique: value {} in row {} appears more than once in the file",
                        self.name,
                        v.display(),
                        first_row + i as u64
                    )
                });
            }
        }
    }
}
