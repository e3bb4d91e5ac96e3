//! Erasure in PostgreSQL, as in SQLite (`sqlite/erasure.rs`): the retired files holding a raw
//! file's rows, and their replacement or removal in every commit that lists them.

use super::lock_dataset_id;
use super::pool::Db;
use super::rows::data_file;
use crate::catalog::{FilePart, RetiredHolding, RetiredRewrite};
use crate::error::Result;

/// See [`HistoryCatalog::retired_holding`].
pub(super) fn retired_holding(
    db: &Db<'_>,
    dataset_id: i64,
    version: i64,
    raw: &str,
) -> Result<Vec<RetiredHolding>> {
    let mut files = db
        .query(
            "SELECT id, raw_filename, partition_path, path, rows, bytes, stats FROM retired_files
             WHERE dataset_id = $1 AND version = $2
               AND (raw_filename = $3 OR path IN (SELECT path FROM retired_file_parts
                                                  WHERE dataset_id = $1 AND raw_filename = $3))
             ORDER BY path, id",
            &[&dataset_id, &version, &raw],
        )?
        .iter()
        .map(data_file)
        .collect::<Result<Vec<_>>>()?;
    files.dedup_by(|a, b| a.path == b.path);
    let mut held = Vec::with_capacity(files.len());
    for file in files {
        let parts = db
            .query(
                "SELECT raw_filename, first_row, rows FROM retired_file_parts
                 WHERE dataset_id = $1 AND path = $2 ORDER BY first_row",
                &[&dataset_id, &file.path],
            )?
            .iter()
            .map(|r| {
                Ok(FilePart {
                    raw_filename: r.try_get(0)?,
                    first_row: r.try_get(1)?,
                    rows: r.try_get(2)?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        held.push(RetiredHolding { file, parts });
    }
    Ok(held)
}

/// See [`HistoryCatalog::erase_retired`]; inside its transaction, under the dataset's lock.
pub(super) fn erase_retired(
    db: &Db<'_>,
    dataset_id: i64,
    version: i64,
    raw: &str,
    rewrites: &[RetiredRewrite],
) -> Result<Vec<String>> {
    lock_dataset_id(db, dataset_id, false)?;
    let marked = db.execute(
        "UPDATE commits SET operation = 'ERASE'
         WHERE dataset_id = $1 AND version = $2 AND commit_no =
               (SELECT max(commit_no) FROM commits WHERE dataset_id = $1 AND version = $2
                AND raw_filename = $3 AND operation IN ('DELETE', 'ERASE'))",
        &[&dataset_id, &version, &raw],
    )?;
    if marked == 0 {
        return Err(crate::error::Error::not_found(format!(
            "No deletion of [{raw}] to erase"
        )));
    }
    for change in rewrites {
        db.execute(
            "DELETE FROM retired_file_parts WHERE dataset_id = $1 AND path = $2",
            &[&dataset_id, &change.path],
        )?;
        match &change.rewrite {
            None => {
                db.execute(
                    "DELETE FROM retired_files WHERE dataset_id = $1 AND version = $2 AND path = $3",
                    &[&dataset_id, &version, &change.path],
                )?;
            }
            Some(file) => {
                db.execute(
                    "UPDATE retired_files SET raw_filename = '', path = $4, rows = $5, bytes = $6,
                                              stats = $7
                     WHERE dataset_id = $1 AND version = $2 AND path = $3",
                    &[
                        &dataset_id,
                        &version,
                        &change.path,
                        &file.path,
                        &file.rows,
                        &file.bytes,
                        &file.stats,
                    ],
                )?;
                for p in &file.parts {
                    db.execute(
                        "INSERT INTO retired_file_parts (dataset_id, path, raw_filename, first_row, rows)
                         VALUES ($1, $2, $3, $4, $5)",
                        &[&dataset_id, &file.path, &p.raw_filename, &p.first_row, &p.rows],
                    )?;
                }
            }
        }
    }
    let mut unneeded = Vec::new();
    for change in rewrites {
        let listed: bool = db
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM data_files WHERE path = $1)
                     OR EXISTS (SELECT 1 FROM retired_files WHERE path = $1)",
                &[&change.path],
            )?
            .try_get(0)?;
        if !listed {
            unneeded.push(change.path.clone());
        }
    }
    Ok(unneeded)
}
