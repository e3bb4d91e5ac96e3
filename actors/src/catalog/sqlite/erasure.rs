//! Erasure in SQLite (`DELETE ...?erase=true`): the retired files holding a raw file's rows,
//! and their replacement or removal in every commit that lists them (see
//! [`crate::catalog::interface::HistoryCatalog::erase_retired`]).

use rusqlite::{params, Connection, Transaction};

use super::rows::data_file;
use crate::catalog::{FilePart, RetiredHolding, RetiredRewrite};
use crate::error::Result;

/// See [`HistoryCatalog::retired_holding`].
pub(super) fn retired_holding(
    conn: &Connection,
    dataset_id: i64,
    version: i64,
    raw: &str,
) -> Result<Vec<RetiredHolding>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, raw_filename, partition_path, path, rows, bytes, stats FROM retired_files
         WHERE dataset_id = ?1 AND version = ?2
           AND (raw_filename = ?3 OR path IN (SELECT path FROM retired_file_parts
                                              WHERE dataset_id = ?1 AND raw_filename = ?3))
         ORDER BY path, id",
    )?;
    let mut files = stmt
        .query_map(params![dataset_id, version, raw], data_file)?
        .collect::<Result<Vec<_>, _>>()?;
    files.dedup_by(|a, b| a.path == b.path);
    let mut parts = conn.prepare_cached(
        "SELECT raw_filename, first_row, rows FROM retired_file_parts
         WHERE dataset_id = ?1 AND path = ?2 ORDER BY first_row",
    )?;
    let mut held = Vec::with_capacity(files.len());
    for file in files {
        let parts = parts
            .query_map(params![dataset_id, file.path], |r| {
                Ok(FilePart {
                    raw_filename: r.get(0)?,
                    first_row: r.get(1)?,
                    rows: r.get(2)?,
                })
            })?
            .collect::<Result<Vec<_>, _>>()?;
        held.push(RetiredHolding { file, parts });
    }
    Ok(held)
}

/// See [`HistoryCatalog::erase_retired`]; inside its transaction.
pub(super) fn erase_retired(
    tx: &Transaction<'_>,
    dataset_id: i64,
    version: i64,
    raw: &str,
    rewrites: &[RetiredRewrite],
) -> Result<Vec<String>> {
    let marked = tx.execute(
        "UPDATE commits SET operation = 'ERASE'
         WHERE dataset_id = ?1 AND version = ?2 AND commit_no =
               (SELECT max(commit_no) FROM commits WHERE dataset_id = ?1 AND version = ?2
                AND raw_filename = ?3 AND operation IN ('DELETE', 'ERASE'))",
        params![dataset_id, version, raw],
    )?;
    if marked == 0 {
        return Err(crate::error::Error::not_found(format!(
            "No deletion of [{raw}] to erase"
        )));
    }
    for change in rewrites {
        tx.execute(
            "DELETE FROM retired_file_parts WHERE dataset_id = ?1 AND path = ?2",
            params![dataset_id, change.path],
        )?;
        match &change.rewrite {
            None => {
                tx.execute(
                    "DELETE FROM retired_files WHERE dataset_id = ?1 AND version = ?2 AND path = ?3",
                    params![dataset_id, version, change.path],
                )?;
            }
            Some(file) => {
                tx.execute(
                    "UPDATE retired_files SET raw_filename = '', path = ?4, rows = ?5, bytes = ?6,
                                              stats = ?7
                     WHERE dataset_id = ?1 AND version = ?2 AND path = ?3",
                    params![
                        dataset_id,
                        version,
                        change.path,
                        file.path,
                        file.rows,
                        file.bytes,
                        file.stats
                    ],
                )?;
                let mut part = tx.prepare_cached(
                    "INSERT INTO retired_file_parts (dataset_id, path, raw_filename, first_row, rows)
                     VALUES (?1, ?2, ?3, ?4, ?5)",
                )?;
                for p in &file.parts {
                    part.execute(params![
                        dataset_id,
                        file.path,
                        p.raw_filename,
                        p.first_row,
                        p.rows
                    ])?;
                }
            }
        }
    }
    let mut listed = tx.prepare_cached(
        "SELECT EXISTS (SELECT 1 FROM data_files WHERE path = ?1)
             OR EXISTS (SELECT 1 FROM retired_files WHERE path = ?1)",
    )?;
    let mut unneeded = Vec::new();
    for change in rewrites {
        if !listed.query_row([&change.path], |r| r.get::<_, bool>(0))? {
            unneeded.push(change.path.clone());
        }
    }
    Ok(unneeded)
}
