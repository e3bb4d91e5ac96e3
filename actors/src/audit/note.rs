//! What the engine learns while serving a request and the audit row needs: the dataset, schema
//! version and commit read, the columns, the policies applied, the rows returned. A front makes
//! one [`Note`] per request and hands it in with the pass (`with_note`); every use case that reads
//! through the pass writes into it, so every front's row says the same things. A front that
//! gives the note an [`Opener`] has the request's row opened each time a read is noted (see
//! `super::pending`): durable while the query runs, so the answer need not wait for a write.

use std::sync::{Arc, Mutex};

use super::pending::{new_key, Opened, Opening};
use super::{AuditEntry, AuditLog, Front};
use crate::key::DatasetKey;

/// A request's note, shared by the front and the engine (cheap to clone).
#[derive(Clone, Default)]
pub struct Note(Arc<Mutex<NoteState>>);

impl std::fmt::Debug for Note {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Note").field(&self.fields()).finish()
    }
}

#[derive(Default)]
struct NoteState {
    fields: NoteFields,
    opener: Option<Opener>,
}

/// What a front knows of its request before the answer, to open its row with.
pub struct Opener {
    log: AuditLog,
    key: String,
    front: Front,
    action: String,
    subject: Option<(String, String)>,
    request_id: Option<String>,
    client_addr: Option<String>,
    /// The writer's answer for the latest opening handed over; `None` before the first read,
    /// or when the last could not be handed over.
    written: Option<tokio::sync::oneshot::Receiver<crate::error::Result<()>>>,
    opened: bool,
}

impl Opener {
    /// `action` as the front names it when the request ends (it may name it better later:
    /// [`Note::routed`]); the subject comes with the pass ([`Note::by`]).
    pub fn new(
        log: &AuditLog,
        front: Front,
        action: String,
        request_id: Option<String>,
        client_addr: Option<String>,
    ) -> Opener {
        Opener {
            log: log.clone(),
            key: new_key(),
            front,
            action,
            subject: None,
            request_id,
            client_addr,
            written: None,
            opened: false,
        }
    }

    /// Hands the row as `fields` make it now to the writer (it replaces an earlier opening).
    fn open(&mut self, fields: &NoteFields) {
        let subject = self.subject.as_ref().map(|(i, n)| (i.as_str(), n.as_str()));
        let mut entry = AuditEntry::of(
            self.front,
            self.action.clone(),
            subject,
            fields.clone(),
            super::pending::OUTCOME_UNKNOWN,
        );
        entry.request_id = self.request_id.clone();
        entry.client_addr = self.client_addr.clone();
        let opened = Opened {
            key: self.key.clone(),
            entry,
        };
        self.written = self.log.open(opened);
        self.opened = true;
    }
}

#[derive(Clone, Default, Debug, PartialEq)]
pub struct NoteFields {
    /// Every dataset read, in order, with its version and commit.
    pub reads: Vec<(DatasetKey, i64, Option<i64>)>,
    pub columns: Vec<String>,
    pub policies: Vec<String>,
    pub rows: Option<u64>,
    pub statement: Option<String>,
    /// A finer action than the front's own (a statement's kind, an MCP tool).
    pub action: Option<String>,
    /// The outcome when the front's own status does not tell it: an MCP tool call refused
    /// inside a 200 answer (the protocol carries the refusal in its body).
    pub status: Option<u16>,
}

impl Note {
    /// A note whose request's row `opener` opens at each read noted.
    pub fn opened_by(opener: Opener) -> Note {
        Note(Arc::new(Mutex::new(NoteState {
            fields: NoteFields::default(),
            opener: Some(opener),
        })))
    }

    fn state<R>(&self, f: impl FnOnce(&mut NoteState) -> R) -> R {
        // A poisoned note (a panic elsewhere in the request) still takes what is known.
        let mut state = self.0.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut state)
    }

    fn with(&self, f: impl FnOnce(&mut NoteFields)) {
        self.state(|s| f(&mut s.fields))
    }

    /// The action as the front names it once the request is routed (an opening's row).
    pub fn routed(&self, action: String) {
        self.state(|s| {
            if let Some(o) = &mut s.opener {
                o.action = action;
            }
        })
    }

    /// The subject whose pass carries the note (an opening's row).
    pub fn by(&self, id: &str, name: &str) {
        self.state(|s| {
            if let Some(o) = &mut s.opener {
                o.subject = Some((id.to_string(), name.to_string()));
            }
        })
    }

    /// The request's opening for [`AuditLog::finish`]; the note opens nothing more after it.
    pub fn take_opening(&self) -> Option<Opening> {
        let opener = self.state(|s| s.opener.take())?;
        opener.opened.then_some(Opening {
            key: opener.key,
            written: opener.written,
        })
    }

    /// A dataset read: its version, the commit read (when one), the columns and policies.
    pub fn read(
        &self,
        key: &DatasetKey,
        version: i64,
        commit: Option<i64>,
        columns: impl IntoIterator<Item = String>,
        policies: &[String],
    ) {
        self.state(|s| {
            let f = &mut s.fields;
            if !f.reads.iter().any(|(k, v, _)| k == key && *v == version) {
                f.reads.push((key.clone(), version, commit));
            }
            for c in columns {
                if !f.columns.contains(&c) {
                    f.columns.push(c);
                }
            }
            for p in policies {
                if !f.policies.contains(p) {
                    f.policies.push(p.clone());
                }
            }
            if let Some(o) = &mut s.opener {
                o.open(&s.fields);
            }
        })
    }

    /// The commit a read settled on once it ran (the newest when none was asked).
    pub fn commit(&self, key: &DatasetKey, commit: i64) {
        self.with(|f| {
            for read in f.reads.iter_mut().filter(|(k, _, _)| k == key) {
                read.2 = Some(commit);
            }
        })
    }

    pub fn rows(&self, rows: u64) {
        self.with(|f| f.rows = Some(rows))
    }

    pub fn statement(&self, statement: String) {
        self.with(|f| f.statement = Some(statement))
    }

    pub fn action(&self, action: impl Into<String>) {
        let action = action.into();
        self.with(|f| f.action = Some(action))
    }

    pub fn status(&self, status: u16) {
        self.with(|f| f.status = Some(status))
    }

    /// What was noted so far.
    pub fn fields(&self) -> NoteFields {
        self.state(|s| s.fields.clone())
    }
}
