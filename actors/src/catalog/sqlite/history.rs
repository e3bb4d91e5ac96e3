//! Commits as versions in SQLite: the numbered commits of each version, files retired by a
//! commit instead of deleted, reads as of a commit, and retention (see
//! [`crate::catalog::interface::HistoryCatalog`]).

use rusqlite::{params, Connection, OptionalExtension, Transaction};

use super::rows::data_file;
use crate::catalog::refusal::{commit_expired, no_such_commit};
use crate::catalog::{now_text, AsOf, CommitOperation, DataFile, Retention, UploadCommit};
use crate::error::Result;

pub(super) fn data_files(
    conn: &Connection,
    dataset_id: i64,
    version: i64,
) -> Result<Vec<DataFile>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, raw_filename, partition_path, path, rows, bytes, stats FROM data_files
         WHERE dataset_id = ?1 AND version = ?2 ORDER BY id",
    )?;
    let files = stmt
        .query_map(params![dataset_id, version], data_file)?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(files)
}

/// The version's newest commit number (0: none yet).
pub(super) fn latest_commit(conn: &Connection, dataset_id: i64, version: i64) -> Result<i64> {
    Ok(conn
        .prepare_cached(
            "SELECT coalesce(max(commit_no), 0) FROM commits WHERE dataset_id = ?1 AND version = ?2",
        )?
        .query_row(params![dataset_id, version], |r| r.get(0))?)
}

/// One commit's row, numbered `number` (from [`latest_commit`] + 1 inside the same transaction).
pub(super) struct NewCommit<'a> {
    pub dataset_id: i64,
    pub version: i64,
    pub number: i64,
    pub operation: CommitOperation,
    pub subject: Option<&'a str>,
    pub raw_filename: Option<&'a str>,
    pub rows_added: i64,
    pub rows_removed: i64,
}

pub(super) fn record(tx: &Transaction<'_>, c: &NewCommit<'_>) -> Result<()> {
    tx.prepare_cached(
        "INSERT INTO commits (dataset_id, version, commit_no, committed_at, operation, subject,
                              raw_filename, rows_added, rows_removed)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )?
    .execute(params![
        c.dataset_id,
        c.version,
        c.number,
        now_text(),
        c.operation.as_str(),
        c.subject,
        c.raw_filename,
        c.rows_added,
        c.rows_removed
    ])?;
    Ok(())
}

/// An upload's commit row; its subject is its job's (who sent the upload).
pub(super) fn record_upload(
    tx: &Transaction<'_>,
    commit: &UploadCommit,
    number: i64,
    rows_removed: i64,
) -> Result<()> {
    let subject: Option<String> = tx
        .prepare_cached("SELECT subject_id FROM jobs WHERE job_id = ?1")?
        .query_row([&commit.job_id], |r| r.get(0))
        .optional()?;
    record(
        tx,
        &NewCommit {
            dataset_id: commit.dataset_id,
            version: commit.version,
            number,
            operation: commit.operation,
            subject: subject.as_deref(),
            raw_filename: Some(&commit.raw_filename),
            rows_added: commit.files.iter().map(|f| f.rows).sum(),
            rows_removed,
        },
    )
}

/// Moves the live files `filter` selects (a `WHERE` over `data_files`, parameters `?1`...) to
/// `retired_files`, removed by commit `number`; returns their (path, rows). Their parts go
/// (cascade): only a current file's rows are ever deleted by raw file.
pub(super) fn retire_where(
    tx: &Transaction<'_>,
    filter: &str,
    args: &[&dyn rusqlite::ToSql],
    number: i64,
) -> Result<Vec<(String, i64)>> {
    let n = args.len() + 1;
    tx.prepare_cached(&format!(
        "INSERT INTO retired_files (id, dataset_id, version, raw_filename, partition_path, path,
                                    rows, bytes, stats, added_commit, removed_commit)
         SELECT id, dataset_id, version, raw_filename, partition_path, path, rows, bytes, stats,
                added_commit, ?{n} FROM data_files WHERE {filter}"
    ))?
    .execute(rusqlite::params_from_iter(
        args.iter()
            .copied()
            .chain([&number as &dyn rusqlite::ToSql]),
    ))?;
    // A merged file's parts, kept by path (the same file retired again has the same parts).
    tx.prepare_cached(&format!(
        "INSERT OR IGNORE INTO retired_file_parts (dataset_id, path, raw_filename, first_row, rows)
         SELECT f.dataset_id, f.path, p.raw_filename, p.first_row, p.rows
         FROM data_file_parts p JOIN data_files f ON f.id = p.data_file_id
         WHERE p.data_file_id IN (SELECT id FROM data_files WHERE {filter})"
    ))?
    .execute(rusqlite::params_from_iter(args.iter().copied()))?;
    let mut stmt = tx.prepare_cached(&format!(
        "DELETE FROM data_files WHERE {filter} RETURNING path, rows"
    ))?;
    let gone = stmt
        .query_map(rusqlite::params_from_iter(args.iter().copied()), |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(gone)
}

