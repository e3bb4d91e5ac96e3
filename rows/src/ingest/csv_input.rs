//! CSV into typed Arrow batches: the header, then batch by batch on the sequential path or the
//! parallel one (`csv_parallel`). A batch is read in `csv_batch`, its fields typed in `csv_values`.

use std::io::Read;

use super::csv_batch::{record_error, BatchBuilder, CsvOptions, Layout};
use super::csv_records::{CsvRecords, Record};
use super::csv_split::BatchRule;
use super::{arrow_schema, header_mapping, IngestPlan, StagedOutput, Validator};
use crate::error::{Error, ErrorKind, Result};
use crate::storage::Durability;

/// Ingests a CSV file, its staged data files synced (fully durable).
pub fn ingest_csv<R: Read + Send>(input: R, plan: &IngestPlan<'_>) -> Result<StagedOutput> {
    ingest_csv_with(input, plan, CsvOptions::default())
}

/// [`ingest_csv`] with its batch rule and threads chosen: every choice gives the same rows,
/// problems and errors.
pub fn ingest_csv_with<R: Read + Send>(
    input: R,
    plan: &IngestPlan<'_>,
    options: CsvOptions,
) -> Result<StagedOutput> {
    ingest_csv_synced(input, plan, options, Durability::Full)
}

/// [`ingest_csv_with`], the staged data files synced as `durability` says (an upload: its
/// engine's setting).
pub(super) fn ingest_csv_synced<R: Read + Send>(
    input: R,
    plan: &IngestPlan<'_>,
    options: CsvOptions,
    durability: Durability,
) -> Result<StagedOutput> {
    let share = options.share_cores;
    ingest_csv_while(input, plan, options, durability, &mut || {
        share && super::running::cores_each() < 2
    })
}

/// [`ingest_csv_synced`], parsing on this thread alone while `busy()` says other uploads hold
/// the cores, and on the parallel path from the first batch on where it no longer does: the
/// last upload of a burst gets both cores instead of leaving one idle.
pub(super) fn ingest_csv_while<R: Read + Send>(
    input: R,
    plan: &IngestPlan<'_>,
    options: CsvOptions,
    durability: Durability,
    busy: &mut dyn FnMut() -> bool,
) -> Result<StagedOutput> {
    let mut reader = CsvRecords::new(input, plan.max_value_bytes);
    let mut headers = Record::default();
    match reader.read_record(&mut headers) {
        Ok(_) => {}
        Err(e) => return Err(record_error(e, &[], 0, &reader)),
    }
    if headers.is_empty() || (headers.len() == 1 && headers[0].is_empty()) {
        return Err(Error::many(
            ErrorKind::Unprocessable,
            vec!["The file is empty: it has no header row".into()],
        ));
    }
    let fields: Vec<&[u8]> = headers.iter().collect();
    if let Some(message) = super::file_problems::header_encoding(&fields) {
        return Err(Error::many(ErrorKind::Unprocessable, vec![message]));
    }
    let names: Vec<String> = headers
        .iter()
        .map(|h| String::from_utf8_lossy(h).into_owned())
        .collect();
    let columns = plan.schema.columns();
    let layout = Layout {
        columns,
        sources: header_mapping(&names, columns)?,
        names,
        header_len: headers.len(),
        rule: BatchRule {
            rows: options.batch_rows.max(1),
            bytes: options.batch_bytes.max(1),
        },
        schema: arrow_schema(plan.schema),
    };
    let mut validator = Validator::new(plan, durability)?;
    // Without parsing threads, this thread parses everything.
    let mut no_threads = || true;
    let busy: &mut dyn FnMut() -> bool = if options.workers < 2 {
        &mut no_threads
    } else {
        busy
    };
    let rows = match sequential_while(&mut reader, &layout, &mut validator, plan, busy)? {
        Parsed::All(rows) => rows,
        Parsed::UpTo(row) => {
            super::csv_parallel::ingest(reader, &layout, &mut validator, plan, options, row + 1)?
        }
    };
    (plan.progress)(rows);
    if rows == 0 {
        validator
            .problems
            .add(|| "The file has no data rows, it cannot be processed".into());
    }
    validator.finish()
}

/// How far [`sequential_while`] got.
enum Parsed {
    /// The whole input: the last row's number.
    All(u64),
    /// Up to this row (0: none), where the cores were no longer busy.
    UpTo(u64),
}

/// Parses batch by batch on this thread, checking `busy()` before each batch.
fn sequential_while<R: Read>(
    reader: &mut CsvRecords<R>,
    layout: &Layout<'_>,
    validator: &mut Validator,
    plan: &IngestPlan<'_>,
    busy: &mut dyn FnMut() -> bool,
) -> Result<Parsed> {
    let mut builder = BatchBuilder::new(layout);
    let mut row = 0;
    loop {
        if !busy() {
            return Ok(Parsed::UpTo(row));
        }
        let Some(parsed) = builder.read(reader, layout, row + 1)? else {
            return Ok(Parsed::All(row));
        };
        row += parsed.batch.num_rows() as u64;
        validator.accept_parsed(parsed)?;
        (plan.progress)(row);
    }
}
