//! Compaction's catalog side in PostgreSQL: merged files' parts, and the swap of data files,
//! under the dataset's lock like every other change of its manifest.

use super::lock_dataset_id;
use super::pool::Db;
use crate::catalog::refusal::commit_conflict;
use crate::catalog::{now_text, FilePart, FileSwap, PartsOf, SwapFile};
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

/// See [`crate::catalog::interface::ManifestCatalog::swap_files`]; inside its transaction.
pub(super) fn swap_files(db: &Db<'_>, swap: &FileSwap) -> Result<Option<Vec<String>>> {
    lock_dataset_id(db, swap.dataset_id, false)?;
    let mut dropped = Vec::with_capacity(swap.removed.len());
    for id in &swap.removed {
        let row = db.query_opt(
            "SELECT path FROM data_files WHERE id = $1 AND dataset_id = $2 AND version = $3",
            &[id, &swap.dataset_id, &swap.version],
        )?;
        match row {
            Some(row) => dropped.push(row.try_get(0)?),
            None => return Err(commit_conflict(swap.dataset_id, swap.version)),
        }
    }
    if let Some(raw) = &swap.raw_deleted {
        match delete_raw(db, swap, raw)? {
            Some(paths) => dropped.extend(paths),
            None => return Ok(None),
        }
    }
    for file in &swap.added {
        record_added(db, swap, file)?;
    }
    // Their parts go with them (cascade); keys name raw files and stay.
    db.execute(
        "DELETE FROM data_files WHERE id = ANY($1)",
        &[&swap.removed],
    )?;
    Ok(Some(dropped))
}

/// The raw file's row and the data files it alone contributed; `None` when there is no such raw
/// file.
fn delete_raw(db: &Db<'_>, swap: &FileSwap, raw: &str) -> Result<Option<Vec<String>>> {
    let n = db.execute(
        "DELETE FROM raw_files WHERE dataset_id = $1 AND version = $2 AND raw_filename = $3",
        &[&swap.dataset_id, &swap.version, &raw],
    )?;
    if n == 0 {
        return Ok(None);
    }
    super::unique_keys::drop_raw_keys(db, swap.dataset_id, swap.version, raw)?;
    let paths = db
        .query(
            "DELETE FROM data_files WHERE dataset_id = $1 AND version = $2 AND raw_filename = $3
             RETURNING path",
            &[&swap.dataset_id, &swap.version, &raw],
        )?
        .iter()
        .map(|r| r.try_get(0))
        .collect::<Result<Vec<String>, _>>()?;
    Ok(Some(paths))
}

/// One added file: its row (a merged file names no single raw file: "") and its parts.
fn record_added(db: &Db<'_>, swap: &FileSwap, file: &SwapFile) -> Result<()> {
    let id: i64 = db
        .query_one(
            "INSERT INTO data_files (dataset_id, version, raw_filename, partition_path, path, rows, bytes, created_at, stats)
             VALUES ($1, $2, '', $3, $4, $5, $6, $7, $8) RETURNING id",
            &[
                &swap.dataset_id,
                &swap.version,
                &file.partition_path,
                &file.path,
                &file.rows,
                &file.bytes,
                &now_text(),
                &file.stats,
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
