//! Query answers: JSON keyed by row index (typed values, null booleans as `{}`), CSV with an
//! index column, Arrow IPC stream, Parquet.

use arrow::array::RecordBatch;
use arrow::datatypes::DataType as ArrowType;

use super::cells::{Cells, Written};
use crate::error::{Error, Result};

/// `{"0": {"col": value, ...}, "1": ...}` with null booleans as `{}` (docs/SPEC.md 2.1).
/// Written column-typed straight into the buffer; a large answer is written in two halves on
/// two threads (each batch knows its first row index) and joined.
pub fn to_json(batches: &[RecordBatch]) -> Vec<u8> {
    let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
    let mut firsts = Vec::with_capacity(batches.len());
    let mut index = 0;
    for b in batches {
        firsts.push(index);
        index += b.num_rows();
    }
    let write = |batches: &[RecordBatch], firsts: &[usize]| {
        let mut out = Vec::new();
        for (batch, first) in batches.iter().zip(firsts) {
            json_rows(batch, *first, &mut out);
        }
        out
    };
    let split = batches.len() / 2;
    let (head, tail) = if rows >= PARALLEL_ROWS && split > 0 {
        std::thread::scope(|scope| {
            let tail = scope.spawn(|| write(&batches[split..], &firsts[split..]));
            let head = write(&batches[..split], &firsts[..split]);
            // unwrap: formatting does not panic; if it did, the query task reports it.
            (head, tail.join().unwrap())
        })
    } else {
        (write(batches, &firsts), Vec::new())
    };
    let mut out = Vec::with_capacity(head.len() + tail.len() + 2);
    out.push(b'{');
    out.extend_from_slice(head.strip_prefix(b",").unwrap_or(&head));
    out.extend_from_slice(&tail);
    out.push(b'}');
    out
}

/// Below this many rows an answer is formatted on one thread.
const PARALLEL_ROWS: usize = 20_000;

/// The batch's rows as `,"i":{...}` each (the caller drops the very first comma). A duplicated
/// column name keeps its first place and its last value, as the JSON object built key by key did.
fn json_rows(batch: &RecordBatch, first: usize, out: &mut Vec<u8>) {
    let schema = batch.schema();
    let mut columns: Vec<(Vec<u8>, Cells<'_>, bool)> = Vec::new();
    for (field, array) in schema.fields().iter().zip(batch.columns()) {
        let mut key = Vec::new();
        // unwrap: serialising a string into a Vec cannot fail.
        serde_json::to_writer(&mut key, field.name()).unwrap();
        key.push(b':');
        let is_bool = field.data_type() == &ArrowType::Boolean;
        let cells = Cells::new(array.as_ref());
        match columns.iter_mut().find(|(k, _, _)| *k == key) {
            Some(same) => *same = (key, cells, is_bool),
            None => columns.push((key, cells, is_bool)),
        }
    }
    let mut index = itoa::Buffer::new();
    for i in 0..batch.num_rows() {
        out.extend_from_slice(b",\"");
        out.extend_from_slice(index.format(first + i).as_bytes());
        out.extend_from_slice(b"\":{");
        for (c, (key, cells, is_bool)) in columns.iter().enumerate() {
            if c > 0 {
                out.push(b',');
            }
            out.extend_from_slice(key);
            if let Written::Null = cells.json(i, out) {
                out.extend_from_slice(if *is_bool { b"{}" } else { b"null" });
            }
        }
        out.push(b'}');
    }
}

/// The header record: an empty cell, then the names.
pub fn csv_header(names: &[String], out: &mut Vec<u8>) {
    if names.is_empty() {
        // The csv crate's way of writing a record that is one empty field.
        out.extend_from_slice(b"\"\"\n");
        return;
    }
    for name in names {
        out.push(b',');
        let start = out.len();
        out.extend_from_slice(name.as_bytes());
        quote_if_needed(out, start);
    }
    out.push(b'\n');
}

/// The batch's rows, the first numbered `first`, as the csv crate writes records by default:
/// a field is quoted only when it holds a comma, a quote, CR or LF, with quotes doubled, and a
/// record ends with LF (`output::tests` compares the two). Each cell is written straight into
/// `out`; only a string can need quotes.
pub fn csv_rows(batch: &RecordBatch, first: u64, out: &mut Vec<u8>) {
    let columns: Vec<Cells<'_>> = batch.columns().iter().map(|c| Cells::new(c)).collect();
    let mut index = itoa::Buffer::new();
    for i in 0..batch.num_rows() {
        out.extend_from_slice(index.format(first + i as u64).as_bytes());
        for cells in &columns {
            out.push(b',');
            let start = out.len();
            if let Written::Text = cells.text(i, out) {
                quote_if_needed(out, start);
            }
        }
        out.push(b'\n');
    }
}

/// Quotes the field written from `start` on if it needs it, in place (no copy of the field).
fn quote_if_needed(out: &mut Vec<u8>, start: usize) {
    let special = |b: &u8| matches!(b, b',' | b'"' | b'\n' | b'\r');
    if !out[start..].iter().any(special) {
        return;
    }
    let quotes = out[start..].iter().filter(|b| **b == b'"').count();
    let end = out.len();
    out.resize(end + quotes + 2, b'"');
    if quotes == 0 {
        out.copy_within(start..end, start + 1);
        out[start] = b'"';
        return;
    }
    // From the back: each byte moves right by the quotes still to its left, plus the opening one.
    let (mut read, mut write) = (end, end + quotes + 1);
    while read > start {
        read -= 1;
        write -= 1;
        out[write] = out[read];
        if out[read] == b'"' {
            write -= 1;
            out[write] = b'"';
        }
    }
    out[start] = b'"';
}

/// The whole result as one CSV document: an empty first header cell and each row's index first
/// (docs/SPEC.md 4.2).
pub fn to_csv(names: &[String], batches: &[RecordBatch]) -> Vec<u8> {
    let mut out = Vec::new();
    csv_header(names, &mut out);
    let mut first = 0;
    for b in batches {
        csv_rows(b, first, &mut out);
        first += b.num_rows() as u64;
    }
    out
}

pub fn to_parquet(schema: arrow::datatypes::SchemaRef, batches: &[RecordBatch]) -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    let mut w = parquet::arrow::ArrowWriter::try_new(&mut buf, schema, None)
        .map_err(|e| Error::internal(format!("writing Parquet: {e}")))?;
    for b in batches {
        w.write(b)
            .map_err(|e| Error::internal(format!("writing Parquet: {e}")))?;
    }
    w.close()
        .map_err(|e| Error::internal(format!("writing Parquet: {e}")))?;
    Ok(buf)
}

pub fn to_arrow_stream(
    schema: arrow::datatypes::SchemaRef,
    batches: &[RecordBatch],
) -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    let mut w = arrow_ipc::writer::StreamWriter::try_new(&mut buf, &schema)
        .map_err(|e| Error::internal(format!("writing Arrow: {e}")))?;
    for b in batches {
        w.write(b)
            .map_err(|e| Error::internal(format!("writing Arrow: {e}")))?;
    }
    w.finish()
        .map_err(|e| Error::internal(format!("writing Arrow: {e}")))?;
    drop(w);
    Ok(buf)
}

#[cfg(test)]
#[path = "output_tests.rs"]
mod tests;
