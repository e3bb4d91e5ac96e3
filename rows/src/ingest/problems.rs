//! Validation problems of one upload: every one is counted, the first [`MAX_MESSAGES`] are kept
//! word for word for the 422 answer, and each is also kept as a [`Record`] (row, column, rule,
//! value) for the upload's whole report (`report.rs`), which the validator writes to disk batch
//! by batch: memory holds one batch's records, at most [`MAX_RECORDS`].

use crate::error::{Error, ErrorKind};

pub(super) const MAX_MESSAGES: usize = 100;

/// Records kept by one `Problems` (one batch's, or one column's in a batch) before the rest are
/// only counted: about 30 MB at most, where a batch holds at most 64k rows.
pub(super) const MAX_RECORDS: usize = 1 << 18;

/// Where a problem is and what broke: one row of the report.
#[derive(Debug, Clone, PartialEq)]
pub struct Place {
    /// The row (from 1, the header not counted); `None` for the whole file.
    pub row: Option<u64>,
    pub column: String,
    /// `type`, `null`, `check`, `unique`, `fields`, `encoding`, `file`.
    pub rule: &'static str,
    /// The value as received (as text), when there is one.
    pub value: Option<String>,
}

impl Place {
    pub fn row(row: u64, column: &str, rule: &'static str, value: Option<String>) -> Place {
        Place {
            row: Some(row),
            column: column.to_string(),
            rule,
            value,
        }
    }

    /// A problem of a whole column, not of one row (a Parquet column's type, a value already
    /// stored).
    pub fn column(column: &str, rule: &'static str, value: Option<String>) -> Place {
        Place {
            row: None,
            column: column.to_string(),
            rule,
            value,
        }
    }

    /// A problem of the whole file (no row, no column).
    pub fn file() -> Place {
        Place {
            row: None,
            column: String::new(),
            rule: "file",
            value: None,
        }
    }
}

/// One problem in full: where, and the message the 422 would show.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    pub place: Place,
    pub message: String,
}

#[derive(Debug, Default)]
pub struct Problems {
    messages: Vec<String>,
    records: Vec<Record>,
    /// Problems counted but not kept as records (over [`MAX_RECORDS`]).
    unrecorded: u64,
    total: u64,
}

impl Problems {
    /// Records a problem of the whole file.
    pub fn add(&mut self, message: impl FnOnce() -> String) {
        self.add_at(Place::file(), message);
    }

    /// Records a problem at `place`.
    pub fn add_at(&mut self, place: Place, message: impl FnOnce() -> String) {
        self.total += 1;
        if self.records.len() >= MAX_RECORDS {
            self.unrecorded += 1;
            // Still keep the first messages for the answer, however the records went.
            if self.messages.len() < MAX_MESSAGES {
                self.messages.push(message());
            }
            return;
        }
        let message = message();
        if self.messages.len() < MAX_MESSAGES {
            self.messages.push(message.clone());
        }
        self.records.push(Record { place, message });
    }

    /// Records `other`'s problems after these: its kept messages are its first ones, so the
    /// result is what adding them one by one here would have given (records included, until
    /// [`MAX_RECORDS`]).
    pub fn append(&mut self, other: Problems) {
        self.total += other.total;
        let room = MAX_MESSAGES.saturating_sub(self.messages.len());
        self.messages.extend(other.messages.into_iter().take(room));
        let room = MAX_RECORDS.saturating_sub(self.records.len());
        let kept = other.records.len().min(room);
        self.unrecorded += other.unrecorded + (other.records.len() - kept) as u64;
        self.records.extend(other.records.into_iter().take(kept));
    }

    /// Hands over the records kept so far (for the report) and how many were only counted;
    /// counts and messages stay.
    pub fn take_records(&mut self) -> (Vec<Record>, u64) {
        (
            std::mem::take(&mut self.records),
            std::mem::take(&mut self.unrecorded),
        )
    }

    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    pub fn total(&self) -> u64 {
        self.total
    }

    /// The 422 answer: the kept messages, then how many more there were.
    pub fn into_error(mut self) -> Error {
        let rest = self.total - self.messages.len() as u64;
        if rest > 0 {
            self.messages.push(format!("... and {rest} more errors"));
        }
        Error::many(ErrorKind::Unprocessable, self.messages)
    }
}

/// A value as shown in a message: quoted, cut to 60 characters.
pub(super) fn shown(value: &[u8]) -> String {
    let text = String::from_utf8_lossy(value);
    let mut out: String = text.chars().take(60).collect();
    if text.chars().count() > 60 {
        out.push('…');
    }
    format!("\"{out}\"")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Details;

    #[test]
    fn messages_are_capped_with_a_count_of_the_rest() {
        let mut p = Problems::default();
        for i in 0..(MAX_MESSAGES + 5) {
            p.add(|| format!("problem {i}"));
        }
        assert_eq!(p.total(), MAX_MESSAGES as u64 + 5);
        let Details::Many(ms) = p.into_error().details else {
            panic!()
        };
        assert_eq!(ms.len(), MAX_MESSAGES + 1);
        assert_eq!(ms.last().unwrap(), "... and 5 more errors");
    }

    #[test]
    fn shown_values_are_quoted_and_cut() {
        assert_eq!(shown(b"abc"), "\"abc\"");
        assert_eq!(shown("x".repeat(100).as_bytes()).chars().count(), 63);
    }
}
