//! Commits as versions in PostgreSQL, as in SQLite (`sqlite/history.rs`): numbered commits,
//! retired files, reads as of a commit and retention, under the dataset's advisory lock like
//! every other change of its manifest.

use super::erasure::{erase_retired, retired_holding};
use super::pool::Db;
use super::rows::data_file;
use super::{lock_dataset_id, PostgresCatalog};
use crate::catalog::interface::HistoryCatalog;
use crate::catalog::refusal::{commit_expired, no_such_commit, rollback_past_deletion};
use crate::catalog::{
    now_text, AsOf, Commit, CommitOperation, DataFile, FilesAt, Retention, RetiredHolding,
    RetiredRewrite, UploadCommit,
};
use crate::error::Result;

pub(super) fn data_files(db: &Db<'_>, dataset_id: i64, version: i64) -> Result<Vec<DataFile>> {
    db.query(
        "SELECT id, raw_filename, partition_path, path, rows, bytes, stats FROM data_files
         WHERE dataset_id = $1 AND version = $2 ORDER BY id",
        &[&dataset_id, &version],
    )?
    .iter()
    .map(data_file)
    .collect()
}

/// The version's newest commit number (0: none yet). Read under the dataset's lock when the
/// next number is taken from it (the primary key refuses a duplicate anyway).
pub(super) fn latest_commit(db: &Db<'_>, dataset_id: i64, version: i64) -> Result<i64> {
    Ok(db
        .query_one(
            "SELECT coalesce(max(commit_no), 0)::BIGINT FROM commits
             WHERE dataset_id = $1 AND version = $2",
            &[&dataset_id, &version],
        )?
        .try_get(0)?)
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

pub(super) fn record(db: &Db<'_>, c: &NewCommit<'_>) -> Result<()> {
    db.execute(
        "INSERT INTO commits (dataset_id, version, commit_no, committed_at, operation, subject,
                              raw_filename, rows_added, rows_removed)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        &[
            &c.dataset_id,
            &c.version,
            &c.number,
            &now_text(),
            &c.operation.as_str(),
            &c.subject,
            &c.raw_filename,
            &c.rows_added,
            &c.rows_removed,
        ],
    )?;
    Ok(())
}

