//! Compaction's catalog side in SQLite: merged files' parts, and the swap of data files.

use rusqlite::{params, Connection, Transaction};

use super::history;

use crate::catalog::refusal::commit_conflict;
use crate::catalog::{now_text, CommitOperation, FilePart, FileSwap, PartsOf, SwapFile};
use crate::error::Result;

fn part(r: &rusqlite::Row<'_>) -> rusqlite::Result<(i64, FilePart)> {
    Ok((
        r.get(0)?,
        FilePart {
            raw_filename: r.get(1)?,
            first_row: r.get(2)?,
            rows: r.get(3)?,
        },
    ))
}

/// See [`crate::catalog::interface::ManifestCatalog::file_parts`].
pub(super) fn file_parts(conn: &Connection, of: PartsOf<'_>) -> Result<Vec<(i64, FilePart)>> {
    let parts = match of {
        PartsOf::Holding {
            dataset_id,
            version,
            raw_filename,
        } => conn
            .prepare_cached(
                "SELECT p.data_file_id, p.raw_filename, p.first_row, p.rows
                 FROM data_file_parts p JOIN data_files f ON f.id = p.data_file_id
                 WHERE f.dataset_id = ?1 AND f.version = ?2 AND p.data_file_id IN
                       (SELECT data_file_id FROM data_file_parts WHERE raw_filename = ?3)
                 ORDER BY p.data_file_id, p.first_row",
            )?
            .query_map(params![dataset_id, version, raw_filename], part)?
            .collect::<Result<Vec<_>, _>>()?,
        PartsOf::Files(ids) => {
            let mut stmt = conn.prepare_cached(
                "SELECT data_file_id, raw_filename, first_row, rows FROM data_file_parts
                 WHERE data_file_id = ?1 ORDER BY first_row",
            )?;
            let mut parts = Vec::new();
            for id in ids {
                for p in stmt.query_map([id], part)? {
                    parts.push(p?);
                }
            }
            parts
        }
    };
    Ok(parts)
}

/// See [`crate::catalog::interface::ManifestCatalog::swap_files`]; inside its transaction. One
/// commit: COMPACT (same rows) or DELETE (a raw file's rows gone).
pub(super) fn swap_files(tx: &Transaction<'_>, swap: &FileSwap) -> Result<Option<Vec<String>>> {
    {
        let mut present = tx.prepare_cached(
            "SELECT 1 FROM data_files WHERE id = ?1 AND dataset_id = ?2 AND version = ?3",
        )?;
        for id in &swap.removed {
            if !present.exists(params![id, swap.dataset_id, swap.version])? {
                return Err(commit_conflict(swap.dataset_id, swap.version));
            }
        }
    }
    let number = history::latest_commit(tx, swap.dataset_id, swap.version)? + 1;
    let mut dropped = Vec::with_capacity(swap.removed.len());
    if let Some(raw) = &swap.raw_deleted {
        match delete_raw(tx, swap, raw, number)? {
            Some(gone) => dropped.extend(gone),
            None => return Ok(None),
        }
    }
    for file in &swap.added {
        record_added(tx, swap, file, number)?;
    }
    // Their parts go with them (cascade); keys name raw files and stay.
    for id in &swap.removed {
        dropped.extend(history::retire_where(tx, "id = ?1", &[id], number)?);
    }
    let removed: i64 = dropped.iter().map(|(_, rows)| rows).sum();
    let added: i64 = swap.added.iter().map(|f| f.rows).sum();
    history::record(
        tx,
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
    tx: &Transaction<'_>,
    swap: &FileSwap,
    raw: &str,
    number: i64,
) -> Result<Option<Vec<(String, i64)>>> {
    let n = tx.execute(
        "DELETE FROM raw_files WHERE dataset_id = ?1 AND version = ?2 AND raw_filename = ?3",
        params![swap.dataset_id, swap.version, raw],
    )?;
    if n == 0 {
        return Ok(None);
    }
    super::unique_keys::drop_raw_keys(tx, swap.dataset_id, swap.version, raw)?;
    let gone = history::retire_where(
        tx,
        "dataset_id = ?1 AND version = ?2 AND raw_filename = ?3",
        &[&swap.dataset_id, &swap.version, &raw],
        number,
    )?;
    Ok(Some(gone))
}

/// One added file: its row (a merged file names no single raw file: "") and its parts.
fn record_added(tx: &Transaction<'_>, swap: &FileSwap, file: &SwapFile, number: i64) -> Result<()> {
    tx.prepare_cached(
        "INSERT INTO data_files (dataset_id, version, raw_filename, partition_path, path, rows, bytes, created_at, stats, added_commit)
         VALUES (?1, ?2, '', ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )?
    .execute(params![
        swap.dataset_id,
        swap.version,
        file.partition_path,
        file.path,
        file.rows,
        file.bytes,
        now_text(),
        file.stats,
        number
    ])?;
    let id = tx.last_insert_rowid();
    let mut part = tx.prepare_cached(
        "INSERT INTO data_file_parts (data_file_id, raw_filename, first_row, rows) VALUES (?1, ?2, ?3, ?4)",
    )?;
    for p in &file.parts {
        part.execute(params![id, p.raw_filename, p.first_row, p.rows])?;
    }
    Ok(())
}
