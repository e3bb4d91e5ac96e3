//! Where the batches of a CSV file end, found without parsing it: a scan that follows the state
//! machine `csv_core` runs (default dialect: `,` delimiter, `"` quotes with `""` escapes, `\r`,
//! `\n` or `\r\n` ending a record, blank lines skipped) but only counts. It applies the
//! sequential parser's batch rule ([`BATCH_ROWS`](super::BATCH_ROWS) rows, or
//! [`BATCH_BYTES`](super::BATCH_BYTES) decoded bytes) and cuts the input exactly where that
//! parser would end each batch. A chunk is then one batch: its rows, row numbers and problems
//! are those of the sequential parse.
//!
//! Most of the time only record ends are needed: a fast pass jumps from quote to quote and line
//! end to line end, and bounds a record's decoded size by its raw size. Only when that bound
//! could reach the byte rule does an exact pass (every byte through the state machine, decoded
//! bytes counted) rescan the batch.

/// The parser's state between bytes (`csv_core`'s NFA states that matter for counting).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    StartRecord,
    StartField,
    InField,
    InQuoted,
    /// A quote inside a quoted field: the field's end, or the first half of `""`.
    QuoteInQuoted,
}

/// The batch rule: a batch ends after `rows` rows or once its decoded size (fields' bytes plus
/// eight per column per row) reaches `bytes`.
#[derive(Clone, Copy, Debug)]
pub(super) struct BatchRule {
    pub rows: usize,
    pub bytes: usize,
}

/// A cut: the batch ends before byte `at` of the buffer and holds `rows` rows.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Cut {
    pub at: usize,
    pub rows: usize,
}

/// Counts records as the input grows and says where each batch ends. The buffer given to
/// [`Splitter::scan`] always starts at the current batch's start; it may grow between calls,
/// and after a cut the caller drops the bytes before it.
pub(super) struct Splitter {
    rule: BatchRule,
    header_len: usize,
    columns: usize,
    /// Rows of the batch so far, and a bound of its decoded size (exact in the exact pass).
    rows: usize,
    bytes: usize,
    /// Next byte to look at, and where the current record starts.
    pos: usize,
    record_start: usize,
    exact: bool,
    /// Fast pass: inside a quoted field; the next byte starts a field.
    quoted: bool,
    field_start: bool,
    /// Exact pass: the state and the current record's delimiters and decoded bytes.
    state: State,
    delimiters: usize,
    decoded: usize,
}

impl Splitter {
    /// A scanner placed just after the header record (whose length is `header_len`).
    pub(super) fn new(rule: BatchRule, header_len: usize, columns: usize) -> Splitter {
        Splitter {
            rule,
            header_len,
            columns,
            rows: 0,
            bytes: 0,
            pos: 0,
            record_start: 0,
            exact: false,
            quoted: false,
            field_start: true,
            state: State::StartRecord,
            delimiters: 0,
            decoded: 0,
        }
    }

    /// Rows in the batch scanned so far (not yet cut).
    pub(super) fn pending_rows(&self) -> usize {
        self.rows
    }

    /// Scans what is new in `buf` until the batch is full: then the cut (and the splitter is
    /// ready for the buffer that starts at it). `None`: all of `buf` is scanned.
    pub(super) fn scan(&mut self, buf: &[u8]) -> Option<Cut> {
        let cut = if self.exact {
            self.scan_exact(buf)
        } else {
            match self.scan_fast(buf) {
                Some(_) if self.bytes >= self.rule.bytes && self.rows < self.rule.rows => {
                    // The raw size may overstate the decoded one: count exactly from the start.
                    self.restart(true);
                    self.scan_exact(buf)
                }
                other => other,
            }
        }?;
        let rows = self.rows;
        self.restart(false);
        Some(Cut { at: cut, rows })
    }

    fn restart(&mut self, exact: bool) {
        let (rule, header_len, columns) = (self.rule, self.header_len, self.columns);
        *self = Splitter::new(rule, header_len, columns);
        self.exact = exact;
    }

    /// The input is over (`buf` is all that is left of it): a record still open ends here.
    /// The rows of the last batch.
    pub(super) fn finish(&mut self, buf: &[u8]) -> usize {
        if self.exact {
            if self.state != State::StartRecord {
                self.end_record(self.delimiters, self.decoded);
            }
        } else if self.record_start < buf.len() {
            let (delimiters, decoded) = exact_counts(&buf[self.record_start..]);
            self.end_record(delimiters, decoded);
        }
        std::mem::take(&mut self.rows)
    }

