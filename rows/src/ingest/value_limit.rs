//! The longest single value: a decoded column checked before it is converted or copied, so a
//! value over the limit stops the upload with its column and row, and is never expanded.

use arrow::array::{Array, ArrayRef, AsArray, GenericByteArray};
use arrow::datatypes::{
    ArrowNativeType, ByteArrayType, DataType, Int16Type, Int32Type, Int64Type, Int8Type,
};
use arrow::datatypes::{UInt16Type, UInt32Type, UInt64Type, UInt8Type};

use crate::error::{Error, ErrorKind};

/// The message for a value of `column` in `row` longer than `limit` bytes.
pub fn too_long(column: &str, row: u64, limit: usize) -> Error {
    Error::many(
        ErrorKind::Unprocessable,
        vec![format!(
            "Column [{column}] has a value longer than the limit of {limit} bytes in row {row}"
        )],
    )
}

/// Index (within `array`) of the first value longer than `limit`, for string and binary arrays
/// and dictionaries of them; other types hold no long values.
pub fn first_too_long(array: &ArrayRef, limit: usize) -> Option<usize> {
    match array.data_type() {
        DataType::Utf8 => bytes(array.as_string::<i32>(), limit),
        DataType::LargeUtf8 => bytes(array.as_string::<i64>(), limit),
        DataType::Binary => bytes(array.as_binary::<i32>(), limit),
        DataType::LargeBinary => bytes(array.as_binary::<i64>(), limit),
        DataType::Utf8View => {
            let a = array.as_string_view();
            (0..a.len()).find(|&i| a.is_valid(i) && a.value(i).len() > limit)
        }
        DataType::BinaryView => {
            let a = array.as_binary_view();
            (0..a.len()).find(|&i| a.is_valid(i) && a.value(i).len() > limit)
        }
        DataType::Dictionary(key, _) => match key.as_ref() {
            DataType::Int8 => dictionary::<Int8Type>(array, limit),
            DataType::Int16 => dictionary::<Int16Type>(array, limit),
            DataType::Int32 => dictionary::<Int32Type>(array, limit),
            DataType::Int64 => dictionary::<Int64Type>(array, limit),
            DataType::UInt8 => dictionary::<UInt8Type>(array, limit),
            DataType::UInt16 => dictionary::<UInt16Type>(array, limit),
            DataType::UInt32 => dictionary::<UInt32Type>(array, limit),
            DataType::UInt64 => dictionary::<UInt64Type>(array, limit),
            _ => None,
        },
        _ => None,
    }
}

fn bytes<T: ByteArrayType>(a: &GenericByteArray<T>, limit: usize) -> Option<usize> {
    let offsets = a.value_offsets();
    (0..a.len())
        .find(|&i| a.is_valid(i) && (offsets[i + 1].as_usize() - offsets[i].as_usize()) > limit)
}

/// The first row whose key points at a value over the limit; the values are looked at once.
fn dictionary<K: arrow::datatypes::ArrowDictionaryKeyType>(
    array: &ArrayRef,
    limit: usize,
) -> Option<usize> {
    let dict = array.as_dictionary::<K>();
    let values = dict.values();
    let mut long = vec![false; values.len()];
    let mut any = false;
    let mut at = 0;
    while let Some(i) = first_too_long(&values.slice(at, values.len() - at), limit) {
        long[at + i] = true;
        any = true;
        at += i + 1;
        if at >= values.len() {
            break;
        }
    }
    if !any {
        return None;
    }
    let keys = dict.keys();
    (0..keys.len())
        .find(|&i| keys.is_valid(i) && long.get(keys.value(i).as_usize()).copied().unwrap_or(false))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{DictionaryArray, Int32Array, StringArray};

    use super::*;

    #[test]
    fn finds_the_first_long_value_in_plain_and_dictionary_arrays() {
        let plain: ArrayRef = Arc::new(StringArray::from(vec![Some("ab"), None, Some("abcdef")]));
        assert_eq!(first_too_long(&plain, 5), Some(2));
        assert_eq!(first_too_long(&plain, 6), None);
        let values = StringArray::from(vec!["x", "a very long value", "y"]);
        let keys = Int32Array::from(vec![Some(0), None, Some(2), Some(1), Some(1)]);
        let dict: ArrayRef = Arc::new(DictionaryArray::try_new(keys, Arc::new(values)).unwrap());
        assert_eq!(first_too_long(&dict, 5), Some(3));
        assert_eq!(first_too_long(&dict, 50), None);
    }
}
