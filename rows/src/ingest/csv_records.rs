//! CSV records with bounded memory. The `csv` crate grows a record's buffer for as long as a
//! field goes on, so one 300 MB field costs 300 MB (and more while it doubles). This reader runs
//! the same parser (`csv_core`, the `csv` crate's own) but stops a field at the value limit and
//! a row at four times it, reporting which field of which record went over.

use std::io::Read;

use csv_core::ReadRecordResult;

/// Most fields in one row (a wider row is refused).
pub const MAX_FIELDS: usize = 65_536;

const INPUT_BUFFER: usize = 256 * 1024;

/// One record's fields, as bytes.
#[derive(Debug, Default)]
pub struct Record {
    fields: Vec<u8>,
    ends: Vec<usize>,
    len: usize,
}

impl Record {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes of all the fields together (the record's decoded size).
    pub fn byte_len(&self) -> usize {
        self.ends[..self.len].last().copied().unwrap_or(0)
    }

    /// The decoded bytes of all the fields, one after the other.
    pub fn bytes(&self) -> &[u8] {
        &self.fields[..self.byte_len()]
    }

    /// Where field `i` lies in [`Record::bytes`]; panics past the last field, as indexing does.
    pub fn range(&self, i: usize) -> std::ops::Range<usize> {
        assert!(i < self.len, "field index within the record");
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        start..self.ends[i]
    }

    pub fn get(&self, i: usize) -> Option<&[u8]> {
        if i >= self.len {
            return None;
        }
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        Some(&self.fields[start..self.ends[i]])
    }

    pub fn iter(&self) -> impl Iterator<Item = &[u8]> {
        (0..self.len).filter_map(move |i| self.get(i))
    }
}

impl std::ops::Index<usize> for Record {
    type Output = [u8];
    fn index(&self, i: usize) -> &[u8] {
        // unwrap-like: indexing past the end is a caller bug, as for slices.
        self.get(i).expect("field index within the record")
    }
}

#[derive(Debug)]
pub enum RecordError {
    Io(std::io::Error),
    /// Field `field` (0-based) of the record is longer than `limit` bytes.
    FieldTooLong {
        field: usize,
        limit: usize,
    },
    /// The record is longer than `limit` bytes in all, or has more than [`MAX_FIELDS`] fields.
    RowTooLong {
        limit: usize,
    },
}

pub struct CsvRecords<R> {
    core: csv_core::Reader,
    input: R,
    buf: Vec<u8>,
    pos: usize,
    filled: usize,
    eof: bool,
    max_field: usize,
    max_row: usize,
    record_line: u64,
}

impl<R: Read> CsvRecords<R> {
    /// Records of `input` (default CSV dialect, a UTF-8 BOM skipped), each field at most
    /// `max_field` bytes and each row at most four times that.
    pub fn new(input: R, max_field: usize) -> CsvRecords<R> {
        CsvRecords {
            core: csv_core::Reader::new(),
            input,
            buf: vec![0u8; INPUT_BUFFER],
            pos: 0,
            filled: 0,
            eof: false,
            max_field,
            max_row: max_field.saturating_mul(4),
            record_line: 1,
        }
    }

    /// Records of `input`, which continues a CSV file just after a record's end: no BOM is
    /// looked for, and lines count on from `line` (the parser's line there).
    pub fn resume(input: R, max_field: usize, line: u64) -> CsvRecords<R> {
        CsvRecords::resume_after(Vec::new(), input, max_field, line)
    }

    /// [`CsvRecords::resume`] over `bytes` then `input`; the bytes are parsed where they lie
    /// (not copied), and once they are consumed `input` is read into their buffer.
    pub fn resume_after(bytes: Vec<u8>, input: R, max_field: usize, line: u64) -> CsvRecords<R> {
        let mut records = CsvRecords::new(input, max_field);
        if !bytes.is_empty() {
            records.filled = bytes.len();
            records.buf = bytes;
        }
        // With no room for output the parser consumes nothing, but it now counts as having read,
        // so it no longer strips a BOM: a field may start with those bytes mid-file.
        let _ = records.core.read_record(b"x", &mut [], &mut []);
        records.core.set_line(line);
        records.record_line = line;
        records
    }

    /// The input after the last record read: the bytes read ahead of the parser, the rest of
    /// the input, and the parser's line there.
    pub fn into_rest(self) -> (Vec<u8>, R, u64) {
        let line = self.core.line();
        (self.buf[self.pos..self.filled].to_vec(), self.input, line)
    }

    /// The input buffer, for reuse.
    pub fn into_buffer(self) -> Vec<u8> {
        self.buf
    }

    /// The line the last record read started on (1-based; blank lines before it count).
    pub fn line(&self) -> u64 {
        self.record_line
    }

    /// True when every byte of the input has been parsed.
    pub fn at_end(&mut self) -> std::io::Result<bool> {
        self.fill()?;
        Ok(self.eof && self.pos == self.filled)
    }

    fn fill(&mut self) -> std::io::Result<()> {
        if self.pos == self.filled && !self.eof {
            let n = loop {
                match self.input.read(&mut self.buf) {
                    Ok(n) => break n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                }
            };
            self.pos = 0;
            self.filled = n;
            self.eof = n == 0;
        }
        Ok(())
    }

