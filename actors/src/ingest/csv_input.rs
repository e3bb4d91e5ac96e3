//! CSV into typed Arrow batches. Each field is parsed once, straight into its column's builder;
//! a field that does not parse becomes a null and a problem with its row number.

use std::io::Read;
use std::sync::Arc;

use arrow::array::{
    ArrayRef, BooleanBuilder, Date32Builder, Float64Builder, Int64Builder, RecordBatch,
    StringBuilder,
};
use arrow::datatypes::SchemaRef;

use super::csv_records::{is_null_text, number_shape};
use super::csv_records::{CsvRecords, Record, RecordError, MAX_FIELDS};
use super::csv_split::BatchRule;
use super::problems::{shown, Problems};
use super::{
    arrow_schema, date_to_days, header_mapping, IngestPlan, StagedOutput, Validator, BATCH_BYTES,
    BATCH_ROWS,
};
use crate::error::{Error, ErrorKind, Result};
use crate::schema::{DataType, DateFormat, ValidColumn};

enum Builder {
    Int(Int64Builder),
    Double(Float64Builder),
    Bool(BooleanBuilder),
    Date(Date32Builder, DateFormat),
    Str(StringBuilder),
}

impl Builder {
    fn new(column: &ValidColumn, n: usize) -> Builder {
        match column.data_type {
            DataType::Int => Builder::Int(Int64Builder::with_capacity(n)),
            DataType::Double => Builder::Double(Float64Builder::with_capacity(n)),
            DataType::Boolean => Builder::Bool(BooleanBuilder::with_capacity(n)),
            // unwrap_or: schema validation guarantees a format on every date column.
            DataType::Date => Builder::Date(
                Date32Builder::with_capacity(n),
                column.format.unwrap_or(DateFormat::ALL[3]),
            ),
            DataType::String => Builder::Str(StringBuilder::with_capacity(n, n * 16)),
        }
    }

    fn append_null(&mut self) {
        match self {
            Builder::Int(b) => b.append_null(),
            Builder::Double(b) => b.append_null(),
            Builder::Bool(b) => b.append_null(),
            Builder::Date(b, _) => b.append_null(),
            Builder::Str(b) => b.append_null(),
        }
    }

    /// Appends a non-null value (`text`: the field as text, `None` when it is not UTF-8);
    /// `false` (and a null appended) when it does not parse.
    fn append(&mut self, raw: &[u8], text: Option<&str>) -> bool {
        let ok = match self {
            Builder::Int(b) => parse_int(raw).map(|v| b.append_value(v)).is_some(),
            // The shape first, then one parse (`looks_numeric` would parse twice).
            Builder::Double(b) => text
                .filter(|s| number_shape(s))
                .and_then(|s| s.parse::<f64>().ok())
                .map(|v| b.append_value(v))
                .is_some(),
            Builder::Bool(b) => {
                if raw.eq_ignore_ascii_case(b"true") {
                    b.append_value(true);
                    true
                } else if raw.eq_ignore_ascii_case(b"false") {
                    b.append_value(false);
                    true
                } else {
                    false
                }
            }
            Builder::Date(b, format) => text
                .and_then(|s| format.parse_value(s))
                .map(|d| b.append_value(date_to_days(d)))
                .is_some(),
            Builder::Str(b) => text.map(|s| b.append_value(s)).is_some(),
        };
        if !ok {
            self.append_null();
        }
        ok
    }

    fn finish(&mut self) -> ArrayRef {
        match self {
            Builder::Int(b) => Arc::new(b.finish()),
            Builder::Double(b) => Arc::new(b.finish()),
            Builder::Bool(b) => Arc::new(b.finish()),
            Builder::Date(b, _) => Arc::new(b.finish()),
            Builder::Str(b) => Arc::new(b.finish()),
        }
    }
}

/// A 64-bit integer: optional sign and digits; `3.0` (how pandas writes an int column that has
/// nulls) is accepted as 3, `3.5` is not.
fn parse_int(raw: &[u8]) -> Option<i64> {
    let (negative, digits) = match raw.first()? {
        b'-' => (true, &raw[1..]),
        b'+' => (false, &raw[1..]),
        _ => (false, raw),
    };
    let (whole, fraction) = match digits.iter().position(|b| *b == b'.') {
        Some(i) => (&digits[..i], &digits[i + 1..]),
        None => (digits, &digits[..0]),
    };
    if whole.is_empty() || !fraction.iter().all(|b| *b == b'0') {
        return None;
    }
    let mut value: i64 = 0;
    for b in whole {
        if !b.is_ascii_digit() {
            return None;
        }
        let d = (b - b'0') as i64;
        value = value.checked_mul(10)?;
        value = if negative {
            value.checked_sub(d)?
        } else {
            value.checked_add(d)?
        };
    }
    Some(value)
}

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
}