    /// Record ends found by jumping between quotes and line ends; the position after the last
    /// byte of the record that fills the batch (by rows, or by the raw-size bound).
    fn scan_fast(&mut self, buf: &[u8]) -> Option<usize> {
        while self.pos < buf.len() {
            if self.quoted {
                let Some(j) = memchr::memchr(b'"', &buf[self.pos..]).map(|j| self.pos + j) else {
                    self.pos = buf.len();
                    return None;
                };
                match buf.get(j + 1) {
                    None => {
                        // Closing quote or `""`: the next byte decides.
                        self.pos = j;
                        return None;
                    }
                    Some(b'"') => self.pos = j + 2,
                    Some(_) => {
                        self.quoted = false;
                        self.field_start = false;
                        self.pos = j + 1;
                    }
                }
                continue;
            }
            let rest = &buf[self.pos..];
            let Some(j) = memchr::memchr3(b'"', b'\n', b'\r', rest).map(|j| self.pos + j) else {
                if let Some(last) = rest.last() {
                    self.field_start = *last == b',';
                }
                self.pos = buf.len();
                return None;
            };
            let field_start = if j == self.pos {
                self.field_start
            } else {
                buf[j - 1] == b','
            };
            self.pos = j + 1;
            if buf[j] == b'"' {
                self.quoted = field_start;
                self.field_start = false;
                continue;
            }
            self.field_start = true;
            if j == self.record_start {
                // A blank line: not a record.
                self.record_start = j + 1;
                continue;
            }
            let raw = &buf[self.record_start..j];
            self.record_start = j + 1;
            // Only `""` (one empty field) can be a record of no rows; the exact pass decides.
            // Longer records count as rows (any field count but one) of at most their raw size.
            let (delimiters, decoded) = if raw.len() <= 2 {
                exact_counts(raw)
            } else {
                (1, raw.len())
            };
            if self.end_record(delimiters, decoded) {
                return Some(j + 1);
            }
        }
        None
    }

    /// Every byte through the state machine: exact decoded sizes.
    fn scan_exact(&mut self, buf: &[u8]) -> Option<usize> {
        let mut state = self.state;
        let (mut delimiters, mut decoded) = (self.delimiters, self.decoded);
        let mut i = self.pos;
        while i < buf.len() {
            let b = buf[i];
            i += 1;
            if state == State::StartRecord {
                if b == b'\n' || b == b'\r' {
                    continue;
                }
                (delimiters, decoded) = (0, 0);
                state = State::StartField;
            }
            if step(&mut state, b, &mut delimiters, &mut decoded) {
                state = State::StartRecord;
                if self.end_record(delimiters, decoded) {
                    return Some(i);
                }
            }
        }
        self.pos = i;
        self.state = state;
        (self.delimiters, self.decoded) = (delimiters, decoded);
        None
    }

    /// The sequential parser's rule for one record; true when it ends the batch.
    fn end_record(&mut self, delimiters: usize, decoded: usize) -> bool {
        let fields = delimiters + 1;
        // A line holding one empty field (`""`) is not a row unless the header has one field.
        if fields != self.header_len && fields == 1 && decoded == 0 {
            return false;
        }
        self.rows += 1;
        self.bytes += decoded + 8 * self.columns;
        self.rows == self.rule.rows || self.bytes >= self.rule.bytes
    }
}

/// One byte of a record (never in `StartRecord`); true when it ends the record.
fn step(state: &mut State, b: u8, delimiters: &mut usize, decoded: &mut usize) -> bool {
    let quoted_text = *state == State::InQuoted;
    if quoted_text {
        if b == b'"' {
            *state = State::QuoteInQuoted;
        } else {
            *decoded += 1;
        }
        return false;
    }
    match b {
        b',' => {
            *delimiters += 1;
            *state = State::StartField;
            false
        }
        b'\n' | b'\r' => true,
        b'"' if *state == State::StartField => {
            *state = State::InQuoted;
            false
        }
        b'"' if *state == State::QuoteInQuoted => {
            *decoded += 1;
            *state = State::InQuoted;
            false
        }
        _ => {
            *decoded += 1;
            *state = State::InField;
            false
        }
    }
}

/// Delimiters and decoded bytes of one record's raw bytes (without its line end).
fn exact_counts(raw: &[u8]) -> (usize, usize) {
    let mut state = State::StartField;
    let (mut delimiters, mut decoded) = (0, 0);
    for &b in raw {
        step(&mut state, b, &mut delimiters, &mut decoded);
    }
    (delimiters, decoded)
}
