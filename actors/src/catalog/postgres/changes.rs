//! What the Delta Lake log of a version is derived from, in PostgreSQL, as in SQLite
//! (`sqlite/changes.rs`; see [`crate::catalog::interface::ChangesCatalog`]).

use super::history::latest_commit;
use super::pool::Db;
use super::rows::data_file;
use super::PostgresCatalog;
use crate::catalog::interface::ChangesCatalog;
use crate::catalog::{CommitChanges, DataFile};
use crate::error::Result;

const ADDED: &str =
    "SELECT id, raw_filename, partition_path, path, rows, bytes, stats, added_commit
     FROM data_files WHERE dataset_id = $1 AND version = $2 AND added_commit BETWEEN $3 AND $4
     UNION ALL
     SELECT id, raw_filename, partition_path, path, rows, bytes, stats, added_commit
     FROM retired_files WHERE dataset_id = $1 AND version = $2 AND added_commit BETWEEN $3 AND $4
     ORDER BY 8, 4";

const REMOVED: &str =
    "SELECT id, raw_filename, partition_path, path, rows, bytes, stats, removed_commit
     FROM retired_files WHERE dataset_id = $1 AND version = $2 AND removed_commit BETWEEN $3 AND $4
     ORDER BY 8, 4";

/// The files (`data_file` columns) with their commit, for `sql` over `$1` dataset, `$2` version,
/// `$3..=$4` the commits.
fn files_by_commit(db: &Db<'_>, sql: &str, args: [i64; 4]) -> Result<Vec<(i64, DataFile)>> {
    db.query(sql, &[&args[0], &args[1], &args[2], &args[3]])?
        .iter()
        .map(|r| Ok((r.try_get(7)?, data_file(r)?)))
        .collect()
}

fn changes(db: &Db<'_>, args: [i64; 4]) -> Result<Vec<CommitChanges>> {
    let mut commits = db
        .query(
            "SELECT commit_no, committed_at, operation FROM commits
             WHERE dataset_id = $1 AND version = $2 AND commit_no BETWEEN $3 AND $4 ORDER BY 1",
            &[&args[0], &args[1], &args[2], &args[3]],
        )?
        .iter()
        .map(|r| {
            Ok(CommitChanges {
                commit: r.try_get(0)?,
                committed_at: r.try_get(1)?,
                operation: r.try_get(2)?,
                added: Vec::new(),
                removed: Vec::new(),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    for (commit, file) in files_by_commit(db, ADDED, args)? {
        if let Some(c) = commits.iter_mut().find(|c| c.commit == commit) {
            c.added.push(file);
        }
    }
    for (commit, file) in files_by_commit(db, REMOVED, args)? {
        if let Some(c) = commits.iter_mut().find(|c| c.commit == commit) {
            c.removed.push(file);
        }
    }
    Ok(commits)
}

impl ChangesCatalog for PostgresCatalog {
    fn history_bounds(&self, dataset_id: i64, version: i64) -> Result<(i64, i64)> {
        self.with(|db| {
            let floor: Option<i64> = db
                .query_opt(
                    "SELECT history_floor FROM schema_versions
                     WHERE dataset_id = $1 AND version = $2",
                    &[&dataset_id, &version],
                )?
                .map(|r| r.try_get(0))
                .transpose()?;
            Ok((floor.unwrap_or(1), latest_commit(db, dataset_id, version)?))
        })
    }

    fn commit_changes(
        &self,
        dataset_id: i64,
        version: i64,
        from: i64,
        to: i64,
    ) -> Result<Vec<CommitChanges>> {
        // Under the dataset's lock, shared: no commit or expiry lands between the three reads.
        self.transaction(|db| {
            super::lock_dataset_id(db, dataset_id, true)?;
            changes(db, [dataset_id, version, from, to])
        })
    }
}
