//! Rolling a version back to an earlier commit in SQLite: the files live then listed again, the
//! others retired, by one new commit (see [`crate::catalog::interface::HistoryCatalog::rollback`]).

use rusqlite::{params, OptionalExtension, Transaction};

use super::history::{
    data_files, files_at, latest_commit, record, resolve, retire_where, NewCommit,
};
use crate::catalog::refusal::rollback_past_deletion;
use crate::catalog::{now_text, AsOf, CommitOperation, DataFile};
use crate::error::Result;

/// See `HistoryCatalog::rollback`; inside its transaction.
pub(super) fn rollback(
    tx: &Transaction<'_>,
    dataset_id: i64,
    version: i64,
    to: i64,
    subject: Option<&str>,
) -> Result<i64> {
    let target = resolve(tx, dataset_id, version, &AsOf::Commit(to))?;
    let deleted: Option<(i64, String)> = tx
        .prepare_cached(
            "SELECT commit_no, raw_filename FROM commits
             WHERE dataset_id = ?1 AND version = ?2 AND commit_no > ?3
                   AND operation IN ('DELETE', 'ERASE')
             ORDER BY commit_no LIMIT 1",
        )?
        .query_row(params![dataset_id, version, target], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .optional()?;
    if let Some((commit, raw)) = deleted {
        return Err(rollback_past_deletion(commit, &raw));
    }
    let number = latest_commit(tx, dataset_id, version)? + 1;
    let wanted = files_at(tx, dataset_id, version, target)?;
    let live = data_files(tx, dataset_id, version)?;
    let mut rows_removed = 0;
    for file in live
        .iter()
        .filter(|f| !wanted.iter().any(|w| w.path == f.path))
    {
        let gone = retire_where(tx, "id = ?1", &[&file.id], number)?;
        rows_removed += gone.iter().map(|(_, rows)| rows).sum::<i64>();
    }
    let mut rows_added = 0;
    for file in wanted
        .iter()
        .filter(|w| !live.iter().any(|f| f.path == w.path))
    {
        relist(tx, dataset_id, version, file, number)?;
        rows_added += file.rows;
    }
    // The index no longer matches the live rows: rebuilt from the files by the next commit that
    // checks a unique column (as for a version stored before the index existed).
    super::unique_keys::drop_version_keys(tx, dataset_id, version)?;
    tx.execute(
        "INSERT OR IGNORE INTO unique_keys_pending (dataset_id, version) VALUES (?1, ?2)",
        params![dataset_id, version],
    )?;
    record(
        tx,
        &NewCommit {
            dataset_id,
            version,
            number,
            operation: CommitOperation::Rollback,
            subject,
            raw_filename: None,
            rows_added,
            rows_removed,
        },
    )?;
    Ok(number)
}

/// A retired file listed again by commit `number`, with its parts.
fn relist(
    tx: &Transaction<'_>,
    dataset_id: i64,
    version: i64,
    file: &DataFile,
    number: i64,
) -> Result<()> {
    tx.prepare_cached(
        "INSERT INTO data_files (dataset_id, version, raw_filename, partition_path, path, rows,
                                 bytes, created_at, stats, added_commit)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )?
    .execute(params![
        dataset_id,
        version,
        file.raw_filename,
        file.partition_path,
        file.path,
        file.rows,
        file.bytes,
        now_text(),
        file.stats,
        number
    ])?;
    let id = tx.last_insert_rowid();
    tx.prepare_cached(
        "INSERT INTO data_file_parts (data_file_id, raw_filename, first_row, rows)
         SELECT ?1, raw_filename, first_row, rows FROM retired_file_parts WHERE path = ?2",
    )?
    .execute(params![id, file.path])?;
    Ok(())
}
