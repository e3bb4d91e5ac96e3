//! Ingest: an uploaded file becomes validated Parquet in staging, in bounded memory.
//!
//! Rows are read in batches of [`BATCH_ROWS`]; each batch is typed (CSV fields parsed once into
//! Arrow builders, Parquet columns cast), checked (nulls, the six check types, in-file
//! uniqueness) and, while no problem has been found, written out partition by partition. Every
//! problem in the whole file is counted; the answer lists the first hundred with row numbers.

mod checks;
mod csv_batch;
mod csv_input;
mod csv_parallel;
pub mod csv_records;
mod csv_split;
mod csv_values;
pub mod file_problems;
mod page_header;
pub mod parquet_guard;
mod parquet_input;
mod problems;
mod quarantine;
mod report;
mod running;
mod stream;
mod unique;
pub mod value_limit;
mod writer;
mod writer_lanes;

use std::path::Path;
use std::sync::Arc;

use arrow::array::RecordBatch;
use arrow::datatypes::{DataType as ArrowType, Field, Schema as ArrowSchema, SchemaRef};

pub use checks::example_fails;
pub use csv_batch::CsvOptions;
pub use csv_input::{ingest_csv, ingest_csv_with};
pub use parquet_input::{ingest_parquet, untrusted_file_options};
pub use problems::{Place, Problems, Record};
pub use quarantine::{quarantine_path, PROBLEMS_COLUMN, ROW_COLUMN};
pub use report::{parquet_path, report_path, MAX_REPORT_ROWS};
pub use running::cores_each;
pub use stream::{ingest_stream, Chunk, ChunkReader};
pub use unique::{each_number, value_at, UniqueColumn, UniqueValue};
pub use writer::stored_file_properties;
pub use writer::StagedDataFile;

use checks::{apply_checks, PreparedCheck};
use writer::PartitionedWriter;
use writer_lanes::BackgroundWriter;

use crate::error::{Error, ErrorKind, Result};
use crate::schema::{sanitise_column_name, DataType, ValidColumn, ValidSchema};
use crate::storage::Durability;

pub const BATCH_ROWS: usize = 64 * 1024;

/// A batch also ends once its values reach this many decoded bytes, so that long values make
/// short batches rather than large ones.
pub const BATCH_BYTES: usize = 64 * 1024 * 1024;

/// The default longest single value (CSV field, Parquet value) in bytes (docs/API.md: 16 MiB).
pub const DEFAULT_MAX_VALUE_BYTES: usize = 16 * 1024 * 1024;

/// What to ingest against, and where to put the result.
pub struct IngestPlan<'a> {
    pub schema: &'a ValidSchema,
    /// An empty folder of this upload in staging.
    pub staging: &'a Path,
    /// Told the number of rows read so far, once per batch.
    pub progress: &'a (dyn Fn(u64) + Sync),
    /// The longest single value accepted; a longer one refuses the whole file (422).
    pub max_value_bytes: usize,
    /// What rows that break the schema do to the upload.
    pub on_error: OnError,
    /// Whether the upload's columns are profiled in the same pass (`RAPID_PROFILE_UPLOADS`).
    pub profile: bool,
}

/// What an upload does with rows that break the schema (docs/API.md, `on_error`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum OnError {
    /// The whole file is refused (422), as rAPId does.
    #[default]
    Reject,
    /// The valid rows are stored; the others are kept apart in the job's quarantine file.
    Quarantine,
}

/// What a quarantining upload kept apart (both files are in the staging folder).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quarantined {
    pub rows_rejected: u64,
    pub problems: u64,
}

/// A valid upload, staged and ready for the dataset actor to commit.
#[derive(Debug)]
pub struct StagedOutput {
    pub files: Vec<StagedDataFile>,
    pub rows: u64,
    /// Values of the `unique` columns, to check against stored data at commit.
    pub unique: Vec<UniqueColumn>,
    /// Rows kept apart by a quarantining upload, when there were any.
    pub quarantined: Option<Quarantined>,
    /// The stored rows' column profile (none without rows).
    pub profile: Option<crate::profile::StoredProfile>,
}

/// The Arrow type a schema type is stored as.
pub fn arrow_type(t: DataType) -> ArrowType {
    match t {
        DataType::Int => ArrowType::Int64,
        DataType::Double => ArrowType::Float64,
        DataType::String => ArrowType::Utf8,
        DataType::Boolean => ArrowType::Boolean,
        DataType::Date => ArrowType::Date32,
    }
}

/// Every column of the schema, in schema order (the shape of a batch before partitioning).
pub fn arrow_schema(schema: &ValidSchema) -> SchemaRef {
    Arc::new(ArrowSchema::new(
        schema
            .columns()
            .iter()
            .map(|c| Field::new(&c.name, arrow_type(c.data_type), true))
            .collect::<Vec<_>>(),
    ))
}

pub use crate::schema::date_format::EPOCH_DAYS_FROM_CE;
pub use crate::schema::date_format::{date32_to_string, date_to_days};