impl Default for CsvOptions {
    fn default() -> CsvOptions {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        CsvOptions {
            batch_rows: BATCH_ROWS,
            batch_bytes: BATCH_BYTES,
            workers: if cores < 2 { 0 } else { cores.min(MAX_WORKERS) },
            max_chunk_bytes: MAX_CHUNK_BYTES,
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
                problems.add(|| {
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

pub fn ingest_csv<R: Read + Send>(input: R, plan: &IngestPlan<'_>) -> Result<StagedOutput> {
    ingest_csv_with(input, plan, CsvOptions::default())
}

/// [`ingest_csv`] with its batch rule and threads chosen: every choice gives the same rows,
/// problems and errors.
pub fn ingest_csv_with<R: Read + Send>(
    input: R,
    plan: &IngestPlan<'_>,
    options: CsvOptions,
) -> Result<StagedOutput> {
    let mut reader = CsvRecords::new(input, plan.max_value_bytes);
    let mut headers = Record::default();
    match reader.read_record(&mut headers) {
        Ok(_) => {}
        Err(e) => return Err(record_error(e, &[], 0, &reader)),
    }
    if headers.is_empty() || (headers.len() == 1 && headers[0].is_empty()) {
        return Err(Error::many(
            ErrorKind::Unprocessable,
            vec!["The file is empty: it has no header row".into()],
        ));
    }
    let names: Vec<String> = headers
        .iter()
        .map(|h| String::from_utf8_lossy(h).into_owned())
        .collect();
    let columns = plan.schema.columns();
    let layout = Layout {
        columns,
        sources: header_mapping(&names, columns)?,
        names,
        header_len: headers.len(),
        rule: BatchRule {
            rows: options.batch_rows.max(1),
            bytes: options.batch_bytes.max(1),
        },
        schema: arrow_schema(plan.schema),
    };
    let mut validator = Validator::new(plan)?;
    let rows = if options.workers >= 2 {
        super::csv_parallel::ingest(reader, &layout, &mut validator, plan, options)?
    } else {
        sequential(&mut reader, &layout, &mut validator, plan, 1)?
    };
    (plan.progress)(rows);
    if rows == 0 {
        validator
            .problems
            .add(|| "The file has no data rows, it cannot be processed".into());
    }
    validator.finish()
}

/// Parses the records of `reader` batch by batch on this thread, the first numbered
/// `first_row`; returns the number of the last row.
pub(super) fn sequential<R: Read>(
    reader: &mut CsvRecords<R>,
    layout: &Layout<'_>,
    validator: &mut Validator,
    plan: &IngestPlan<'_>,
    first_row: u64,
) -> Result<u64> {
    let mut builder = BatchBuilder::new(layout);
    let mut row = first_row - 1;
    while let Some(parsed) = builder.read(reader, layout, row + 1)? {
        row += parsed.batch.num_rows() as u64;
        validator.accept_parsed(parsed)?;
        (plan.progress)(row);
    }
    Ok(row)
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

fn parse_field(
    builder: &mut Builder,
    column: &ValidColumn,
    raw: &[u8],
    text: Option<&str>,
    row: u64,
    problems: &mut Problems,
) {
    if text.is_some_and(is_null_text) {
        builder.append_null();
        if !column.allow_null {
            problems.add(|| {
                format!(
                    "Column [{}] does not allow null values: row {row} has {}",
                    column.name,
                    shown(raw)
                )
            });
        }
    } else if !builder.append(raw, text) {
        problems.add(|| {
            let expected = match column.format {
                Some(f) => format!("date in format {}", f.as_str()),
                None => column.data_type.as_str().to_string(),
            };
            format!(
                "Column [{}] has an incorrect data type. Expected {expected}, received {} in row {row}",
                column.name,
                shown(raw)
            )
        });
    }
}

#[cfg(test)]
mod tests {
    use super::parse_int;

    #[test]
    fn integers_parse_strictly_with_pandas_style_zero_fractions() {
        assert_eq!(parse_int(b"42"), Some(42));
        assert_eq!(parse_int(b"-7"), Some(-7));
        assert_eq!(parse_int(b"+7"), Some(7));
        assert_eq!(parse_int(b"3.0"), Some(3));
        assert_eq!(parse_int(b"-9223372036854775808"), Some(i64::MIN));
        for bad in [
            &b"3.5"[..],
            b"9223372036854775808",
            b"1e3",
            b"",
            b"-",
            b"12a",
            b" 1",
            b".0",
        ] {
            assert_eq!(parse_int(bad), None, "{}", String::from_utf8_lossy(bad));
        }
    }
}
