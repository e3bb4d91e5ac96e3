//! What the engine learns while serving a request and the audit row needs: the dataset, schema
//! version and commit read, the columns, the policies applied, the rows returned. A front makes
//! one [`Note`] per request and hands it in with the pass (`with_note`); every use case that reads
//! through the pass writes into it, so every front's row says the same things.

use std::sync::{Arc, Mutex};

use crate::key::DatasetKey;

/// A request's note, shared by the front and the engine (cheap to clone).
#[derive(Clone, Default, Debug)]
pub struct Note(Arc<Mutex<NoteFields>>);

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
    fn with(&self, f: impl FnOnce(&mut NoteFields)) {
        // A poisoned note (a panic elsewhere in the request) still takes what is known.
        let mut fields = self.0.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut fields)
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
        self.with(|f| {
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
        let mut out = NoteFields::default();
        self.with(|f| out = f.clone());
        out
    }
}
