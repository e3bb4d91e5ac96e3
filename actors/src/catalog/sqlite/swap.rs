//! Compaction's catalog side in SQLite: merged files' parts, and the swap of data files.

use rusqlite::{params, Connection, OptionalExtension, Transaction};

use crate::catalog::refusal::commit_conflict;
use crate::catalog::{now_text, FilePart, FileSwap, PartsOf, SwapFile};
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

/// See [`crate::catalog::interface::ManifestCatalog::swap_files`]; inside its transaction.
pub(super) fn swap_files(tx: &Transaction<'_>, swap: &FileSwap) -> Result<Option<Vec<String>>> {
    let mut dropped = Vec::with_capacity(swap.removed.len());
    {
        let mut path_of = tx.prepare_cached(
            "SELECT path FROM data_files WHERE id = ?1 AND dataset_id = ?2 AND version = ?3",
        )?;
        for id in &swap.removed {
            let path: Option<String> = path_of
                .query_row(params![id, swap.dataset_id, swap.version], |r| r.get(0))
                .optional()?;
            match path {
                Some(path) => dropped.push(path),
                None => return Err(commit_conflict(swap.dataset_id, swap.version)),
            }
        }
    }
    if let Some(raw) = &swap.raw_deleted {
        match delete_raw(tx, swap, raw)? {
            Some(paths) => dropped.extend(paths),
            None => return Ok(None),
        }
    }
    for file in &swap.added {
        record_added(tx, swap, file)?;
    }
    // Their parts go with them (cascade); keys name raw files and stay.
    let mut delete = tx.prepare_cached("DELETE FROM data_files WHERE id = ?1")?;
    for id in &swap.removed {
        delete.execute([id])?;
    }
    Ok(Some(dropped))
}

/// The raw file's row and the data files it alone contributed; `None` when there is no such raw
/// file.
fn delete_raw(tx: &Transaction<'_>, swap: &FileSwap, raw: &str) -> Result<Option<Vec<String>>> {
    let n = tx.execute(
        "DELETE FROM raw_files WHERE dataset_id = ?1 AND version = ?2 AND raw_filename = ?3",
        params![swap.dataset_id, swap.version, raw],
    )?;
    if n == 0 {
        return Ok(None);
    }
    super::unique_keys::drop_raw_keys(tx, swap.dataset_id, swap.version, raw)?;
    let mut stmt = tx.prepare_cached(
        "DELETE FROM data_files WHERE dataset_id = ?1 AND version = ?2 AND raw_filename = ?3
         RETURNING path",
    )?;
    let paths = stmt
        .query_map(params![swap.dataset_id, swap.version, raw], |r| r.get(0))?
        .collect::<Result<Vec<String>, _>>()?;
    Ok(Some(paths))
}

/// One added file: its row (a merged file names no single raw file: "") and its parts.
fn record_added(tx: &Transaction<'_>, swap: &FileSwap, file: &SwapFile) -> Result<()> {
    tx.prepare_cached(
        "INSERT INTO data_files (dataset_id, version, raw_filename, partition_path, path, rows, bytes, created_at, stats)
         VALUES (?1, ?2, '', ?3, ?4, ?5, ?6, ?7, ?8)",
    )?
    .execute(params![
        swap.dataset_id,
        swap.version,
        file.partition_path,
        file.path,
        file.rows,
        file.bytes,
        now_text(),
        file.stats
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
