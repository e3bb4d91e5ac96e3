//! The whole report of a refused upload: every problem as one CSV row (row, column, rule, value
//! as received, the row's key, message), written while validating, batch by batch, so its size is
//! bounded by disk and [`MAX_REPORT_ROWS`], never by memory. The 422 answer keeps its first 100
//! messages; the engine keeps this file with the job and links it.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use arrow::array::{Array, RecordBatch};
use arrow::util::display::{ArrayFormatter, FormatOptions};

use super::problems::{Record, MAX_RECORDS};
use crate::error::{Error, Result};

/// The report's name in the upload's staging folder.
pub const REPORT_FILE: &str = "problems.csv";

/// Problems listed at most; past it the report ends with a line counting the rest.
pub const MAX_REPORT_ROWS: u64 = 10_000_000;

const HEADER: [&str; 6] = ["row", "column", "rule", "value", "key", "message"];

/// Where the report of an upload staged in `staging` is written.
pub fn report_path(staging: &Path) -> PathBuf {
    staging.join(REPORT_FILE)
}

/// The report being written; the file is created with the first problem.
pub(super) struct ReportWriter {
    path: PathBuf,
    out: Option<csv::Writer<BufWriter<File>>>,
    written: u64,
    unlisted: u64,
    /// The column whose value names a row: the first unique column, else the first.
    key_column: usize,
}

impl ReportWriter {
    pub(super) fn new(staging: &Path, key_column: usize) -> ReportWriter {
        ReportWriter {
            path: report_path(staging),
            out: None,
            written: 0,
            unlisted: 0,
            key_column,
        }
    }

    /// Writes `records` (problems of `batch`, whose rows are numbered from `first_row`, when
    /// there is one) and counts `unrecorded` more.
    pub(super) fn write(
        &mut self,
        records: Vec<Record>,
        unrecorded: u64,
        batch: Option<(&RecordBatch, u64)>,
    ) -> Result<()> {
        self.unlisted += unrecorded;
        if records.is_empty() {
            return Ok(());
        }
        let key_array = batch.map(|(b, first)| (b.column(self.key_column).clone(), first));
        let options = FormatOptions::default();
        let formatter = match &key_array {
            Some((array, first)) => Some((
                ArrayFormatter::try_new(array.as_ref(), &options).map_err(report_error)?,
                array,
                *first,
            )),
            None => None,
        };
        let path = part_path(&self.path);
        let out = match &mut self.out {
            Some(out) => out,
            None => {
                let mut w = csv::Writer::from_writer(BufWriter::new(File::create(&path)?));
                w.write_record(HEADER).map_err(report_error)?;
                self.out.insert(w)
            }
        };
        for record in records {
            if self.written >= MAX_REPORT_ROWS {
                self.unlisted += 1;
                continue;
            }
            let place = &record.place;
            let key = match (&formatter, place.row) {
                (Some((f, array, first)), Some(row)) => {
                    let i = row.checked_sub(*first).map(|i| i as usize);
                    match i.filter(|i| *i < array.len() && array.is_valid(*i)) {
                        Some(i) => f.value(i).to_string(),
                        None => String::new(),
                    }
                }
                _ => String::new(),
            };
            let row = place.row.map(|r| r.to_string()).unwrap_or_default();
            let value = place.value.as_deref().unwrap_or("");
            out.write_record([
                row.as_str(),
                place.column.as_str(),
                place.rule,
                value,
                key.as_str(),
                record.message.as_str(),
            ])
            .map_err(report_error)?;
            self.written += 1;
        }
        Ok(())
    }

    /// Ends the report (a last line counts problems not listed) and syncs it; `true` when there
    /// is a report.
    pub(super) fn finish(mut self) -> Result<bool> {
        let Some(mut out) = self.out.take() else {
            return Ok(false);
        };
        if self.unlisted > 0 {
            let message = format!(
                "{} more problems are not listed: the report lists at most {MAX_REPORT_ROWS}, \
                 and at most {MAX_RECORDS} per batch of rows",
                self.unlisted
            );
            out.write_record(["", "", "more", "", "", message.as_str()])
                .map_err(report_error)?;
        }
        let file = out
            .into_inner()
            .map_err(|e| Error::internal(format!("writing the upload's report: {e}")))?
            .into_inner()
            .map_err(|e| Error::internal(format!("writing the upload's report: {e}")))?;
        file.sync_all()?;
        // Named only once whole: a report cut off by a fatal error is never linked.
        std::fs::rename(part_path(&self.path), &self.path)?;
        Ok(true)
    }
}

fn part_path(path: &Path) -> PathBuf {
    path.with_extension("csv.part")
}

fn report_error(e: impl std::fmt::Display) -> Error {
    Error::internal(format!("writing the upload's report: {e}"))
}
