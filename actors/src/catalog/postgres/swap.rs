//! Compaction's catalog side in PostgreSQL: merged files' parts, and the swap of data files,
//! under the dataset's lock like every other change of its manifest.

use super::pool::Db;
use super::{history, lock_dataset_id};
use crate::catalog::refusal::commit_conflict;
use crate::catalog::{now_text, CommitOperation, FilePart, FileSwap, PartsOf, SwapFile};
use crate::error::Result;

/// See [`crate::catalog::interface::ManifestCatalog::file_parts`].
pub(super) fn file_parts(db: &Db<'_>, of: PartsOf<'_>) -> Result<Vec<(i64, FilePart)>> {
    let rows = match of {
        PartsOf::Holding {
            dataset_id,
            version,
            raw_filename,
        } => db.query(
            "SELECT p.data_file_id, p.raw_filename, p.first_row, p.rows
             FROM data_file_parts p JOIN data_files f ON f.id = p.data_file_id
             WHERE f.dataset_id = $1 AND f.version = $2 AND p.data_file_id IN
                   (SELECT data_file_id FROM data_file_parts WHERE raw_filename = $3)
             ORDER BY p.data_file_id, p.first_row",
            &[&dataset_id, &version, &raw_filename],
        )?,
        PartsOf::Files(ids) => db.query(
            "SELECT data_file_id, raw_filename, first_row, rows FROM data_file_parts
             WHERE data_file_id = ANY($1) ORDER BY data_file_id, first_row",
            &[&ids],
        )?,
    };
    rows.iter()
        .map(|r| {
            Ok((
                r.try_get(0)?,
                FilePart {
                    raw_filename: r.try_get(1)?,
                    first_row: r.try_get(2)?,
                    rows: r.try_get(3)?,
                },
            ))
        })
        .collect()
}

/// See [`crate::catalog::interface::ManifestCatalog::swap_files`]; inside its transaction. One
/// commit: COMPACT (same rows) or DELETE (a raw file's rows gone).
pub(super) fn swap_files(db: &Db<'_>, swap: &FileSwap) -> Result<Option<Vec<String>>> {
    lock_dataset_id(db, swap.dataset_id, false)?;
    let mut wanted = swap.removed.clone();
    wanted.sort_unstable();
    wanted.dedup();
    let present = db
        .query_one(
            "SELECT count(*) FROM data_files WHERE id = ANY($1) AND dataset_id = $2 AND version = $3",
            &[&swap.removed, &swap.dataset_id, &swap.version],
        )?
        .try_get::<_, i64>(0)?;
    if present != wanted.len() as i64 {
        return Err(commit_conflict(swap.dataset_id, swap.version));
    }
    let number = history::latest_commit(db, swap.dataset_id, swap.version)? + 1;
    let mut dropped = Vec::with_capacity(swap.removed.len());
    if let Some(raw) = &swap.raw_deleted {
        match delete_raw(db, swap, raw, number)? {
            Some(gone) => dropped.extend(gone),
            None => return Ok(None),
        }
    }
    for file in &swap.added {
        record_added(db, swap, file, number)?;
    }
    // Their parts go with them (cascade); keys name raw files and stay.
    dropped.extend(history::retire_where(
        db,
        "id = ANY($2)",
        &[&swap.removed],
        number,
    )?);
    let removed: i64 = dropped.iter().map(|(_, rows)| rows).sum();
    let added: i64 = swap.added.iter().map(|f| f.rows).sum();
    history::record(
        db,
        &history::NewCommit {
            dataset_id: swap.dataset_id,
            version: swap.version,
            number,
            operation: match swap.raw_deleted {
                Some(_) => CommitOperation::Delete,
                None => CommitOperation::Compact,
            },
            subject: swap.subject.as_deref(),
            raw_filename: swap.raw_deleted.as_deref(),
            rows_added: (added - removed).max(0),
            rows_removed: (removed - added).max(0),
        },
    )?;
    Ok(Some(dropped.into_iter().map(|(path, _)| path).collect()))
}

/// The raw file's row, its keys, and the data files it alone contributed (retired by commit
/// `number`, returned with their rows); `None` when there is no such raw file.
fn delete_raw(
    db: &Db<'_>,
    swap: &FileSwap,
    raw: &str,
    number: i64,
) -> Result<Option<Vec<(String, i64)>>> {
    let n = db.execute(
        "DELETE FROM raw_files WHERE dataset_id = $1 AND version = $2 AND raw_filename = $3",
        &[&swap.dataset_id, &swap.version, &raw],
    )?;
    if n == 0 {
        return Ok(None);
    }
    super::unique_keys::drop_raw_keys(db, swap.dataset_id, swap.version, raw)?;
    let gone = history::retire_where(
        db,
        "dataset_id = $2 AND version = $3 AND raw_filename = $4",
        &[&swap.dataset_id, &swap.version, &raw],
        number,
    )?;
    Ok(Some(gone))
}

/// One added file: its row (a merged file names no single raw file: "") and its parts.
fn record_added(db: &Db<'_>, swap: &FileSwap, file: &SwapFile, number: i64) -> Result<()> {
    let id: i64 = db
        .query_one(
            "INSERT INTO data_files (dataset_id, version, raw_filename, partition_path, path, rows, bytes, created_at, stats, added_commit)
             VALUES ($1, $2, '', $3, $4, $5, $6, $7, $8, $9) RETURNING id",
            &[
                &swap.dataset_id,
                &swap.version,
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
    for p in &file.parts {
        db.execute(
            "INSERT INTO data_file_parts (data_file_id, raw_filename, first_row, rows)
             VALUES ($1, $2, $3, $4)",
            &[&id, &p.raw_filename, &p.first_row, &p.rows],
        )?;
    }
    Ok(())
}
