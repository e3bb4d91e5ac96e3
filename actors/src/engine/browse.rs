//! What the web pages show of a dataset beyond the API's answers: the schema of a version, its
//! raw files with their figures and its rows per partition, and (for a DATA_ADMIN) any dataset's
//! record and latest schema, readable by it or not, as the API's admin routes reach any dataset.

use std::collections::BTreeMap;

use super::{pick_version, Engine};
use crate::auth::pass::{AccessKind, AdminPass, DatasetPass};
use crate::catalog::{Catalog, DataFile, PartsOf};
use crate::error::{Error, Result};
use crate::key::{DatasetKey, DatasetRecord};
use crate::schema::ValidSchema;

pub use crate::catalog::RawFile;

/// A version's raw files (oldest first) and its rows per partition path (in path order).
#[derive(Default)]
pub struct VersionFiles {
    pub raw: Vec<RawFile>,
    pub partitions: Vec<(String, i64)>,
    /// The rows each raw file has in the current commit (the live manifest), by raw file name:
    /// after a rollback, a file whose rows were rolled back away is not in it.
    pub live: BTreeMap<String, i64>,
}

/// The rows of each raw file among `files` (a version's live data files): a merged file's by
/// its parts.
pub(super) fn live_rows(
    catalog: &dyn Catalog,
    files: &[DataFile],
) -> Result<BTreeMap<String, i64>> {
    let mut live: BTreeMap<String, i64> = BTreeMap::new();
    let mut merged = vec![];
    for f in files {
        match f.raw_filename.is_empty() {
            true => merged.push(f.id),
            false => *live.entry(f.raw_filename.clone()).or_default() += f.rows,
        }
    }
    if !merged.is_empty() {
        for (_, part) in catalog.file_parts(PartsOf::Files(&merged))? {
            *live.entry(part.raw_filename).or_default() += part.rows;
        }
    }
    Ok(live)
}

impl Engine {
    /// The schema of a version (the latest when absent or 0); 404 for an unknown version.
    pub fn schema<A: AccessKind>(
        &self,
        pass: &DatasetPass<A>,
        version: Option<i64>,
    ) -> Result<ValidSchema> {
        let record = pass.record();
        let version = pick_version(version, record.latest_version);
        self.registry.schema(&record.key, Some(version))
    }

    /// A version's raw files and rows per partition (both empty for a version with no upload).
    /// Counted over every row: refused (403) when a policy applies to the subject there.
    pub fn version_files<A: AccessKind>(
        &self,
        pass: &DatasetPass<A>,
        version: i64,
    ) -> Result<VersionFiles> {
        if self.counts_hidden(pass, version)? {
            return Err(Error::forbidden(format!(
                "The files and rows of this dataset version are hidden from subject {}: a \
                 policy applies to it (query the dataset instead)",
                pass.subject().name
            )));
        }
        self.counted_files(pass, version)
    }

    /// [`Self::version_files`] for a caller that has checked that no policy hides the counts.
    pub(super) fn counted_files<A: AccessKind>(
        &self,
        pass: &DatasetPass<A>,
        version: i64,
    ) -> Result<VersionFiles> {
        let id = pass.record().id;
        let raw = self.catalog.raw_files(id, version)?;
        let files = self.catalog.data_files(id, version)?;
        let live = live_rows(self.catalog.as_ref(), &files)?;
        let mut parts: BTreeMap<String, i64> = Default::default();
        for f in files {
            *parts.entry(f.partition_path).or_default() += f.rows;
        }
        Ok(VersionFiles {
            raw,
            partitions: parts.into_iter().collect(),
            live,
        })
    }

    /// Any dataset's record, for a DATA_ADMIN (404 if unknown).
    pub fn dataset(&self, _: &AdminPass, key: &DatasetKey) -> Result<DatasetRecord> {
        self.registry.find(key)
    }

    /// Any dataset's latest schema, for a DATA_ADMIN to edit into its next version.
    pub fn latest_schema(&self, _: &AdminPass, key: &DatasetKey) -> Result<ValidSchema> {
        self.registry.schema(key, None)
    }
}
