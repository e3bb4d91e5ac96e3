//! Quarantine (`on_error=quarantine`, docs/API.md): the rows of an upload that break the schema
//! are written here, as CSV, while the valid rows go on to be committed. Each quarantined row
//! has the schema's columns (a value that failed to parse as it was received, the others as
//! stored), then `_row` (its row number in the upload) and `_problems` (why). The two extra
//! columns are ignored by an upload that has both, so a fixed quarantine file uploads as it is.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use arrow::array::{Array, AsArray, RecordBatch};
use arrow::datatypes::{Date32Type, Float64Type, Int64Type};

use super::problems::Record;
use crate::error::{Error, Result};
use crate::schema::{DataType, ValidColumn};

/// The quarantine file's name in the upload's staging folder.
pub(super) const QUARANTINE_FILE: &str = "quarantine.csv";

/// The extra columns of a quarantine file: the row number in the upload, and its problems.
pub const ROW_COLUMN: &str = "_row";
pub const PROBLEMS_COLUMN: &str = "_problems";

/// Where the quarantine of an upload staged in `staging` is written.
pub fn quarantine_path(staging: &Path) -> PathBuf {
    staging.join(QUARANTINE_FILE)
}

/// The rules whose value is the field as received (it did not become a stored value).
fn received_value(record: &Record) -> Option<&str> {
    match record.place.rule {
        "type" | "encoding" | "null" => record.place.value.as_deref(),
        _ => None,
    }
}

/// The quarantine being written; the file is created with the first rejected row.
pub(super) struct QuarantineWriter {
    path: PathBuf,
    out: Option<csv::Writer<BufWriter<File>>>,
    columns: Vec<ValidColumn>,
    rows: u64,
}

impl QuarantineWriter {
    pub(super) fn new(staging: &Path, columns: &[ValidColumn]) -> QuarantineWriter {
        QuarantineWriter {
            path: quarantine_path(staging),
            out: None,
            columns: columns.to_vec(),
            rows: 0,
        }
    }

    /// Writes the rows of `batch` (numbered from `first_row`) named in `rejected`, each with
    /// the problems found in it, in row order.
    pub(super) fn write(
        &mut self,
        batch: &RecordBatch,
        first_row: u64,
        rejected: &BTreeMap<u64, Vec<&Record>>,
    ) -> Result<()> {
        if rejected.is_empty() {
            return Ok(());
        }
        if self.out.is_none() {
            let file = File::create(part_path(&self.path))?;
            let mut w = csv::Writer::from_writer(BufWriter::new(file));
            let mut header: Vec<&str> = self.columns.iter().map(|c| c.name.as_str()).collect();
            header.extend([ROW_COLUMN, PROBLEMS_COLUMN]);
            w.write_record(&header).map_err(quarantine_error)?;
            self.out = Some(w);
        }
        let Some(out) = self.out.as_mut() else {
            return Ok(());
        };
        for (row, records) in rejected {
            let Some(i) = row.checked_sub(first_row).map(|i| i as usize) else {
                continue;
            };
            if i >= batch.num_rows() {
                continue;
            }
            let mut cells: Vec<String> = Vec::with_capacity(self.columns.len() + 2);
            for (c, column) in self.columns.iter().enumerate() {
                let received = records
                    .iter()
                    .filter(|r| r.place.column == column.name)
                    .find_map(|r| received_value(r));
                cells.push(match received {
                    Some(v) => v.to_string(),
                    None => stored_text(column, batch.column(c).as_ref(), i),
                });
            }
            cells.push(row.to_string());
            let reasons: Vec<&str> = records.iter().map(|r| r.message.as_str()).collect();
            cells.push(reasons.join("; "));
            out.write_record(&cells).map_err(quarantine_error)?;
            self.rows += 1;
        }
        Ok(())
    }

    /// Rows quarantined so far.
    pub(super) fn rows(&self) -> u64 {
        self.rows
    }

    /// Syncs the file and gives it its name; `true` when there is one.
    pub(super) fn finish(mut self) -> Result<bool> {
        let Some(out) = self.out.take() else {
            return Ok(false);
        };
        let file = out
            .into_inner()
            .map_err(quarantine_error)?
            .into_inner()
            .map_err(quarantine_error)?;
        file.sync_all()?;
        std::fs::rename(part_path(&self.path), &self.path)?;
        Ok(true)
    }
}

/// The `i`th value of `array` as an upload would write it: dates in the column's format, so
/// that the row uploads again against the same schema; a null as an empty field.
fn stored_text(column: &ValidColumn, array: &dyn Array, i: usize) -> String {
    if array.is_null(i) {
        return String::new();
    }
    match column.data_type {
        DataType::Int => array.as_primitive::<Int64Type>().value(i).to_string(),
        DataType::Double => array.as_primitive::<Float64Type>().value(i).to_string(),
        DataType::String => array.as_string::<i32>().value(i).to_string(),
        DataType::Boolean => array.as_boolean().value(i).to_string(),
        DataType::Date => {
            let days = array.as_primitive::<Date32Type>().value(i);
            let date =
                chrono::NaiveDate::from_num_days_from_ce_opt(days + super::EPOCH_DAYS_FROM_CE);
            match (date, column.format) {
                (Some(d), Some(f)) => d.format(f.as_str()).to_string(),
                _ => super::date32_to_string(days),
            }
        }
    }
}

