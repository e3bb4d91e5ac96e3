//! The unique index's keys: each stored value of a `unique` column is recorded in the catalog
//! with the data file holding it, so an upload's check costs one lookup per uploaded value
//! however many files the version has (docs/DESIGN.md, Unique index).
//!
//! A key is the value's type tag and its bytes; strings longer than [`SHORT`] bytes are keyed by
//! their SHA-256 instead, so every key is at most 33 bytes.

use std::collections::HashMap;

use arrow::array::Array;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ProjectionMask;
use parquet::file::reader::ChunkReader;
use ring::digest;

use crate::error::{Error, Result};
use crate::ingest::{cores_each, each_number, value_at, StagedOutput, UniqueColumn, UniqueValue};
use crate::key_list::{ColumnKeys, KeyList};
use crate::schema::DataType;

/// Strings up to this many bytes are their own key.
const SHORT: usize = 32;

/// The index key of `value` (values of one column all have one type; the tag keeps keys of
/// different types apart anyway).
pub fn index_key(value: &UniqueValue) -> Vec<u8> {
    let mut key = Vec::with_capacity(SHORT + 1);
    match value {
        UniqueValue::Int(v) => {
            key.push(1);
            key.extend_from_slice(&v.to_be_bytes());
        }
        UniqueValue::Double(bits) => {
            key.push(2);
            key.extend_from_slice(&bits.to_be_bytes());
        }
        UniqueValue::Bool(b) => key.extend_from_slice(&[3, u8::from(*b)]),
        UniqueValue::Date(d) => {
            key.push(4);
            key.extend_from_slice(&d.to_be_bytes());
        }
        UniqueValue::Str(s) if s.len() <= SHORT => {
            key.push(5);
            key.extend_from_slice(s.as_bytes());
        }
        UniqueValue::Str(s) => {
            key.push(6);
            key.extend_from_slice(digest::digest(&digest::SHA256, s.as_bytes()).as_ref());
        }
    }
    key
}

/// The columns kept in the index: `unique` columns that are not partition columns (those values
/// are in the files' paths).
pub fn indexed(unique: &[UniqueColumn]) -> impl Iterator<Item = &UniqueColumn> {
    unique.iter().filter(|c| !c.partition)
}

/// The upload's values of `column` by key, to look up and to name in a refusal.
pub fn keyed(column: &UniqueColumn) -> HashMap<Vec<u8>, UniqueValue> {
    column.values.iter().map(|v| (index_key(&v), v)).collect()
}

/// The keys of each staged file's indexed columns, in the files' order, each list sorted (what
/// the commit records). Reads the staged files' unique columns back: the cost of the upload, not
/// of the dataset. Files are read and sorted on up to [`KEY_THREADS`] threads, the upload's share
/// of the cores.
pub fn staged_keys(output: &StagedOutput) -> Result<Vec<Vec<ColumnKeys>>> {
    let one_file = |file: &crate::ingest::StagedDataFile| -> Result<Vec<ColumnKeys>> {
        let at = |e: &dyn std::fmt::Display| {
            Error::internal(format!("reading {}: {e}", file.staged_path.display()))
        };
        indexed(&output.unique)
            .map(|column| {
                let handle = std::fs::File::open(&file.staged_path).map_err(|e| at(&e))?;
                // Sorted here, off the catalog's lock: the commit merges the files' lists.
                let keys = sorted_keys(handle, column, file.rows as usize).map_err(|e| at(&e))?;
                Ok(ColumnKeys {
                    column: column.name.clone(),
                    keys: keys.into(),
                })
            })
            .collect()
    };
    let files = &output.files;
    // The cores shared out among the uploads running now, as their parsing is: with others
    // running the cores are busy, and more threads would only hand off.
    let threads = cores_each().clamp(1, KEY_THREADS).min(files.len());
    if threads <= 1 || output.unique.is_empty() {
        return files.iter().map(one_file).collect();
    }
    let mut lists: Vec<Option<Result<Vec<ColumnKeys>>>> = files.iter().map(|_| None).collect();
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                scope.spawn(move || {
                    (t..files.len())
                        .step_by(threads)
                        .map(|i| (i, one_file(&files[i])))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for worker in workers {
            let done = worker.join().unwrap_or_else(|_| {
                vec![(0, Err(Error::internal("reading staged keys panicked")))]
            });
            for (i, keys) in done {
                lists[i] = Some(keys);
            }
        }
    });
    lists
        .into_iter()
        .map(|keys| keys.unwrap_or_else(|| Err(Error::internal("staged keys not read"))))
        .collect()
}

/// Threads reading the staged files' keys at most.
const KEY_THREADS: usize = 4;

/// The upload's keys of `column`: each staged file's list (ascending).
pub fn upload_keys<'k>(file_keys: &'k [Vec<ColumnKeys>], column: &str) -> Vec<&'k KeyList> {
    file_keys
        .iter()
        .flatten()
        .filter(|c| c.column == column)
        .map(|c| c.keys.as_ref())
        .collect()
}

/// The index keys of `column`'s values in the Parquet file `reader`, ascending. Fixed-width
/// values are sorted as the unsigned numbers whose big-endian bytes their keys hold (the same
/// order, without comparing byte strings).
fn sorted_keys<R: ChunkReader + 'static>(
    reader: R,
    column: &UniqueColumn,
    rows: usize,
) -> std::result::Result<KeyList, Box<dyn std::error::Error + Send + Sync>> {
    let fixed = matches!(
        column.data_type,
        DataType::Int | DataType::Double | DataType::Date
    );
    if !fixed {
        let mut keys = Vec::with_capacity(rows);
        column_values(reader, column, &mut |_, v| keys.push(index_key(&v)))?;
        keys.sort_unstable();
        return Ok(keys.into_iter().collect());
    }
    let mut numbers = Vec::with_capacity(rows);
    column_arrays(reader, column, &mut |_, array| {
        each_number(column.data_type, array, |_, n| numbers.push(n))
    })?;
    numbers.sort_unstable();
    let mut keys = KeyList::with_capacity(numbers.len(), numbers.len() * 9);
    for n in numbers {
        let (key, len) = number_key(column.data_type, n);
        keys.push(&key[..len]);
    }
    Ok(keys)
}

