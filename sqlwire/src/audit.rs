//! One audit row per statement the listener executes (`front` `pg`): a simple query message
//! (all its statements) or an extended-protocol execute. The statement's note is set on the
//! engine's session before it runs, so its scans write what they read (each read opens the row:
//! see `rapid_actors::audit::pending`); the row, or its opening, is durable before the answer
//! goes back, as on every front.

use std::time::Instant;

use datafusion_postgres::pgwire::error::{PgWireError, PgWireResult};
use rapid_actors::audit::{statement, AuditEntry, Front, Note, Opener};

use crate::errors::pg_error;
use crate::session::Checker;

/// A statement under way: its note, when it started, its text.
pub(crate) struct Running {
    note: Note,
    started: Instant,
    sql: String,
}

/// The HTTP status an answer counts as in the log (its SQLSTATE's class decides).
fn status_of<T>(answer: &PgWireResult<T>) -> u16 {
    let code = match answer {
        Ok(_) => return 200,
        Err(PgWireError::UserError(info)) => info.code.clone(),
        Err(_) => return 500,
    };
    match code.as_str() {
        "42501" => 403,
        "42P01" | "3D000" => 404,
        "57014" | "54000" => 400,
        c if c.starts_with("28") => 401,
        c if c.starts_with("53") => 503,
        c if c.starts_with("42") || c.starts_with("22") || c.starts_with("0A") => 400,
        _ => 500,
    }
}

/// A statement's kind from its text: its first word, upper case (`SELECT`, `SHOW`, `COPY`...).
fn kind_of(sql: &str) -> String {
    let word: String = sql
        .trim_start_matches(|c: char| c.is_whitespace() || c == '(')
        .chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .take(32)
        .collect();
    match word.is_empty() {
        true => "STATEMENT".to_string(),
        false => word.to_ascii_uppercase(),
    }
}

impl Checker {
    /// A statement starts: its note, given to the session when one is open.
    pub(crate) fn begin(&self, sql: &str) -> Running {
        // Its row is opened when a scan notes a read: durable while the statement runs.
        let opener = Opener::new(
            self.engine().audit(),
            Front::Pg,
            kind_of(sql),
            None,
            self.client_addr(),
        );
        let note = Note::opened_by(opener);
        if let Some(s) = self.subject().as_deref() {
            note.by(&s.id, &s.name);
        }
        self.set_note(note.clone());
        Running {
            note,
            started: Instant::now(),
            sql: sql.to_string(),
        }
    }

    /// The statement ended with `answer`: its row is written, then the answer goes back (the
    /// row not written: the answer becomes an error saying so).
    pub(crate) async fn end<T>(
        &self,
        running: Running,
        answer: PgWireResult<T>,
    ) -> PgWireResult<T> {
        let noted = running.note.fields();
        let mut entry = AuditEntry::of(
            Front::Pg,
            kind_of(&running.sql),
            self.subject()
                .as_deref()
                .map(|s| (s.id.as_str(), s.name.as_str())),
            noted,
            status_of(&answer),
        );
        entry
            .statement
            .get_or_insert_with(|| statement::without_literals(&running.sql));
        entry.duration_ms = running.started.elapsed().as_millis() as u64;
        entry.client_addr = self.client_addr();
        // Inside the statement's span (and its connection's): an operator can follow a session.
        tracing::debug!(
            status = entry.status,
            ms = entry.duration_ms,
            "PostgreSQL statement answered"
        );
        let opening = running.note.take_opening();
        match self.engine().audit().finish(entry, opening).await {
            Ok(()) => answer,
            Err(e) => {
                tracing::error!(error = %e.report(), "a statement's audit row was not written");
                Err(pg_error(
                    "58000",
                    "the statement's audit row could not be written, so its answer is withheld",
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::kind_of;

    #[test]
    fn a_statement_is_named_by_its_first_word() {
        assert_eq!(kind_of("  select 1"), "SELECT");
        assert_eq!(kind_of("(SELECT 1) UNION (SELECT 2)"), "SELECT");
        assert_eq!(kind_of("copy (select 1) to stdout"), "COPY");
        assert_eq!(kind_of("-- c\nselect"), "STATEMENT");
    }
}
