//! Compaction: the small data files of a partition merged into files of a target size, so that a
//! dataset fed by many small appends is read (and checked) as if its rows had come at once
//! (docs/DESIGN.md, Compaction). This module is the file work: which files to merge
//! ([`plan`]), merging them, and rewriting a merged file without one raw file's rows
//! ([`merge`]). The dataset's actor commits the result ([`crate::dataset`]); the engine's
//! compactor decides when ([`crate::engine`]).

mod merge;
mod plan;

use std::collections::HashMap;
use std::time::Duration;

use crate::catalog::{Catalog, FilePart, PartsOf};
use crate::error::Result;

pub use merge::{merge, rewrite_without, Merged};
pub use plan::{plan, Group, Trigger};

/// When and how far compaction merges (settings, docs/install.md).
#[derive(Debug, Clone)]
pub struct CompactionSettings {
    /// Merged files are cut at about this many bytes; a file of at least half of it is not small.
    pub target_bytes: u64,
    /// While commits keep coming, a partition is compacted once it has this many small files.
    pub min_files: usize,
    /// A version with no commit for this long has any partition of 2 or more small files merged.
    pub idle: Duration,
    /// Whether the compactor starts on its own (on-demand compaction works either way).
    pub automatic: bool,
}

impl Default for CompactionSettings {
    fn default() -> Self {
        CompactionSettings {
            target_bytes: 128 * 1024 * 1024,
            min_files: 16,
            idle: Duration::from_secs(10),
            automatic: true,
        }
    }
}

/// The parts of the merged files among `groups`' inputs, by file id: only those (a version's
/// parts grow with its uploads).
pub fn input_parts(catalog: &dyn Catalog, groups: &[Group]) -> Result<HashMap<i64, Vec<FilePart>>> {
    let merged: Vec<i64> = groups
        .iter()
        .flat_map(|g| &g.files)
        .filter(|f| f.raw_filename.is_empty())
        .map(|f| f.id)
        .collect();
    let mut parts: HashMap<i64, Vec<FilePart>> = HashMap::new();
    for (id, part) in catalog.file_parts(PartsOf::Files(&merged))? {
        parts.entry(id).or_default().push(part);
    }
    Ok(parts)
}
