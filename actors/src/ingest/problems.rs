//! Validation problems of one upload: every one is counted, the first [`MAX_MESSAGES`] are kept
//! word for word, so a million bad rows cost a counter, not a million strings.

use crate::error::{Error, ErrorKind};

pub const MAX_MESSAGES: usize = 100;

#[derive(Debug, Default)]
pub struct Problems {
    messages: Vec<String>,
    total: u64,
}

impl Problems {
    /// Records a problem; `message` is only built while there is room for it.
    pub fn add(&mut self, message: impl FnOnce() -> String) {
        self.total += 1;
        if self.messages.len() < MAX_MESSAGES {
            self.messages.push(message());
        }
    }

    /// Records `other`'s problems after these: its kept messages are its first ones, so the
    /// result is what adding them one by one here would have given.
    pub fn append(&mut self, other: Problems) {
        self.total += other.total;
        let room = MAX_MESSAGES.saturating_sub(self.messages.len());
        self.messages.extend(other.messages.into_iter().take(room));
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
pub fn shown(value: &[u8]) -> String {
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