/// For each schema column, the position of its source column. Headers are cleaned the way
/// schema generation cleans them (`Order Date` -> `order_date`), so a file a schema was
/// generated from uploads against it; the set must equal the schema's, in any order.
fn header_mapping(headers: &[String], columns: &[ValidColumn]) -> Result<Vec<usize>> {
    let ignored = quarantine::extra_columns(headers);
    // An ignored column's name is one no schema column has (names are never empty).
    let cleaned: Vec<String> = headers
        .iter()
        .zip(&ignored)
        .map(|(h, ignore)| match ignore {
            true => String::new(),
            false => sanitise_column_name(h.trim()),
        })
        .collect();
    let positions: Option<Vec<usize>> = columns
        .iter()
        .map(|c| cleaned.iter().position(|h| *h == c.name))
        .collect();
    let cleaned: Vec<String> = cleaned.into_iter().filter(|c| !c.is_empty()).collect();
    let mut unique = cleaned.clone();
    unique.sort();
    unique.dedup();
    match positions {
        Some(p) if cleaned.len() == columns.len() && unique.len() == cleaned.len() => Ok(p),
        _ => {
            let mut expected: Vec<&str> = columns.iter().map(|c| c.name.as_str()).collect();
            expected.sort();
            let hint = file_problems::mismatch_hint(headers, &cleaned, columns);
            let mut received = cleaned;
            received.sort();
            Err(Error::many(
                ErrorKind::Unprocessable,
                vec![
                    format!(
                        "Expected columns: [{}], received: [{}]",
                        expected.join(", "),
                        received.join(", ")
                    ),
                    hint,
                ],
            ))
        }
    }
}

/// The checks shared by both inputs, applied batch by batch, and the staged writer.
struct Validator {
    columns: Vec<ValidColumn>,
    checks: Vec<Vec<PreparedCheck>>,
    unique: Vec<Option<UniqueColumn>>,
    batch_schema: SchemaRef,
    writer: Option<BackgroundWriter>,
    problems: Problems,
    /// Every problem, written as it is found.
    report: report::ReportWriter,
    /// Rows read (all of them, quarantined ones included).
    rows: u64,
    /// Quarantine mode: where rejected rows go, and what they account for.
    quarantine: Option<quarantine::QuarantineWriter>,
    /// Problems accounted for by quarantined rows: any other one refuses the upload.
    quarantined_problems: u64,
    /// Profiles the rows that are stored, as they are written.
    profiler: crate::profile::Profiler,
    /// The batch being accepted was profiled by the thread that parsed it.
    profiled_elsewhere: bool,
    /// Counts this upload among the running ones while it is validated and written.
    _running: running::Running,
}

impl Validator {
    /// Nulls are the inputs' business (CSV checks them while parsing, Parquet on its source
    /// columns), so that a value that failed to parse is reported once, as a type error. The
    /// staged data files are synced as `durability` says.
    fn new(plan: &IngestPlan<'_>, durability: Durability) -> Result<Validator> {
        let columns = plan.schema.columns().to_vec();
        let batch_schema = arrow_schema(plan.schema);
        let running = running::Running::enter();
        let writer = PartitionedWriter::new(plan.staging, &batch_schema, &columns, durability)?;
        let lanes = if writer.is_partitioned() {
            running::cores_each()
        } else {
            1
        };
        let writer = BackgroundWriter::start(writer, lanes);
        Ok(Validator {
            checks: columns
                .iter()
                .map(|c| c.checks.iter().map(PreparedCheck::new).collect())
                .collect(),
            unique: columns
                .iter()
                .map(|c| c.unique.then(|| UniqueColumn::new(c)))
                .collect(),
            report: report::ReportWriter::new(
                plan.staging,
                columns.iter().position(|c| c.unique).unwrap_or(0),
            ),
            quarantine: (plan.on_error == OnError::Quarantine)
                .then(|| quarantine::QuarantineWriter::new(plan.staging, &columns)),
            quarantined_problems: 0,
            profiler: crate::profile::Profiler::when(plan.profile, plan.schema),
            profiled_elsewhere: false,
            columns,
            batch_schema,
            writer: Some(writer),
            problems: Problems::default(),
            rows: 0,
            _running: running,
        })
    }

    fn accept(&mut self, batch: RecordBatch, first_row: u64) -> Result<()> {
        let checked = check_batch(&self.columns, &self.checks, &batch, first_row);
        self.accept_checked(batch, first_row, Problems::default(), checked)
    }

    /// A parsed CSV batch: its parse problems come before those of the checks.
    fn accept_parsed(&mut self, parsed: csv_batch::ParsedBatch) -> Result<()> {
        let checked = check_batch(&self.columns, &self.checks, &parsed.batch, parsed.first_row);
        self.accept_checked(parsed.batch, parsed.first_row, parsed.problems, checked)
    }

    /// A parsed, checked CSV batch that its parsing thread may have profiled already (its
    /// profile joins this one's at the end: `csv_parallel`).
    fn accept_profiled(
        &mut self,
        parsed: csv_batch::ParsedBatch,
        checked: Vec<Problems>,
        profiled: bool,
    ) -> Result<()> {
        self.profiled_elsewhere = profiled;
        let (batch, first_row) = (parsed.batch, parsed.first_row);
        let outcome = self.accept_checked(batch, first_row, parsed.problems, checked);
        self.profiled_elsewhere = false;
        outcome
    }

