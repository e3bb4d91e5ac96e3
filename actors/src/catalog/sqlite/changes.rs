//! What the Delta Lake log of a version is derived from, in SQLite (see
//! [`crate::catalog::interface::ChangesCatalog`]).

use rusqlite::{params, Connection, OptionalExtension};

use super::history::latest_commit;
use super::rows::data_file;
use super::SqliteCatalog;
use crate::catalog::interface::ChangesCatalog;
use crate::catalog::{CommitChanges, DataFile};
use crate::error::Result;

/// The files (`data_file` columns) with their commit, for `sql` over `?1` dataset, `?2` version,
/// `?3..=?4` the commits.
fn files_by_commit(
    conn: &Connection,
    sql: &str,
    args: (i64, i64, i64, i64),
) -> Result<Vec<(i64, DataFile)>> {
    let mut stmt = conn.prepare_cached(sql)?;
    let rows = stmt
        .query_map(params![args.0, args.1, args.2, args.3], |r| {
            Ok((r.get(7)?, data_file(r)?))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rows)
}

const ADDED: &str =
    "SELECT id, raw_filename, partition_path, path, rows, bytes, stats, added_commit
     FROM data_files WHERE dataset_id = ?1 AND version = ?2 AND added_commit BETWEEN ?3 AND ?4
     UNION ALL
     SELECT id, raw_filename, partition_path, path, rows, bytes, stats, added_commit
     FROM retired_files WHERE dataset_id = ?1 AND version = ?2 AND added_commit BETWEEN ?3 AND ?4
     ORDER BY 8, 4";

const REMOVED: &str =
    "SELECT id, raw_filename, partition_path, path, rows, bytes, stats, removed_commit
     FROM retired_files WHERE dataset_id = ?1 AND version = ?2 AND removed_commit BETWEEN ?3 AND ?4
     ORDER BY 8, 4";

fn changes(
    conn: &Connection,
    dataset_id: i64,
    version: i64,
    from: i64,
    to: i64,
) -> Result<Vec<CommitChanges>> {
    let mut stmt = conn.prepare_cached(
        "SELECT commit_no, committed_at, operation FROM commits
         WHERE dataset_id = ?1 AND version = ?2 AND commit_no BETWEEN ?3 AND ?4 ORDER BY 1",
    )?;
    let mut commits = stmt
        .query_map(params![dataset_id, version, from, to], |r| {
            Ok(CommitChanges {
                commit: r.get(0)?,
                committed_at: r.get(1)?,
                operation: r.get(2)?,
                added: Vec::new(),
                removed: Vec::new(),
            })
        })?
        .collect::<Result<Vec<_>, _>>()?;
    let args = (dataset_id, version, from, to);
    for (commit, file) in files_by_commit(conn, ADDED, args)? {
        if let Some(c) = commits.iter_mut().find(|c| c.commit == commit) {
            c.added.push(file);
        }
    }
    for (commit, file) in files_by_commit(conn, REMOVED, args)? {
        if let Some(c) = commits.iter_mut().find(|c| c.commit == commit) {
            c.removed.push(file);
        }
    }
    Ok(commits)
}

impl ChangesCatalog for SqliteCatalog {
    fn history_bounds(&self, dataset_id: i64, version: i64) -> Result<(i64, i64)> {
        self.with(|c| {
            let floor: Option<i64> = c
                .prepare_cached(
                    "SELECT history_floor FROM schema_versions
                     WHERE dataset_id = ?1 AND version = ?2",
                )?
                .query_row(params![dataset_id, version], |r| r.get(0))
                .optional()?;
            Ok((floor.unwrap_or(1), latest_commit(c, dataset_id, version)?))
        })
    }

    fn commit_changes(
        &self,
        dataset_id: i64,
        version: i64,
        from: i64,
        to: i64,
    ) -> Result<Vec<CommitChanges>> {
        // One read transaction: the commits and their files as one committed state.
        self.transaction(|tx| changes(tx, dataset_id, version, from, to))
    }
}