fn part_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".part");
    PathBuf::from(name)
}

fn quarantine_error(e: impl std::fmt::Display) -> Error {
    Error::internal(format!("writing the upload's quarantine: {e}"))
}

impl super::Validator {
    /// A checked batch of a quarantining upload: rows with problems go to the quarantine file,
    /// the others to the staged files. Uniqueness is checked among kept rows only. A problem
    /// with no row (a Parquet column of another type), or more in a batch than are recorded,
    /// cannot be quarantined row by row: from then on the upload is refused as in reject mode.
    pub(super) fn accept_quarantining(
        &mut self,
        batch: RecordBatch,
        first_row: u64,
        parsed: super::Problems,
        checked: Vec<super::Problems>,
    ) -> Result<()> {
        let mut found = parsed;
        checked.into_iter().for_each(|p| found.append(p));
        let (mut records, mut unrecorded) = found.take_records();
        let mut skipped = vec![false; batch.num_rows()];
        let mut whole_file = mark_rows(&records, first_row, &mut skipped);
        for (i, unique) in self.unique.iter_mut().enumerate() {
            if let Some(u) = unique {
                u.observe_except(batch.column(i), first_row, &skipped, &mut found);
                let (clashes, more) = found.take_records();
                unrecorded += more;
                whole_file |= mark_rows(&clashes, first_row, &mut skipped);
                records.extend(clashes);
            }
        }
        if unrecorded > 0 {
            let last = first_row + batch.num_rows() as u64 - 1;
            found.add(|| {
                format!(
                    "Rows {first_row} to {last} have too many problems to quarantine them row \
                     by row: the file was refused"
                )
            });
            whole_file = true;
        }
        if !whole_file {
            self.quarantined_problems += found.total();
        }
        self.problems.append(found);
        self.rows += batch.num_rows() as u64;
        let writer = self.writer.take();
        match (whole_file, writer, self.quarantine.as_mut()) {
            (false, Some(w), Some(q)) => {
                let mut by_row: BTreeMap<u64, Vec<&Record>> = BTreeMap::new();
                for r in &records {
                    if let Some(row) = r.place.row {
                        by_row.entry(row).or_default().push(r);
                    }
                }
                q.write(&batch, first_row, &by_row)?;
                let kept: arrow::array::BooleanArray = skipped.iter().map(|s| Some(!s)).collect();
                let kept = arrow::compute::filter_record_batch(&batch, &kept)
                    .map_err(|e| Error::internal(format!("keeping the valid rows: {e}")))?;
                self.profiler.observe(&kept);
                self.writer = Some(if kept.num_rows() > 0 {
                    w.write(kept)?
                } else {
                    w
                });
            }
            (_, Some(w), _) => {
                // Refused after all: the staged files go with the staging folder.
                let _ = w.finish();
            }
            _ => {}
        }
        self.report
            .write(records, unrecorded, Some((&batch, first_row)))
    }

    /// The end of a quarantining upload: refused when a problem was not quarantined or no row
    /// is left to store; otherwise the report and the quarantine file are kept beside the staged
    /// files, and the output says how many rows were kept apart.
    pub(super) fn finish_quarantining(mut self) -> Result<super::StagedOutput> {
        let Some(quarantine) = self.quarantine.take() else {
            return Err(Error::internal("finishing a quarantine that never started"));
        };
        let rejected = quarantine.rows();
        if rejected > 0 && rejected == self.rows {
            self.problems.add(|| {
                "Every row of the file has problems, so there is nothing to store: the file was \
                 refused"
                    .into()
            });
        }
        if self.problems.total() != self.quarantined_problems {
            return Err(self.refuse()?);
        }
        let quarantined = if rejected > 0 {
            self.report.finish()?;
            quarantine.finish()?;
            Some(super::Quarantined {
                rows_rejected: rejected,
                problems: self.quarantined_problems,
            })
        } else {
            None
        };
        self.staged(quarantined)
    }
}

/// Marks in `skipped` the rows of `records` (rows numbered from `first_row`); `true` when one
/// of them has no row in this batch (a problem of the whole file or column).
fn mark_rows(records: &[Record], first_row: u64, skipped: &mut [bool]) -> bool {
    let mut outside = false;
    for r in records {
        let i = r.place.row.and_then(|row| row.checked_sub(first_row));
        match i.map(|i| i as usize).filter(|i| *i < skipped.len()) {
            Some(i) => skipped[i] = true,
            None => outside = true,
        }
    }
    outside
}

/// Which header columns an upload ignores: `_row` and `_problems`, when the header has both
/// (a quarantine file uploaded again).
pub(super) fn extra_columns(headers: &[String]) -> Vec<bool> {
    let is_extra = |h: &String| matches!(h.trim(), ROW_COLUMN | PROBLEMS_COLUMN);
    let both = headers.iter().filter(|h| is_extra(h)).count() == 2;
    headers.iter().map(|h| both && is_extra(h)).collect()
}

#[cfg(test)]
#[path = "quarantine_tests.rs"]
mod tests;
