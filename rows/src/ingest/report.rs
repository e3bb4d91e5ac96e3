//! The whole report of a refused upload: every problem as one row (row, column, rule, value as
//! received, the row's key, message), written while validating, batch by batch, as CSV and as
//! Parquet, so its size is bounded by disk and [`MAX_REPORT_ROWS`], never by memory. The 422
//! answer keeps its first 100 messages; the engine keeps both files with the job and links them.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{Array, ArrayBuilder, ArrayRef, RecordBatch, StringBuilder, UInt64Builder};
use arrow::datatypes::SchemaRef;
use arrow::datatypes::{DataType as ArrowType, Field, Schema};
use arrow::util::display::{ArrayFormatter, FormatOptions};
use parquet::arrow::ArrowWriter;

use super::problems::{Record, MAX_RECORDS};
use crate::error::{Error, Result};

/// The report's name in the upload's staging folder.
pub(super) const REPORT_FILE: &str = "problems.csv";

/// Problems listed at most; past it the report ends with a line counting the rest.
pub const MAX_REPORT_ROWS: u64 = 10_000_000;

const HEADER: [&str; 6] = ["row", "column", "rule", "value", "key", "message"];

/// Where the report of an upload staged in `staging` is written (the Parquet form beside it,
/// [`parquet_path`]).
pub fn report_path(staging: &Path) -> PathBuf {
    staging.join(REPORT_FILE)
}

/// The Parquet form of the report at `csv_path`.
pub fn parquet_path(csv_path: &Path) -> PathBuf {
    csv_path.with_extension("parquet")
}

/// Rows of the Parquet form gathered before they are written as one row group.
const PARQUET_BATCH_ROWS: usize = 65_536;

/// The Parquet form: the same rows, typed (`row` a number), in row groups of
/// [`PARQUET_BATCH_ROWS`].
struct ParquetReport {
    writer: ArrowWriter<File>,
    schema: SchemaRef,
    row: UInt64Builder,
    text: [StringBuilder; 5],
}

impl ParquetReport {
    fn create(path: &Path) -> Result<ParquetReport> {
        let mut fields = vec![Field::new("row", ArrowType::UInt64, true)];
        for name in &HEADER[1..] {
            let nullable = matches!(*name, "value" | "key");
            fields.push(Field::new(*name, ArrowType::Utf8, nullable));
        }
        let props = super::writer::stored_file_properties().build();
        let schema = Arc::new(Schema::new(fields));
        let writer = ArrowWriter::try_new(File::create(path)?, schema.clone(), Some(props))
            .map_err(report_error)?;
        Ok(ParquetReport {
            writer,
            schema,
            row: UInt64Builder::new(),
            text: std::array::from_fn(|_| StringBuilder::new()),
        })
    }

    fn push(&mut self, row: Option<u64>, fields: [Option<&str>; 5]) -> Result<()> {
        self.row.append_option(row);
        for (builder, value) in self.text.iter_mut().zip(fields) {
            builder.append_option(value);
        }
        if self.row.len() >= PARQUET_BATCH_ROWS {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        if self.row.is_empty() {
            return Ok(());
        }
        let mut columns: Vec<ArrayRef> = vec![Arc::new(self.row.finish())];
        columns.extend(
            self.text
                .iter_mut()
                .map(|b| Arc::new(b.finish()) as ArrayRef),
        );
        let batch = RecordBatch::try_new(self.schema.clone(), columns).map_err(report_error)?;
        self.writer.write(&batch).map_err(report_error)?;
        // Close the row group now: the writer would otherwise buffer rows up to the stored
        // files' row group size, holding a large report in memory.
        self.writer.flush().map_err(report_error)
    }

    fn finish(mut self) -> Result<()> {
        self.flush()?;
        let file = self.writer.into_inner().map_err(report_error)?;
        file.sync_all()?;
        Ok(())
    }
}

/// The report being written; the file is created with the first problem.
pub(super) struct ReportWriter {
    path: PathBuf,
    out: Option<csv::Writer<BufWriter<File>>>,
    parquet: Option<ParquetReport>,
    written: u64,
    unlisted: u64,
    /// Rows with a recorded problem (a lower bound when some were only counted): each call of
    /// [`ReportWriter::write`] is one batch, whose rows no other batch has.
    rows_rejected: u64,
    /// The column whose value names a row: the first unique column, else the first.
    key_column: usize,
}

impl ReportWriter {
    pub(super) fn new(staging: &Path, key_column: usize) -> ReportWriter {
        ReportWriter {
            path: report_path(staging),
            out: None,
            parquet: None,
            written: 0,
            unlisted: 0,
            rows_rejected: 0,
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
        let rows: std::collections::HashSet<u64> =
            records.iter().filter_map(|r| r.place.row).collect();
        self.rows_rejected += rows.len() as u64;
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
        if self.out.is_none() {
            let path = part_path(&self.path);
            let mut w = csv::Writer::from_writer(BufWriter::new(File::create(&path)?));
            w.write_record(HEADER).map_err(report_error)?;
            self.out = Some(w);
            self.parquet = Some(ParquetReport::create(&part_path(&parquet_path(
                &self.path,
            )))?);
        }
        let (Some(out), Some(parquet)) = (&mut self.out, &mut self.parquet) else {
            return Ok(());
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
            let key = (!key.is_empty()).then_some(key.as_str());
            parquet.push(
                place.row,
                [
                    Some(place.column.as_str()),
                    Some(place.rule),
                    place.value.as_deref(),
                    key,
                    Some(record.message.as_str()),
                ],
            )?;
            self.written += 1;
        }
        Ok(())
    }

    /// Rows of the file with at least one problem, so far.
    pub(super) fn rows_rejected(&self) -> u64 {
        self.rows_rejected
    }

    /// Ends the report (a last line counts problems not listed) and syncs it; `true` when there
    /// is a report.
    pub(super) fn finish(&mut self) -> Result<bool> {
        let (Some(mut out), Some(mut parquet)) = (self.out.take(), self.parquet.take()) else {
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
            parquet.push(None, [Some(""), Some("more"), None, None, Some(&message)])?;
        }
        parquet.finish()?;
        let file = out
            .into_inner()
            .map_err(|e| Error::internal(format!("writing the upload's report: {e}")))?
            .into_inner()
            .map_err(|e| Error::internal(format!("writing the upload's report: {e}")))?;
        file.sync_all()?;
        // Named only once whole: a report cut off by a fatal error is never linked.
        let parquet = parquet_path(&self.path);
        std::fs::rename(part_path(&parquet), &parquet)?;
        std::fs::rename(part_path(&self.path), &self.path)?;
        Ok(true)
    }
}

fn part_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".part");
    PathBuf::from(name)
}

fn report_error(e: impl std::fmt::Display) -> Error {
    Error::internal(format!("writing the upload's report: {e}"))
}
