//! Column profiles (docs/API.md, `GET .../profile`): what the stored data looks like, column by
//! column, taken from the same pass that validates an upload (the ingest feeds each kept batch
//! to a [`Profiler`]) and merged per schema version when asked.
//!
//! Per column: rows, nulls, smallest and largest value, the exact count of each value while an
//! upload has at most [`MAX_FREQUENT`] distinct ones (low-cardinality columns), past that a
//! distinct count estimated by a HyperLogLog sketch (`distinct.rs`; profiles kept before it hold
//! Apache DataSketches' sketch, still read), and
//! for numbers and dates a histogram of 256 fine bins (`bins.rs`). All of it merges across
//! uploads and is kept in a few KiB per column whatever the upload's size. Each upload's profile is kept in the catalog beside its raw file (and goes with it);
//! [`view`] merges them and flags what changed between the last two uploads.

pub mod bins;
mod cheap;
mod column;
mod distinct;
mod merged;
mod text_counts;
pub mod view;

use serde::{Deserialize, Serialize};

pub use column::{ColumnProfiler, StoredColumn};
pub use view::{ColumnView, HistogramBin, ProfileChange, ProfileView, ValueCount};

use crate::schema::ValidSchema;
use arrow::array::RecordBatch;

/// Distinct values an upload may have in a column for its values to be counted one by one.
pub const MAX_FREQUENT: usize = 50;

/// The profile of one upload as kept in the catalog (JSON).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct StoredProfile {
    pub rows: u64,
    pub columns: Vec<StoredColumn>,
}

impl StoredProfile {
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// A kept profile; `None` when it cannot be read (written by another release, damaged).
    pub fn from_json(text: &str) -> Option<StoredProfile> {
        serde_json::from_str(text).ok()
    }
}

/// Profiles the batches of one upload, in schema column order.
pub struct Profiler {
    /// Whether it counts at all (`RAPID_PROFILE_UPLOADS`, the engine's setting).
    on: bool,
    rows: u64,
    columns: Vec<ColumnProfiler>,
}

impl Profiler {
    pub fn new(schema: &ValidSchema) -> Profiler {
        Profiler::for_columns(schema.columns())
    }

    /// A profiler that counts only when `on`; off, it sees nothing and `finish` gives no
    /// profile (an upload without a profile shows none).
    pub fn when(on: bool, schema: &ValidSchema) -> Profiler {
        Profiler {
            on,
            ..Profiler::new(schema)
        }
    }

    /// A profiler of `columns` (a schema's, in its order).
    pub fn for_columns(columns: &[crate::schema::ValidColumn]) -> Profiler {
        Profiler {
            on: true,
            rows: 0,
            columns: columns.iter().map(ColumnProfiler::new).collect(),
        }
    }

    /// Adds what `other` counted (later rows of the same upload, profiled elsewhere).
    pub fn merge(&mut self, other: Profiler) {
        self.rows += other.rows;
        for (mine, theirs) in self.columns.iter_mut().zip(other.columns) {
            mine.merge(theirs);
        }
    }

    /// Counts `batch` (every schema column, schema order) in; nothing while profiling is off
    /// (then `finish` gives no profile).
    pub fn observe(&mut self, batch: &RecordBatch) {
        if !self.on {
            return;
        }
        self.rows += batch.num_rows() as u64;
        for (column, array) in self.columns.iter_mut().zip(batch.columns()) {
            column.observe(array.as_ref());
        }
    }

    /// The profile to keep; `None` when no row was seen.
    pub fn finish(self) -> Option<StoredProfile> {
        (self.rows > 0).then(|| StoredProfile {
            rows: self.rows,
            columns: self
                .columns
                .into_iter()
                .map(ColumnProfiler::finish)
                .collect(),
        })
    }
}

#[cfg(test)]
#[path = "profile_tests.rs"]
mod tests;
