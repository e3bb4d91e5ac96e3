//! Type inference over the first bytes of a CSV file, read as a stream with bounded memory.

use std::io::{BufRead, BufReader, Read};

use crate::error::{Error, ErrorKind, Result};
use crate::infer::{ColumnSample, InferredColumn, TypeGuess};
use crate::ingest::csv_records::is_null_text;
use crate::ingest::csv_records::{CsvRecords, Record, RecordError, MAX_FIELDS};
use crate::schema::column_names_from_headers;

/// Infers column types from `input`, the start of a CSV file (ending at a line end when
/// `truncated`, in which case its last record may be a quoted field the cut went through).
pub(super) fn infer(
    input: impl Read,
    truncated: bool,
    max_value: usize,
) -> Result<Vec<InferredColumn>> {
    let mut input = BufReader::with_capacity(64 * 1024, input);
    if is_blank(&mut input)? {
        return Err(Error::invalid(
            "The file is empty: a CSV file needs a header row and data rows",
        ));
    }
    let mut reader = CsvRecords::new(input, max_value);
    let mut headers = Record::default();
    read(&mut reader, &mut headers, &[], 0)?;
    let fields: Vec<&[u8]> = headers.iter().collect();
    if let Some(message) = crate::ingest::file_problems::header_encoding(&fields) {
        return Err(Error::invalid(message));
    }
    let names: Vec<String> = headers
        .iter()
        .map(|h| text(h, reader.line()).map(str::to_string))
        .collect::<Result<_>>()?;
    let mut guesses = vec![TypeGuess::default(); names.len()];
    let mut samples = vec![ColumnSample::default(); names.len()];
    let mut rows = 0usize;
    let mut record = Record::default();
    while read(&mut reader, &mut record, &names, rows as u64 + 1)? {
        let line = reader.line();
        let fits = check_row(&record, names.len(), line);
        // The last record of a truncated sample may be a quoted field cut by the limit.
        if fits.is_err() && truncated && reader.at_end()? {
            break;
        }
        fits?;
        for ((guess, sample), value) in guesses.iter_mut().zip(&mut samples).zip(record.iter()) {
            let value = text(value, line)?;
            guess.observe(value);
            sample.observe(Some(value).filter(|v| !is_null_text(v)));
        }
        rows += 1;
    }
    if rows == 0 {
        return Err(Error::invalid(
            "The file has a header row but no data rows: a schema cannot be inferred from it",
        ));
    }
    let names = column_names_from_headers(&names.iter().map(String::as_str).collect::<Vec<_>>())?;
    Ok(names
        .into_iter()
        .zip(guesses.into_iter().zip(samples))
        .map(|(name, (guess, sample))| {
            let (data_type, format) = guess.decide();
            InferredColumn {
                name,
                data_type,
                format,
                sample,
            }
        })
        .collect())
}

/// True when everything in `input` is white space (peeks at most up to the first other byte).
fn is_blank(input: &mut impl BufRead) -> Result<bool> {
    loop {
        let buf = input.fill_buf()?;
        if buf.is_empty() {
            return Ok(true);
        }
        if buf.iter().any(|b| !b.is_ascii_whitespace()) {
            return Ok(false);
        }
        let n = buf.len();
        input.consume(n);
    }
}

fn read<R: Read>(
    reader: &mut CsvRecords<R>,
    record: &mut Record,
    names: &[String],
    row: u64,
) -> Result<bool> {
    reader.read_record(record).map_err(|e| {
        let message = match e {
            RecordError::Io(e) => format!("The file could not be read: {e}"),
            RecordError::FieldTooLong { field, limit } if row == 0 => format!(
                "The header's field {} is longer than the limit of {limit} bytes",
                field + 1
            ),
            RecordError::FieldTooLong { field, limit } => format!(
                "Column [{}] has a value longer than the limit of {limit} bytes in row {row}",
                names
                    .get(field)
                    .map_or_else(|| format!("field {}", field + 1), |n| n.clone())
            ),
            RecordError::RowTooLong { limit } => format!(
                "Row {row} is longer than the limit of {limit} bytes (or has more than {MAX_FIELDS} fields)"
            ),
        };
        Error::many(ErrorKind::Unprocessable, vec![message])
    })
}

fn check_row(record: &Record, expected: usize, line: u64) -> Result<()> {
    if record.len() != expected {
        return Err(Error::invalid(format!(
            "The file is not formatted correctly: line {line} has {} fields, the header has {expected}",
            record.len()
        )));
    }
    Ok(())
}

fn text(value: &[u8], line: u64) -> Result<&str> {
    std::str::from_utf8(value).map_err(|_| {
        Error::invalid(format!(
            "The file is not valid UTF-8 text (line {line}): upload a UTF-8 CSV or a Parquet file"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::DataType;

    const MAX: usize = 1 << 20;

    #[test]
    fn headers_are_sanitised_and_types_inferred() {
        let cols = infer(
            &b"Full Name,Age,Score,Joined\n\"Smith, J\",42,1.5,2024-01-02\nLee,,2,2024-03-04\n"[..],
            false,
            MAX,
        )
        .unwrap();
        let names: Vec<_> = cols.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["full_name", "age", "score", "joined"]);
        assert_eq!(cols[1].sample.examples, ["42"]);
        assert_eq!((cols[1].sample.nulls, cols[1].sample.rows), (1, 2));
        let types: Vec<_> = cols.iter().map(|c| c.data_type).collect();
        assert_eq!(
            types,
            [
                DataType::String,
                DataType::Int,
                DataType::Double,
                DataType::Date
            ]
        );
    }

    #[test]
    fn ragged_empty_header_only_and_non_utf8_are_refused() {
        assert!(infer(&b"a,b\n1,2,3\n"[..], false, MAX)
            .unwrap_err()
            .to_string()
            .contains("has 3 fields"));
        assert!(infer(&b""[..], false, MAX)
            .unwrap_err()
            .to_string()
            .contains("empty"));
        assert!(infer(&b"a,b\n"[..], false, MAX)
            .unwrap_err()
            .to_string()
            .contains("no data rows"));
        assert!(infer(&b"a,b\n\xff\xfe,1\n"[..], false, MAX)
            .unwrap_err()
            .to_string()
            .contains("UTF-8"));
        // UTF-16 is named as such, with or without its byte order mark.
        let utf16: Vec<u8> = "a,b\n1,2\n"
            .encode_utf16()
            .flat_map(u16::to_le_bytes)
            .collect();
        for sample in [[&[0xFF, 0xFE][..], &utf16].concat(), utf16.clone()] {
            let e = infer(&sample[..], false, MAX).unwrap_err().to_string();
            assert!(e.contains("encoded as UTF-16"), "{e}");
        }
    }

    #[test]
    fn a_truncated_sample_drops_its_partial_last_line() {
        // The caller cuts a truncated sample at its last line end; a quoted field may still be cut.
        let cols = infer(&b"a,b\n1,2\n3,4\n\"5\nx"[..], true, MAX).unwrap();
        assert_eq!(cols[1].data_type, DataType::Int);
    }

    #[test]
    fn a_value_over_the_limit_is_refused_naming_column_and_row() {
        let mut csv = b"name,notes\nann,short\nbob,".to_vec();
        csv.extend(std::iter::repeat_n(b'x', 5000));
        csv.extend(b"\n");
        let e = infer(&csv[..], false, 1024).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Unprocessable);
        assert_eq!(
            crate::ingest::messages(&e),
            ["Column [notes] has a value longer than the limit of 1024 bytes in row 2"]
        );
    }
}