/// The commit `at` names (checked against the version's commits and retention).
pub(super) fn resolve(conn: &Connection, dataset_id: i64, version: i64, at: &AsOf) -> Result<i64> {
    let latest = latest_commit(conn, dataset_id, version)?;
    let asked = match at {
        AsOf::Latest => return Ok(latest),
        AsOf::Commit(n) if (1..=latest).contains(n) => *n,
        AsOf::Commit(n) => return Err(no_such_commit(&n.to_string(), latest)),
        AsOf::Time(time) => conn
            .prepare_cached(
                "SELECT max(commit_no) FROM commits
                 WHERE dataset_id = ?1 AND version = ?2 AND committed_at <= ?3",
            )?
            .query_row(params![dataset_id, version, time], |r| {
                r.get::<_, Option<i64>>(0)
            })?
            .ok_or_else(|| no_such_commit(&format!("at or before {time}"), latest))?,
    };
    let floor = floor(conn, dataset_id, version)?;
    if asked < floor {
        return Err(commit_expired(asked, floor));
    }
    Ok(asked)
}

fn floor(conn: &Connection, dataset_id: i64, version: i64) -> Result<i64> {
    Ok(conn
        .prepare_cached(
            "SELECT history_floor FROM schema_versions WHERE dataset_id = ?1 AND version = ?2",
        )?
        .query_row(params![dataset_id, version], |r| r.get(0))
        .optional()?
        .unwrap_or(1))
}

/// The files live at commit `commit`, in the order they were recorded (as a current read's).
pub(super) fn files_at(
    conn: &Connection,
    dataset_id: i64,
    version: i64,
    commit: i64,
) -> Result<Vec<DataFile>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, raw_filename, partition_path, path, rows, bytes, stats FROM data_files
         WHERE dataset_id = ?1 AND version = ?2 AND added_commit <= ?3
         UNION ALL
         SELECT id, raw_filename, partition_path, path, rows, bytes, stats FROM retired_files
         WHERE dataset_id = ?1 AND version = ?2 AND added_commit <= ?3 AND removed_commit > ?3
         ORDER BY 1, 4",
    )?;
    let files = stmt
        .query_map(params![dataset_id, version, commit], data_file)?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(files)
}

/// The oldest commit `retention` keeps (the newest is always kept).
fn retained_from(
    conn: &Connection,
    dataset_id: i64,
    version: i64,
    latest: i64,
    retention: &Retention,
) -> Result<i64> {
    let by_count = latest - retention.keep_commits.max(1) + 1;
    let by_age: Option<i64> = conn
        .prepare_cached(
            "SELECT min(commit_no) FROM commits
             WHERE dataset_id = ?1 AND version = ?2 AND committed_at >= ?3",
        )?
        .query_row(params![dataset_id, version, retention.keep_since], |r| {
            r.get(0)
        })?;
    Ok(by_count.min(by_age.unwrap_or(latest)).max(1))
}

pub(super) fn expire(
    tx: &Transaction<'_>,
    dataset_id: i64,
    version: i64,
    retention: &Retention,
) -> Result<Vec<String>> {
    let latest = latest_commit(tx, dataset_id, version)?;
    if latest == 0 {
        return Ok(Vec::new());
    }
    let oldest = retained_from(tx, dataset_id, version, latest, retention)?;
    if oldest <= floor(tx, dataset_id, version)? {
        return Ok(Vec::new());
    }
    tx.execute(
        "UPDATE schema_versions SET history_floor = ?3 WHERE dataset_id = ?1 AND version = ?2",
        params![dataset_id, version, oldest],
    )?;
    // A file removed by commit `oldest` or before is listed by no commit from `oldest` on.
    let mut stmt = tx.prepare_cached(
        "DELETE FROM retired_files WHERE dataset_id = ?1 AND version = ?2 AND removed_commit <= ?3
         RETURNING path",
    )?;
    let mut paths = stmt
        .query_map(params![dataset_id, version, oldest], |r| r.get(0))?
        .collect::<Result<Vec<String>, _>>()?;
    // A file a rollback listed again (live, or retired by a later commit) is still needed.
    let mut listed = tx.prepare_cached(
        "SELECT EXISTS (SELECT 1 FROM data_files WHERE path = ?1)
             OR EXISTS (SELECT 1 FROM retired_files WHERE path = ?1)",
    )?;
    let mut unneeded = Vec::with_capacity(paths.len());
    for path in paths.drain(..) {
        if !listed.query_row([&path], |r| r.get::<_, bool>(0))? {
            unneeded.push(path);
        }
    }
    unneeded.sort();
    unneeded.dedup();
    let mut parts = tx.prepare_cached("DELETE FROM retired_file_parts WHERE path = ?1")?;
    for path in &unneeded {
        parts.execute([path])?;
    }
    Ok(unneeded)
}