    /// A batch whose checks have run (`checked`: each column's problems): the problems are
    /// recorded in the order of a sequential pass (parsing, then column by column its checks
    /// and its in-file uniqueness), then the batch is written while the file has no problem.
    fn accept_checked(
        &mut self,
        batch: RecordBatch,
        first_row: u64,
        parsed: Problems,
        checked: Vec<Problems>,
    ) -> Result<()> {
        if self.quarantine.is_some() && self.problems.total() == self.quarantined_problems {
            return self.accept_quarantining(batch, first_row, parsed, checked);
        }
        self.problems.append(parsed);
        for (i, column_problems) in checked.into_iter().enumerate() {
            self.problems.append(column_problems);
            if let Some(u) = &mut self.unique[i] {
                u.observe(batch.column(i), first_row, &mut self.problems);
            }
        }
        let (records, unrecorded) = self.problems.take_records();
        self.report
            .write(records, unrecorded, Some((&batch, first_row)))?;
        self.rows += batch.num_rows() as u64;
        if self.problems.is_empty() {
            if let Some(w) = self.writer.take() {
                if !self.profiled_elsewhere {
                    self.profiler.observe(&batch);
                }
                self.writer = Some(w.write(batch)?);
            }
        } else if let Some(w) = self.writer.take() {
            // The upload will be refused: stop writing (the staged files go with the staging
            // folder), keep validating to report everything.
            let _ = w.finish();
        }
        Ok(())
    }

    fn finish(self) -> Result<StagedOutput> {
        if self.quarantine.is_some() {
            return self.finish_quarantining();
        }
        if !self.problems.is_empty() {
            return Err(self.refuse()?);
        }
        self.staged(None)
    }

    /// The 422 of a refused upload, its whole report written.
    fn refuse(mut self) -> Result<Error> {
        let (records, unrecorded) = self.problems.take_records();
        self.report.write(records, unrecorded, None)?;
        let rows_rejected = self.report.rows_rejected();
        self.report.finish()?;
        let mut e = self.problems.into_error();
        e.report = Some(Box::new(crate::error::UploadReport {
            rows_rejected,
            links: None,
        }));
        Ok(e)
    }

    /// The staged output of an upload that is not refused.
    fn staged(self, quarantined: Option<Quarantined>) -> Result<StagedOutput> {
        let files = match self.writer {
            Some(w) => w.finish()?,
            None => Vec::new(),
        };
        let rows = self.rows - quarantined.map_or(0, |q| q.rows_rejected);
        Ok(StagedOutput {
            files,
            rows,
            unique: self.unique.into_iter().flatten().collect(),
            quarantined,
            profile: self.profiler.finish(),
        })
    }
}

/// Each column's check problems for one batch (rows numbered from `first_row`); any thread can
/// run this, the problems are recorded in order by [`Validator::accept_checked`].
fn check_batch(
    columns: &[ValidColumn],
    checks: &[Vec<PreparedCheck>],
    batch: &RecordBatch,
    first_row: u64,
) -> Vec<Problems> {
    columns
        .iter()
        .enumerate()
        .map(|(i, column)| {
            let mut problems = Problems::default();
            apply_checks(
                column,
                &checks[i],
                batch.column(i),
                first_row,
                &mut problems,
            );
            problems
        })
        .collect()
}

/// Writes already-typed batches (all columns, schema order) as staged, partitioned Parquet
/// (synced): the write stage of an upload on its own, for benchmarks and tools.
pub fn stage_batches(
    schema: &ValidSchema,
    batches: &[RecordBatch],
    dir: &Path,
) -> Result<Vec<StagedDataFile>> {
    let columns = schema.columns();
    let mut writer = PartitionedWriter::new(dir, &arrow_schema(schema), columns, Durability::Full)?;
    for b in batches {
        writer.write(b)?;
    }
    writer.finish()
}

/// For tests and tools: the message list of an ingest error.
pub fn messages(e: &Error) -> Vec<String> {
    match &e.details {
        crate::error::Details::One(m) => vec![m.clone()],
        crate::error::Details::Many(ms) => ms.clone(),
    }
}

/// For the ingest tests: a validated schema of `columns` in domain `t`.
#[cfg(test)]
fn test_schema(dataset: &str, columns: serde_json::Value) -> ValidSchema {
    use crate::schema::{validate, Schema, SchemaContext};
    let schema: Schema = serde_json::from_value(serde_json::json!({
        "metadata": {"domain": "t", "dataset": dataset, "sensitivity": "PUBLIC",
                     "owners": [{"name": "T", "email": "t@example.com"}]},
        "columns": columns
    }))
    .unwrap();
    let layers = vec!["default".to_string()];
    let domains = Default::default();
    let ctx = SchemaContext {
        layers: &layers,
        protected_domains: &domains,
    };
    validate(&schema, &ctx).unwrap()
}