/// [`index_key`] of the `int`, `double` or `date` value whose [`UniqueValue::bits`] are `n`,
/// without allocating: the key's bytes and its length.
fn number_key(data_type: DataType, n: u64) -> ([u8; 9], usize) {
    let mut key = [0u8; 9];
    match data_type {
        DataType::Date => {
            key[0] = 4;
            key[1..5].copy_from_slice(&(n as u32).to_be_bytes());
            (key, 5)
        }
        _ => {
            key[0] = if data_type == DataType::Double { 2 } else { 1 };
            key[1..].copy_from_slice(&n.to_be_bytes());
            (key, 9)
        }
    }
}

/// Calls `visit` with the row number and value of every non-null value of `column` in the
/// Parquet file `reader` (none when the file has no such column).
pub fn column_values<R: ChunkReader + 'static>(
    reader: R,
    column: &UniqueColumn,
    visit: &mut dyn FnMut(usize, UniqueValue),
) -> std::result::Result<(), Box<dyn std::error::Error + Send + Sync>> {
    column_arrays(reader, column, &mut |first_row, array| {
        for i in 0..array.len() {
            if array.is_valid(i) {
                visit(first_row + i, value_at(column.data_type, array, i));
            }
        }
    })
}

/// Calls `visit` with the first row number and the values of each batch of `column` in the
/// Parquet file `reader` (none when the file has no such column).
fn column_arrays<R: ChunkReader + 'static>(
    reader: R,
    column: &UniqueColumn,
    visit: &mut dyn FnMut(usize, &dyn Array),
) -> std::result::Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let builder = ParquetRecordBatchReaderBuilder::try_new(reader)?;
    let Some(index) = builder
        .schema()
        .fields()
        .iter()
        .position(|f| f.name() == &column.name)
    else {
        return Ok(());
    };
    let mask = ProjectionMask::roots(builder.parquet_schema(), [index]);
    let mut row = 0;
    for batch in builder.with_projection(mask).build()? {
        let batch = batch?;
        let array = batch.column(0);
        visit(row, array.as_ref());
        row += array.len();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Numbers sorted as numbers give their keys in byte order: negatives, NaN and dates before
    /// 1970 included.
    #[test]
    fn numbers_sorted_by_their_bits_are_keys_in_byte_order() {
        let ints = [i64::MIN, -1, 0, 1, 255, 256, i64::MAX];
        let doubles = [f64::NEG_INFINITY, -2.5, -0.0, 0.0, 1e-300, 3.0, f64::NAN];
        let dates = [i32::MIN, -365, -1, 0, 1, 19_000];
        let mut values: Vec<UniqueValue> = ints.iter().map(|&i| UniqueValue::Int(i)).collect();
        values.extend(doubles.iter().map(|d| UniqueValue::Double(d.to_bits())));
        values.extend(dates.iter().map(|&d| UniqueValue::Date(d)));
        for group in values.chunk_by(|a, b| std::mem::discriminant(a) == std::mem::discriminant(b))
        {
            let mut by_bits = group.to_vec();
            by_bits.sort_by_key(UniqueValue::bits);
            let keys: Vec<Vec<u8>> = by_bits.iter().map(index_key).collect();
            assert!(keys.is_sorted(), "{by_bits:?}");
        }
    }

    #[test]
    fn number_keys_are_index_keys() {
        let values = [
            UniqueValue::Int(i64::MIN),
            UniqueValue::Int(-1),
            UniqueValue::Int(0),
            UniqueValue::Int(258),
            UniqueValue::Double((-2.5f64).to_bits()),
            UniqueValue::Double(f64::NAN.to_bits()),
            UniqueValue::Date(-365),
            UniqueValue::Date(19_000),
        ];
        for v in values {
            let data_type = match v {
                UniqueValue::Int(_) => DataType::Int,
                UniqueValue::Double(_) => DataType::Double,
                _ => DataType::Date,
            };
            // unwrap: numbers have bits
            let (key, len) = number_key(data_type, v.bits().unwrap());
            assert_eq!(key[..len], index_key(&v)[..], "{v:?}");
        }
    }

    #[test]
    fn keys_tell_values_apart_and_stay_short() {
        let long = "x".repeat(1000);
        let values = [
            UniqueValue::Int(1),
            UniqueValue::Int(256),
            UniqueValue::Double(1.0f64.to_bits()),
            UniqueValue::Bool(true),
            UniqueValue::Date(1),
            UniqueValue::Str("1".into()),
            UniqueValue::Str("x".repeat(SHORT)),
            UniqueValue::Str(long.clone()),
            UniqueValue::Str(format!("{long}y")),
        ];
        let keys: Vec<Vec<u8>> = values.iter().map(index_key).collect();
        for (i, a) in keys.iter().enumerate() {
            assert!(
                a.len() <= SHORT + 1,
                "{:?} keyed in {} bytes",
                values[i],
                a.len()
            );
            for b in &keys[i + 1..] {
                assert_ne!(a, b);
            }
        }
        assert_eq!(index_key(&UniqueValue::Str(long.clone())), keys[7]);
    }
}
