//! [`HistoryCatalog`] on SQLite: the trait's methods, each in one read or transaction, over the
//! steps kept beside it (`history.rs`: commits, reads as of a commit, retention; `rollback.rs`;
//! `erasure.rs`).

use rusqlite::params;

use super::erasure::{erase_retired, retired_holding};
use super::history::{data_files, expire, files_at, resolve};
use super::rollback::rollback;
use super::SqliteCatalog;
use crate::catalog::interface::HistoryCatalog;
use crate::catalog::{AsOf, Commit, DataFile, FilesAt, Retention, RetiredHolding, RetiredRewrite};
use crate::error::Result;

fn commit_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Commit> {
    Ok(Commit {
        commit: r.get(0)?,
        committed_at: r.get(1)?,
        operation: r.get(2)?,
        subject: r.get(3)?,
        raw_filename: r.get(4)?,
        rows_added: r.get(5)?,
        rows_removed: r.get(6)?,
    })
}

impl HistoryCatalog for SqliteCatalog {
    fn commits(
        &self,
        dataset_id: i64,
        version: i64,
        offset: i64,
        limit: i64,
    ) -> Result<Vec<Commit>> {
        self.with(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT commit_no, committed_at, operation, subject, raw_filename, rows_added,
                        rows_removed
                 FROM commits WHERE dataset_id = ?1 AND version = ?2
                 ORDER BY commit_no DESC LIMIT ?3 OFFSET ?4",
            )?;
            let commits = stmt
                .query_map(params![dataset_id, version, limit, offset], commit_row)?
                .collect::<Result<Vec<_>, _>>()?;
            Ok(commits)
        })
    }

    fn files_at_held(
        &self,
        dataset_id: i64,
        version: i64,
        at: &AsOf,
        hold: &mut dyn FnMut(&[DataFile]),
    ) -> Result<FilesAt> {
        // Under the lock: neither a commit nor an expiry can return (and so retire a file)
        // before `hold` has leased the files.
        self.with(|c| {
            let commit = resolve(c, dataset_id, version, at)?;
            let files = match at {
                // The live manifest: exactly what a current read has always scanned.
                AsOf::Latest => data_files(c, dataset_id, version)?,
                _ => files_at(c, dataset_id, version, commit)?,
            };
            hold(&files);
            Ok(FilesAt { commit, files })
        })
    }

    fn expire_commits(
        &self,
        dataset_id: i64,
        version: i64,
        retention: &Retention,
    ) -> Result<Vec<String>> {
        self.transaction(|tx| expire(tx, dataset_id, version, retention))
    }

    fn rollback(
        &self,
        dataset_id: i64,
        version: i64,
        to: i64,
        subject: Option<&str>,
    ) -> Result<i64> {
        self.transaction(|tx| rollback(tx, dataset_id, version, to, subject))
    }

    fn retired_holding(
        &self,
        dataset_id: i64,
        version: i64,
        raw_filename: &str,
    ) -> Result<Vec<RetiredHolding>> {
        self.with(|c| retired_holding(c, dataset_id, version, raw_filename))
    }

    fn erase_retired(
        &self,
        dataset_id: i64,
        version: i64,
        raw_filename: &str,
        rewrites: &[RetiredRewrite],
    ) -> Result<Vec<String>> {
        self.transaction(|tx| erase_retired(tx, dataset_id, version, raw_filename, rewrites))
    }

    fn versions_with_retired_files(&self) -> Result<Vec<(i64, i64)>> {
        self.with(|c| {
            let mut stmt =
                c.prepare("SELECT DISTINCT dataset_id, version FROM retired_files ORDER BY 1, 2")?;
            let versions = stmt
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<Result<Vec<_>, _>>()?;
            Ok(versions)
        })
    }
}
