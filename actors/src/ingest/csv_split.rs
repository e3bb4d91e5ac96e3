//! Where the batches of a CSV file end, found without parsing it: a scan that follows the very
//! state machine `csv_core` runs (default dialect: `,` delimiter, `"` quotes with `""` escapes,
//! `\r`, `\n` or `\r\n` ending a record, blank lines skipped) but only counts. Per record it
//! knows the number of fields and the decoded size, so it can apply the sequential parser's
//! batch rule ([`BATCH_ROWS`](super::BATCH_ROWS) rows, or [`BATCH_BYTES`](super::BATCH_BYTES)
//! decoded bytes) and cut the input exactly where that parser would end each batch. A chunk is
//! then one batch: its rows, row numbers and problems are those of the sequential parse.

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

/// Counts records as they stream past and says where each batch ends.
pub(super) struct Splitter {
    rule: BatchRule,
    header_len: usize,
    columns: usize,
    state: State,
    /// Of the record being scanned: delimiters seen, decoded bytes.
    delimiters: usize,
    decoded: usize,
    /// Of the batch being scanned: rows, decoded bytes.
    rows: usize,
    batch_bytes: usize,
    /// `\n` bytes up to the end of the last complete record (the parser's line counting).
    newlines_done: u64,
    newlines_pending: u64,
}

/// A cut: the batch ends after byte `at` (exclusive end) and holds `rows` rows.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Cut {
    pub at: usize,
    pub rows: usize,
}

impl Splitter {
    /// A scanner placed just after the header record (whose length is `header_len`).
    pub(super) fn new(rule: BatchRule, header_len: usize, columns: usize) -> Splitter {
        Splitter {
            rule,
            header_len,
            columns,
            state: State::StartRecord,
            delimiters: 0,
            decoded: 0,
            rows: 0,
            batch_bytes: 0,
            newlines_done: 0,
            newlines_pending: 0,
        }
    }

    /// `\n` bytes before the end of the last complete record since the scan began.
    pub(super) fn newlines(&self) -> u64 {
        self.newlines_done
    }

    /// Rows in the batch scanned so far (not yet cut).
    pub(super) fn pending_rows(&self) -> usize {
        self.rows
    }

    /// Scans `bytes` (the input continuing where the last call stopped) until a batch is full:
    /// then returns the cut, relative to `bytes`; the caller calls again with what follows it.
    /// `None`: all of `bytes` was scanned and the batch goes on.
    pub(super) fn scan(&mut self, bytes: &[u8]) -> Option<Cut> {
        let mut state = self.state;
        let (mut delimiters, mut decoded) = (self.delimiters, self.decoded);
        let mut newlines = 0u64;
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            i += 1;
            newlines += (b == b'\n') as u64;
            let ends_record = match state {
                State::InField => {
                    match b {
                        b',' => {
                            delimiters += 1;
                            state = State::StartField;
                        }
                        b'\n' | b'\r' => {}
                        _ => decoded += 1,
                    }
                    matches!(b, b'\n' | b'\r')
                }
                State::InQuoted => {
                    if b == b'"' {
                        state = State::QuoteInQuoted;
                    } else {
                        decoded += 1;
                    }
                    false
                }
                State::StartRecord | State::StartField => {
                    if state == State::StartRecord {
                        if b == b'\n' || b == b'\r' {
                            continue;
                        }
                        (delimiters, decoded) = (0, 0);
                    }
                    match b {
                        b'"' => {
                            state = State::InQuoted;
                            false
                        }
                        b',' => {
                            delimiters += 1;
                            state = State::StartField;
                            false
                        }
                        b'\n' | b'\r' => true,
                        _ => {
                            decoded += 1;
                            state = State::InField;
                            false
                        }
                    }
                }
                State::QuoteInQuoted => match b {
                    b'"' => {
                        decoded += 1;
                        state = State::InQuoted;
                        false
                    }
                    b',' => {
                        delimiters += 1;
                        state = State::StartField;
                        false
                    }
                    b'\n' | b'\r' => true,
                    _ => {
                        decoded += 1;
                        state = State::InField;
                        false
                    }
                },
            };
            if ends_record {
                state = State::StartRecord;
                self.newlines_done += self.newlines_pending + newlines;
                (self.newlines_pending, newlines) = (0, 0);
                if self.end_record(delimiters, decoded) {
                    self.state = state;
                    return Some(Cut {
                        at: i,
                        rows: std::mem::take(&mut self.rows),
                    });
                }
            }
        }
        self.state = state;
        (self.delimiters, self.decoded) = (delimiters, decoded);
        self.newlines_pending += newlines;
        None
    }

    /// The input is over: a record still open ends here. The rows of the last batch.
    pub(super) fn finish(&mut self) -> usize {
        if self.state != State::StartRecord {
            self.state = State::StartRecord;
            self.end_record(self.delimiters, self.decoded);
        }
        std::mem::take(&mut self.rows)
    }

    /// The sequential parser's rule for one record; true when it ends the batch.
    fn end_record(&mut self, delimiters: usize, decoded: usize) -> bool {
        let fields = delimiters + 1;
        // A line holding one empty field (`""`) is not a row unless the header has one field.
        if fields != self.header_len && fields == 1 && decoded == 0 {
            return false;
        }
        self.rows += 1;
        self.batch_bytes += decoded + 8 * self.columns;
        if self.rows == self.rule.rows || self.batch_bytes >= self.rule.bytes {
            self.batch_bytes = 0;
            return true;
        }
        false
    }
}