    /// Reads the next record into `rec`; false at the end of the input.
    pub fn read_record(&mut self, rec: &mut Record) -> Result<bool, RecordError> {
        rec.len = 0;
        if rec.fields.is_empty() {
            rec.fields.resize(4096, 0);
        }
        if rec.ends.is_empty() {
            rec.ends.resize(64, 0);
        }
        self.record_line = self.core.line();
        let (mut outlen, mut endlen) = (0usize, 0usize);
        loop {
            self.fill().map_err(RecordError::Io)?;
            let input = &self.buf[self.pos..self.filled];
            let (res, nin, nout, nend) =
                self.core
                    .read_record(input, &mut rec.fields[outlen..], &mut rec.ends[endlen..]);
            self.pos += nin;
            let first_new = endlen;
            // csv_core writes `ends` as positions within the whole record already.
            outlen += nout;
            endlen += nend;
            self.check_fields(rec, first_new, endlen, outlen)?;
            match res {
                ReadRecordResult::InputEmpty => continue,
                ReadRecordResult::OutputFull => {
                    if rec.fields.len() > self.max_row {
                        return Err(RecordError::RowTooLong {
                            limit: self.max_row,
                        });
                    }
                    let grown = (rec.fields.len() * 2).min(self.max_row + 1);
                    rec.fields.resize(grown, 0);
                }
                ReadRecordResult::OutputEndsFull => {
                    if rec.ends.len() >= MAX_FIELDS {
                        return Err(RecordError::RowTooLong {
                            limit: self.max_row,
                        });
                    }
                    let grown = (rec.ends.len() * 2).min(MAX_FIELDS);
                    rec.ends.resize(grown, 0);
                }
                ReadRecordResult::Record => {
                    rec.len = endlen;
                    return Ok(true);
                }
                ReadRecordResult::End => return Ok(false),
            }
        }
    }

    /// Every field completed in this call, and the one still being read, within the limit.
    fn check_fields(
        &self,
        rec: &Record,
        first_new: usize,
        endlen: usize,
        outlen: usize,
    ) -> Result<(), RecordError> {
        let start_of = |i: usize| if i == 0 { 0 } else { rec.ends[i - 1] };
        for i in first_new..endlen {
            if rec.ends[i] - start_of(i) > self.max_field {
                return Err(RecordError::FieldTooLong {
                    field: i,
                    limit: self.max_field,
                });
            }
        }
        if outlen - start_of(endlen) > self.max_field {
            return Err(RecordError::FieldTooLong {
                field: endlen,
                limit: self.max_field,
            });
        }
        Ok(())
    }
}

/// The null spellings of CSV data (docs/API.md): an empty field, `NA` or `null`.
pub fn is_null_text(value: &str) -> bool {
    value.is_empty() || value == "NA" || value == "null"
}

/// A decimal number as people write it: digits, optional sign, point and exponent. Rust's own
/// float parser also takes `inf` and `NaN`, which in a CSV are words, not numbers.
pub fn looks_numeric(value: &str) -> bool {
    number_shape(value) && value.parse::<f64>().is_ok()
}

/// The part of [`looks_numeric`] before parsing: starts like a number and has a digit.
pub fn number_shape(value: &str) -> bool {
    let first = value.as_bytes().first().copied().unwrap_or(b'x');
    (first.is_ascii_digit() || matches!(first, b'-' | b'+' | b'.'))
        && value.bytes().any(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(input: &[u8], max: usize) -> Result<Vec<Vec<String>>, RecordError> {
        let mut r = CsvRecords::new(input, max);
        let mut rec = Record::default();
        let mut out = Vec::new();
        while r.read_record(&mut rec)? {
            out.push(
                rec.iter()
                    .map(|f| String::from_utf8_lossy(f).into_owned())
                    .collect(),
            );
        }
        Ok(out)
    }

    #[test]
    fn parses_like_the_csv_crate() {
        let input = b"\xEF\xBB\xBFa,b\r\n\"x, \"\"y\"\"\",2\n\n\"multi\nline\",\n";
        let rows = all(input, 1024).unwrap();
        assert_eq!(
            rows,
            vec![
                vec!["a", "b"],
                vec!["x, \"y\"", "2"],
                vec!["multi\nline", ""]
            ]
        );
        let mut csv = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(&input[..]);
        let theirs: Vec<Vec<String>> = csv
            .byte_records()
            .map(|r| {
                r.unwrap()
                    .iter()
                    .map(|f| String::from_utf8_lossy(f).into_owned())
                    .collect()
            })
            .collect();
        assert_eq!(rows, theirs);
    }

    #[test]
    fn a_long_field_is_refused_naming_its_position_with_bounded_memory() {
        let mut input = b"a,b,c\n1,2,3\n4,".to_vec();
        input.extend(std::iter::repeat_n(b'x', 100_000));
        input.extend(b",6\n");
        let mut r = CsvRecords::new(&input[..], 1000);
        let mut rec = Record::default();
        assert!(r.read_record(&mut rec).unwrap());
        assert!(r.read_record(&mut rec).unwrap());
        match r.read_record(&mut rec) {
            Err(RecordError::FieldTooLong {
                field: 1,
                limit: 1000,
            }) => {}
            other => panic!("{other:?}"),
        }
        assert!(rec.fields.len() <= 4 * 1000 + 1 + 4096);
        assert_eq!(r.line(), 3);
        // Exactly the limit is fine.
        let ok = format!("a\n{}\n", "y".repeat(1000));
        assert_eq!(all(ok.as_bytes(), 1000).unwrap()[1][0].len(), 1000);
    }

    #[test]
    fn a_long_row_of_short_fields_is_refused() {
        let row = vec!["abcdefghi"; 1000].join(",");
        match all(format!("{row}\n").as_bytes(), 1000) {
            Err(RecordError::RowTooLong { limit: 4000 }) => {}
            other => panic!("{other:?}"),
        }
    }
}