/// An upload's commit row; its subject is its job's (who sent the upload).
pub(super) fn record_upload(
    db: &Db<'_>,
    commit: &UploadCommit,
    number: i64,
    rows_removed: i64,
) -> Result<()> {
    let subject: Option<String> = match db.query_opt(
        "SELECT subject_id FROM jobs WHERE job_id = $1",
        &[&commit.job_id],
    )? {
        Some(row) => row.try_get(0)?,
        None => None,
    };
    record(
        db,
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

/// Moves the live files `filter` selects (a `WHERE` over `data_files`, parameters `$2`...) to
/// `retired_files`, removed by commit `number` (`$1`); returns their (path, rows). Their parts go
/// (cascade): only a current file's rows are ever deleted by raw file.
pub(super) fn retire_where(
    db: &Db<'_>,
    filter: &str,
    args: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    number: i64,
) -> Result<Vec<(String, i64)>> {
    // A merged file's parts go with it, kept by path (the same file retired again has the same
    // parts); the statement's snapshot still sees them when the deletion cascades.
    let sql = format!(
        "WITH gone AS (DELETE FROM data_files WHERE {filter} RETURNING *),
         parts AS (INSERT INTO retired_file_parts (dataset_id, path, raw_filename, first_row, rows)
                   SELECT g.dataset_id, g.path, p.raw_filename, p.first_row, p.rows
                   FROM gone g JOIN data_file_parts p ON p.data_file_id = g.id
                   ON CONFLICT DO NOTHING)
         INSERT INTO retired_files (id, dataset_id, version, raw_filename, partition_path, path,
                                    rows, bytes, stats, added_commit, removed_commit)
         SELECT id, dataset_id, version, raw_filename, partition_path, path, rows, bytes, stats,
                added_commit, $1::BIGINT FROM gone
         RETURNING path, rows"
    );
    let mut params: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = vec![&number];
    params.extend_from_slice(args);
    db.query(&sql, &params)?
        .iter()
        .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
        .collect()
}

fn floor(db: &Db<'_>, dataset_id: i64, version: i64) -> Result<i64> {
    let row = db.query_opt(
        "SELECT history_floor FROM schema_versions WHERE dataset_id = $1 AND version = $2",
        &[&dataset_id, &version],
    )?;
    Ok(match row {
        Some(row) => row.try_get(0)?,
        None => 1,
    })
}

/// The commit `at` names (checked against the version's commits and retention).
fn resolve(db: &Db<'_>, dataset_id: i64, version: i64, at: &AsOf) -> Result<i64> {
    let latest = latest_commit(db, dataset_id, version)?;
    let asked = match at {
        AsOf::Latest => return Ok(latest),
        AsOf::Commit(n) if (1..=latest).contains(n) => *n,
        AsOf::Commit(n) => return Err(no_such_commit(&n.to_string(), latest)),
        AsOf::Time(time) => db
            .query_one(
                "SELECT max(commit_no) FROM commits
                 WHERE dataset_id = $1 AND version = $2 AND committed_at <= $3",
                &[&dataset_id, &version, time],
            )?
            .try_get::<_, Option<i64>>(0)?
            .ok_or_else(|| no_such_commit(&format!("at or before {time}"), latest))?,
    };
    let floor = floor(db, dataset_id, version)?;
    if asked < floor {
        return Err(commit_expired(asked, floor));
    }
    Ok(asked)
}

/// The files live at commit `commit`, in the order they were recorded (as a current read's).
fn files_at(db: &Db<'_>, dataset_id: i64, version: i64, commit: i64) -> Result<Vec<DataFile>> {
    db.query(
        "SELECT id, raw_filename, partition_path, path, rows, bytes, stats FROM data_files
         WHERE dataset_id = $1 AND version = $2 AND added_commit <= $3
         UNION ALL
         SELECT id, raw_filename, partition_path, path, rows, bytes, stats FROM retired_files
         WHERE dataset_id = $1 AND version = $2 AND added_commit <= $3 AND removed_commit > $3
         ORDER BY 1, 4",
        &[&dataset_id, &version, &commit],
    )?
    .iter()
    .map(data_file)
    .collect()
}

fn expire(
    db: &Db<'_>,
    dataset_id: i64,
    version: i64,
    retention: &Retention,
) -> Result<Vec<String>> {
    lock_dataset_id(db, dataset_id, false)?;
    let latest = latest_commit(db, dataset_id, version)?;
    if latest == 0 {
        return Ok(Vec::new());
    }
    let by_age: Option<i64> = db
        .query_one(
            "SELECT min(commit_no) FROM commits
             WHERE dataset_id = $1 AND version = $2 AND committed_at >= $3",
            &[&dataset_id, &version, &retention.keep_since],
        )?
        .try_get(0)?;
    let by_count = latest - retention.keep_commits.max(1) + 1;
    let oldest = by_count.min(by_age.unwrap_or(latest)).max(1);
    if oldest <= floor(db, dataset_id, version)? {
        return Ok(Vec::new());
    }
    db.execute(
        "UPDATE schema_versions SET history_floor = $3 WHERE dataset_id = $1 AND version = $2",
        &[&dataset_id, &version, &oldest],
    )?;
    // A file removed by commit `oldest` or before is listed by no commit from `oldest` on,
    // unless a rollback listed it again (live, or retired by a later commit).
    let mut unneeded = Vec::new();
    for row in db.query(
        "DELETE FROM retired_files WHERE dataset_id = $1 AND version = $2 AND removed_commit <= $3
         RETURNING path",
        &[&dataset_id, &version, &oldest],
    )? {
        let path: String = row.try_get(0)?;
        let listed: bool = db
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM data_files WHERE path = $1)
                     OR EXISTS (SELECT 1 FROM retired_files WHERE path = $1)",
                &[&path],
            )?
            .try_get(0)?;
        if !listed {
            unneeded.push(path);
        }
    }
    unneeded.sort();
    unneeded.dedup();
    db.execute(
        "DELETE FROM retired_file_parts WHERE path = ANY($1)",
        &[&unneeded],
    )?;
    Ok(unneeded)
}

/// See [`HistoryCatalog::rollback`]; inside its transaction, under the dataset's lock.
fn rollback(
    db: &Db<'_>,
    dataset_id: i64,
    version: i64,
    to: i64,
    subject: Option<&str>,
) -> Result<i64> {
    lock_dataset_id(db, dataset_id, false)?;
    let target = resolve(db, dataset_id, version, &AsOf::Commit(to))?;
    if let Some(row) = db.query_opt(
        "SELECT commit_no, raw_filename FROM commits
         WHERE dataset_id = $1 AND version = $2 AND commit_no > $3
           AND operation IN ('DELETE', 'ERASE')
         ORDER BY commit_no LIMIT 1",
        &[&dataset_id, &version, &target],
    )? {
        let raw: Option<String> = row.try_get(1)?;
        return Err(rollback_past_deletion(
            row.try_get(0)?,
            &raw.unwrap_or_default(),
        ));
    }
    let number = latest_commit(db, dataset_id, version)? + 1;
    let wanted = files_at(db, dataset_id, version, target)?;
    let live = data_files(db, dataset_id, version)?;
    let stale: Vec<i64> = live
        .iter()
        .filter(|f| !wanted.iter().any(|w| w.path == f.path))
        .map(|f| f.id)
        .collect();
    let gone = retire_where(db, "id = ANY($2)", &[&stale], number)?;
    let mut rows_added = 0;
    for file in wanted
        .iter()
        .filter(|w| !live.iter().any(|f| f.path == w.path))
    {
        relist(db, dataset_id, version, file, number)?;
        rows_added += file.rows;
    }
    // The index no longer matches the live rows: rebuilt from the files by the next commit that
    // checks a unique column (as for a version stored before the index existed).
    super::unique_keys::drop_version_keys(db, dataset_id, version)?;
    db.execute(
        "INSERT INTO unique_keys_pending (dataset_id, version) VALUES ($1, $2)
         ON CONFLICT DO NOTHING",
        &[&dataset_id, &version],
    )?;
    record(
        db,
        &NewCommit {
            dataset_id,
            version,
            number,
            operation: CommitOperation::Rollback,
            subject,
            raw_filename: None,
            rows_added,
            rows_removed: gone.iter().map(|(_, rows)| rows).sum(),
        },
    )?;
    Ok(number)
}

