//! Type inference over the first bytes of a CSV file.

use crate::error::{Error, Result};
use crate::infer::{InferredColumn, TypeGuess};
use crate::schema::column_names_from_headers;

pub(super) fn infer(bytes: &[u8], truncated: bool) -> Result<Vec<InferredColumn>> {
    // A truncated sample ends at the last complete line: never infer from half a row.
    let bytes = if truncated {
        let end = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        &bytes[..end]
    } else {
        bytes
    };
    if bytes.iter().all(|b| b.is_ascii_whitespace()) {
        return Err(Error::invalid(
            "The file is empty: a CSV file needs a header row and data rows",
        ));
    }
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(false)
        .from_reader(bytes);
    let headers = reader.headers().map_err(|e| csv_error(&e))?.clone();
    let mut guesses = vec![TypeGuess::default(); headers.len()];
    let mut rows = 0usize;
    let mut record = csv::StringRecord::new();
    loop {
        match reader.read_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {
                for (guess, value) in guesses.iter_mut().zip(record.iter()) {
                    guess.observe(value);
                }
                rows += 1;
            }
            // The last record of a truncated sample may be a quoted field cut by the limit.
            Err(_) if truncated && is_last_record(&reader, bytes) => break,
            Err(e) => return Err(csv_error(&e)),
        }
    }
    if rows == 0 {
        return Err(Error::invalid(
            "The file has a header row but no data rows: a schema cannot be inferred from it",
        ));
    }
    let names = column_names_from_headers(&headers.iter().collect::<Vec<_>>())?;
    Ok(names
        .into_iter()
        .zip(guesses)
        .map(|(name, guess)| {
            let (data_type, format) = guess.decide();
            InferredColumn {
                name,
                data_type,
                format,
            }
        })
        .collect())
}

fn is_last_record(reader: &csv::Reader<&[u8]>, bytes: &[u8]) -> bool {
    reader.position().byte() as usize >= bytes.len().saturating_sub(1)
}

fn csv_error(e: &csv::Error) -> Error {
    let row = e.position().map(|p| p.line()).unwrap_or(0);
    match e.kind() {
        csv::ErrorKind::Utf8 { .. } => Error::invalid(format!(
            "The file is not valid UTF-8 text (line {row}): upload a UTF-8 CSV or a Parquet file"
        )),
        csv::ErrorKind::UnequalLengths { expected_len, len, .. } => Error::invalid(format!(
            "The file is not formatted correctly: line {row} has {len} fields, the header has {expected_len}"
        )),
        _ => Error::invalid(format!("The file is not formatted correctly: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::DataType;

    #[test]
    fn headers_are_sanitised_and_types_inferred() {
        let cols = infer(
            b"Full Name,Age,Score,Joined\n\"Smith, J\",42,1.5,2024-01-02\nLee,,2,2024-03-04\n",
            false,
        )
        .unwrap();
        let names: Vec<_> = cols.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["full_name", "age", "score", "joined"]);
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
        assert!(infer(b"a,b\n1,2,3\n", false)
            .unwrap_err()
            .to_string()
            .contains("has 3 fields"));
        assert!(infer(b"", false).unwrap_err().to_string().contains("empty"));
        assert!(infer(b"a,b\n", false)
            .unwrap_err()
            .to_string()
            .contains("no data rows"));
        assert!(infer(b"a,b\n\xff\xfe,1\n", false)
            .unwrap_err()
            .to_string()
            .contains("UTF-8"));
    }

    #[test]
    fn a_truncated_sample_drops_its_partial_last_line() {
        let cols = infer(b"a,b\n1,2\n3,4\n5,xyz-partial", true).unwrap();
        assert_eq!(cols[1].data_type, DataType::Int);
    }
}
