//! One batch of a CSV file, typed: the batch rule and parsing options, what parsing a batch of
//! one file needs, and the per-thread builders. Shared by the sequential path (`csv_input`) and
//! the parallel one (`csv_parallel`).

use std::io::Read;

use arrow::array::{ArrayRef, RecordBatch};
use arrow::datatypes::SchemaRef;

use super::csv_records::{CsvRecords, Record, RecordError, MAX_FIELDS};
use super::csv_split::BatchRule;
use super::csv_values::{parse_field, Builder};
use super::problems::{Place, Problems};
use super::{BATCH_BYTES, BATCH_ROWS};
use crate::error::{Error, ErrorKind, Result};
use crate::schema::ValidColumn;

/// How to ingest a CSV file: the batch rule and how many threads parse it. The defaults are the
/// service's; tests shrink the batches to make many of them.
#[derive(Clone, Copy, Debug)]
pub struct CsvOptions {
    pub batch_rows: usize,
    pub batch_bytes: usize,
    /// Parsing threads beside the one reading the input; below 2, one thread does it all.
    pub workers: usize,
    /// A batch holding more raw bytes than this is parsed by the reading thread, as is the rest
    /// of the file after it (bounded memory for very long rows or values).
    pub max_chunk_bytes: usize,
    /// Parse on one thread while the uploads running leave this one less than two cores
    /// (see running; asked before each batch, so an upload left alone moves to `workers`);
    /// off: always `workers`.
    pub share_cores: bool,
}

impl Default for CsvOptions {
    fn default() -> CsvOptions {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        CsvOptions {
            batch_rows: BATCH_ROWS,
            batch_bytes: BATCH_BYTES,
            workers: if cores < 2 { 0 } else { cores.min(MAX_WORKERS) },
            max_chunk_bytes: MAX_CHUNK_BYTES,
            share_cores: true,
        }
    }
}

/// More parsing threads than this gain little: the single Parquet writer is the limit.
const MAX_WORKERS: usize = 4;
const MAX_CHUNK_BYTES: usize = 16 * 1024 * 1024;

/// What parsing any batch of one file needs: the columns, where each comes from in a record,
/// the header's names and length, the batch rule.
pub(super) struct Layout<'a> {
    pub columns: &'a [ValidColumn],
    pub sources: Vec<usize>,
    pub names: Vec<String>,
    pub header_len: usize,
    pub rule: BatchRule,
    pub schema: SchemaRef,
}

/// One batch, typed: its rows numbered from `first_row`, and the problems met while parsing.
pub(super) struct ParsedBatch {
    pub batch: RecordBatch,
    pub first_row: u64,
    pub problems: Problems,
}

/// The builders of one parsing thread, reused batch after batch.
pub(super) struct BatchBuilder {
    builders: Vec<Builder>,
    record: Record,
}

impl BatchBuilder {
    pub(super) fn new(layout: &Layout<'_>) -> BatchBuilder {
        let capacity = layout.rule.rows.min(BATCH_ROWS);
        BatchBuilder {
            builders: layout
                .columns
                .iter()
                .map(|c| Builder::new(c, capacity))
                .collect(),
            record: Record::default(),
        }
    }

    /// Reads the records of one batch (the batch rule ends it, or the input); `None` when the
    /// input had no more records.
    pub(super) fn read<R: Read>(
        &mut self,
        reader: &mut CsvRecords<R>,
        layout: &Layout<'_>,
        first_row: u64,
    ) -> Result<Option<ParsedBatch>> {
        let (columns, record) = (layout.columns, &mut self.record);
        let mut problems = Problems::default();
        let (mut row, mut in_batch, mut batch_bytes) = (first_row - 1, 0usize, 0usize);
        loop {
            match reader.read_record(record) {
                Ok(false) => break,
                Ok(true) => {}
                Err(e) => return Err(record_error(e, &layout.names, row + 1, reader)),
            }
            row += 1;
            if record.len() != layout.header_len {
                // A blank line at the end of a file is not a row.
                if record.len() == 1 && record[0].is_empty() {
                    row -= 1;
                    continue;
                }
                problems.add_at(Place::row(row, "", "fields", None), || {
                    format!(
                        "Row {row} has {} fields, but the header has {}",
                        record.len(),
                        layout.header_len
                    )
                });
                self.builders.iter_mut().for_each(Builder::append_null);
            } else {
                // UTF-8 is checked once per record; a field is text when the record is and the
                // field starts and ends on character boundaries (what checking it alone gives).
                let all = std::str::from_utf8(record.bytes()).ok();
                let fields = self.builders.iter_mut().zip(columns).zip(&layout.sources);
                for ((builder, column), src) in fields {
                    let range = record.range(*src);
                    let raw = &record.bytes()[range.clone()];
                    let text = match all {
                        Some(all) => all.get(range),
                        None => std::str::from_utf8(raw).ok(),
                    };
                    parse_field(builder, column, raw, text, row, &mut problems);
                }
            }
            in_batch += 1;
            // Decoded size, not only rows, ends a batch: long strings make short batches.
            batch_bytes += record.byte_len() + 8 * columns.len();
            if in_batch == layout.rule.rows || batch_bytes >= layout.rule.bytes {
                break;
            }
        }
        if in_batch == 0 {
            return Ok(None);
        }
        let arrays: Vec<ArrayRef> = self.builders.iter_mut().map(Builder::finish).collect();
        let batch = RecordBatch::try_new(layout.schema.clone(), arrays)
            .map_err(|e| Error::internal(format!("assembling a batch: {e}")))?;
        Ok(Some(ParsedBatch {
            batch,
            first_row,
            problems,
        }))
    }
}

/// A record that could not be read: unreadable input, or a value or row over the limit (which
/// stops the upload at once: nothing after it is read).
pub(super) fn record_error<R: Read>(
    e: RecordError,
    names: &[String],
    row: u64,
    reader: &CsvRecords<R>,
) -> Error {
    let message = match e {
        RecordError::Io(e) => format!(
            "The file is not a readable CSV file (near line {}): {e}",
            reader.line()
        ),
        RecordError::FieldTooLong { field, limit } if row == 0 => format!(
            "The header's field {} is longer than the limit of {limit} bytes",
            field + 1
        ),
        RecordError::FieldTooLong { field, limit } => {
            let column = names
                .get(field)
                .map_or_else(|| format!("field {}", field + 1), |n| n.clone());
            format!(
                "Column [{column}] has a value longer than the limit of {limit} bytes in row {row}"
            )
        }
        RecordError::RowTooLong { limit } => format!(
            "Row {row} is longer than the limit of {limit} bytes (or has more than {MAX_FIELDS} fields)"
        ),
    };
    Error::many(ErrorKind::Unprocessable, vec![message])
}