/// A retired file listed again by commit `number`, with its parts.
fn relist(db: &Db<'_>, dataset_id: i64, version: i64, file: &DataFile, number: i64) -> Result<()> {
    let id: i64 = db
        .query_one(
            "INSERT INTO data_files (dataset_id, version, raw_filename, partition_path, path, rows,
                                     bytes, created_at, stats, added_commit)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id",
            &[
                &dataset_id,
                &version,
                &file.raw_filename,
                &file.partition_path,
                &file.path,
                &file.rows,
                &file.bytes,
                &now_text(),
                &file.stats,
                &number,
            ],
        )?
        .try_get(0)?;
    db.execute(
        "INSERT INTO data_file_parts (data_file_id, raw_filename, first_row, rows)
         SELECT $1, raw_filename, first_row, rows FROM retired_file_parts WHERE path = $2",
        &[&id, &file.path],
    )?;
    Ok(())
}

impl HistoryCatalog for PostgresCatalog {
    fn commits(
        &self,
        dataset_id: i64,
        version: i64,
        offset: i64,
        limit: i64,
    ) -> Result<Vec<Commit>> {
        self.with(|db| {
            db.query(
                "SELECT commit_no, committed_at, operation, subject, raw_filename, rows_added,
                        rows_removed
                 FROM commits WHERE dataset_id = $1 AND version = $2
                 ORDER BY commit_no DESC LIMIT $3 OFFSET $4",
                &[&dataset_id, &version, &limit, &offset],
            )?
            .iter()
            .map(|r| {
                Ok(Commit {
                    commit: r.try_get(0)?,
                    committed_at: r.try_get(1)?,
                    operation: r.try_get(2)?,
                    subject: r.try_get(3)?,
                    raw_filename: r.try_get(4)?,
                    rows_added: r.try_get(5)?,
                    rows_removed: r.try_get(6)?,
                })
            })
            .collect()
        })
    }

    fn files_at_held(
        &self,
        dataset_id: i64,
        version: i64,
        at: &AsOf,
        hold: &mut dyn FnMut(&[DataFile]),
    ) -> Result<FilesAt> {
        // The dataset's lock, shared: neither a commit nor an expiry (exclusive) can return, and
        // so retire a file, before `hold` has leased the files.
        self.transaction(|db| {
            lock_dataset_id(db, dataset_id, true)?;
            let commit = resolve(db, dataset_id, version, at)?;
            let files = match at {
                // The live manifest: exactly what a current read has always scanned.
                AsOf::Latest => data_files(db, dataset_id, version)?,
                _ => files_at(db, dataset_id, version, commit)?,
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
        self.transaction(|db| expire(db, dataset_id, version, retention))
    }

    fn rollback(
        &self,
        dataset_id: i64,
        version: i64,
        to: i64,
        subject: Option<&str>,
    ) -> Result<i64> {
        self.transaction(|db| rollback(db, dataset_id, version, to, subject))
    }

    fn retired_holding(
        &self,
        dataset_id: i64,
        version: i64,
        raw_filename: &str,
    ) -> Result<Vec<RetiredHolding>> {
        self.with(|db| retired_holding(db, dataset_id, version, raw_filename))
    }

    fn erase_retired(
        &self,
        dataset_id: i64,
        version: i64,
        raw_filename: &str,
        rewrites: &[RetiredRewrite],
    ) -> Result<Vec<String>> {
        self.transaction(|db| erase_retired(db, dataset_id, version, raw_filename, rewrites))
    }

    fn versions_with_retired_files(&self) -> Result<Vec<(i64, i64)>> {
        self.with(|db| {
            db.query(
                "SELECT DISTINCT dataset_id, version FROM retired_files ORDER BY 1, 2",
                &[],
            )?
            .iter()
            .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
            .collect()
        })
    }
}
