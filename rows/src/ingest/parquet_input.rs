//! Parquet into batches of the schema's types. Compatible source types are cast (any integer to
//! int, any number to double, timestamps and dates to date, text dates parsed with the column's
//! format); anything else is a type error naming the Parquet type.

use std::path::Path;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, Date32Builder, Int64Builder, RecordBatch};
use arrow::compute::{cast_with_options, CastOptions};
use arrow::datatypes::{
    DataType as ArrowType, Field, Float64Type, Schema, TimeUnit, TimestampMicrosecondType,
    TimestampMillisecondType, TimestampNanosecondType, TimestampSecondType,
};
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReader,
    ParquetRecordBatchReaderBuilder,
};

use super::checks::check_nulls;
use super::parquet_guard::{self, check_footer};
use super::problems::{shown, Place, Problems};
use super::value_limit::{first_too_long, too_long};
use super::{date_to_days, header_mapping, IngestPlan, StagedOutput, Validator};
use crate::error::{Error, ErrorKind, Result};
use crate::schema::{DataType, ValidColumn};
use crate::storage::Durability;

fn not_readable(e: impl std::fmt::Display) -> Error {
    Error::many(
        ErrorKind::Unprocessable,
        vec![format!("The Parquet file cannot be read: {e}")],
    )
}

/// Reader options for a client's file: its embedded Arrow schema (`ARROW:schema`, an IPC message
/// in the footer's metadata) is ignored. The columns are typed from the Parquet schema, which is
/// all the validation needs, and arrow-ipc panics on some malformed messages (found by fuzzing:
/// an unknown type id is `unimplemented!`).
pub fn untrusted_file_options() -> ArrowReaderOptions {
    ArrowReaderOptions::new().with_skip_arrow_metadata(true)
}

/// Ingests a Parquet file, its staged data files synced (fully durable).
pub fn ingest_parquet(path: &Path, plan: &IngestPlan<'_>) -> Result<StagedOutput> {
    ingest_parquet_synced(path, plan, Durability::Full)
}

/// [`ingest_parquet`], the staged data files synced as `durability` says (an upload: its
/// engine's setting).
pub(super) fn ingest_parquet_synced(
    path: &Path,
    plan: &IngestPlan<'_>,
    durability: Durability,
) -> Result<StagedOutput> {
    check_footer(path)?;
    let file = std::fs::File::open(path)?;
    let loaded = ArrowReaderMetadata::load(&file, untrusted_file_options()).map_err(|e| {
        Error::many(
            ErrorKind::Unprocessable,
            vec![format!("The file is not a readable Parquet file: {e}")],
        )
    })?;
    let names: Vec<String> = loaded
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    let columns = plan.schema.columns();
    let sources = header_mapping(&names, columns)?;
    // Every page checked, and batch sizes chosen, before any data is decoded.
    let read_plan = parquet_guard::plan(path, loaded.metadata(), plan.max_value_bytes)?;
    let metadata = with_dictionaries(loaded, &read_plan.oversize_dictionary)?;
    let mut validator = Validator::new(plan, durability)?;
    let mut row = 0u64;
    for (group, batch_rows) in read_plan.batch_rows.iter().enumerate() {
        let reader =
            ParquetRecordBatchReaderBuilder::new_with_metadata(file.try_clone()?, metadata.clone())
                .with_row_groups(vec![group])
                .with_batch_size(*batch_rows)
                .build()
                .map_err(not_readable)?;
        let mut reader = reader;
        while let Some(batch) = next_batch(&mut reader)? {
            let batch = batch.map_err(not_readable)?;
            let first_row = row + 1;
            // A value over the limit stops the file before anything copies it.
            for (name, array) in names.iter().zip(batch.columns()) {
                if let Some(i) = first_too_long(array, plan.max_value_bytes) {
                    return Err(too_long(name, first_row + i as u64, plan.max_value_bytes));
                }
            }
            let mut arrays = Vec::with_capacity(columns.len());
            for (column, src) in columns.iter().zip(&sources) {
                // Nulls are judged on the source: a value that fails conversion is a type error only.
                check_nulls(
                    column,
                    batch.column(*src),
                    first_row,
                    &mut validator.problems,
                );
                arrays.push(convert(
                    column,
                    batch.column(*src),
                    first_row,
                    &mut validator.problems,
                ));
            }
            let converted = RecordBatch::try_new(validator.batch_schema.clone(), arrays)
                .map_err(|e| Error::internal(format!("assembling a batch: {e}")))?;
            row += batch.num_rows() as u64;
            validator.accept(converted, first_row)?;
            (plan.progress)(row);
        }
    }
    if row == 0 {
        validator
            .problems
            .add(|| "The file has no data rows, it cannot be processed".into());
    }
    validator.finish()
}

/// The reader's next batch. The parquet crate panics on some malformed pages instead of
/// returning an error (found by fuzzing: definition levels longer than their page made
/// arrow-buffer's bit iterator go out of bounds), so a panic while decoding a client's file is
/// the client's 422, not a dead ingest thread. The reader is not used again after one.
fn next_batch(
    reader: &mut ParquetRecordBatchReader,
) -> Result<Option<std::result::Result<RecordBatch, arrow::error::ArrowError>>> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| reader.next())).map_err(|panic| {
        let why = crate::error::panic_message(&*panic).unwrap_or("a malformed page");
        not_readable(format!("decoding failed ({why})"))
    })
}

/// The metadata to read with: text columns flagged in `as_dictionary` are read as dictionaries,
/// so a huge dictionary value is looked at once rather than copied into every row using it.
fn with_dictionaries(
    loaded: ArrowReaderMetadata,
    as_dictionary: &[bool],
) -> Result<ArrowReaderMetadata> {
    if !as_dictionary.iter().any(|d| *d) {
        return Ok(loaded);
    }
    let fields: Vec<Field> = loaded
        .schema()
        .fields()
        .iter()
        .zip(as_dictionary.iter().chain(std::iter::repeat(&false)))
        .map(|(f, dict)| match f.data_type() {
            ArrowType::Utf8 | ArrowType::LargeUtf8 | ArrowType::Binary | ArrowType::LargeBinary
                if *dict =>
            {
                f.as_ref().clone().with_data_type(ArrowType::Dictionary(
                    Box::new(ArrowType::Int32),
                    Box::new(f.data_type().clone()),
                ))
            }
            _ => f.as_ref().clone(),
        })
        .collect();
    let schema = Arc::new(Schema::new_with_metadata(
        fields,
        loaded.schema().metadata().clone(),
    ));
    ArrowReaderMetadata::try_new(
        loaded.metadata().clone(),
        untrusted_file_options().with_schema(schema),
    )
    .map_err(not_readable)
}

/// `source` as an array of the column's Arrow type; on a type mismatch, a problem and all nulls.
fn convert(
    column: &ValidColumn,
    source: &ArrayRef,
    first_row: u64,
    problems: &mut Problems,
) -> ArrayRef {
    let target = super::arrow_type(column.data_type);
    let from = source.data_type();
    let mismatch = |problems: &mut Problems| {
        problems.add_at(Place::column(&column.name, "type", None), || {
            format!(
                "Column [{}] has an incorrect data type. Expected {}, received Parquet type {from}",
                column.name,
                column.data_type.as_str()
            )
        });
        arrow::array::new_null_array(&target, source.len())
    };
    if from == &ArrowType::Null {
        return arrow::array::new_null_array(&target, source.len());
    }
    // A dictionary column (a pandas categorical) is judged by its values.
    if let ArrowType::Dictionary(_, value_type) = from {
        return match arrow::compute::cast(source, value_type) {
            Ok(values) => convert(column, &values, first_row, problems),
            Err(_) => mismatch(problems),
        };
    }
    // A timestamp with a named zone (pandas writes "UTC") holds UTC instants; its date is the
    // UTC date. Dropping the zone label avoids needing a time-zone database to cast it.
    if let ArrowType::Timestamp(unit, Some(_)) = from {
        let naive = without_time_zone(source, *unit);
        return convert(column, &naive, first_row, problems);
    }
    let castable = match column.data_type {
        DataType::Int => from.is_integer(),
        DataType::Double => from.is_numeric(),
        DataType::String => matches!(
            from,
            ArrowType::Utf8 | ArrowType::LargeUtf8 | ArrowType::Utf8View
        ),
        DataType::Boolean => from == &ArrowType::Boolean,
        DataType::Date => matches!(
            from,
            ArrowType::Date32 | ArrowType::Date64 | ArrowType::Timestamp(..)
        ),
    };
    if castable {
        let strict = CastOptions {
            safe: false,
            ..Default::default()
        };
        return match cast_with_options(source, &target, &strict) {
            Ok(array) => array,
            Err(e) => {
                problems.add_at(Place::column(&column.name, "type", None), || {
                    format!(
                        "Column [{}] has values that do not fit {}: {e}",
                        column.name,
                        column.data_type.as_str()
                    )
                });
                arrow::array::new_null_array(&target, source.len())
            }
        };
    }
    match (column.data_type, from) {
        // pandas stores an int column with nulls as float64.
        (DataType::Int, ArrowType::Float32 | ArrowType::Float64) => {
            floats_to_ints(column, source, first_row, problems)
        }
        (DataType::Date, ArrowType::Utf8 | ArrowType::LargeUtf8 | ArrowType::Utf8View) => {
            text_to_dates(column, source, first_row, problems)
        }
        _ => mismatch(problems),
    }
}

fn without_time_zone(source: &ArrayRef, unit: TimeUnit) -> ArrayRef {
    match unit {
        TimeUnit::Second => Arc::new(
            source
                .as_primitive::<TimestampSecondType>()
                .clone()
                .with_timezone_opt(None::<String>),
        ),
        TimeUnit::Millisecond => Arc::new(
            source
                .as_primitive::<TimestampMillisecondType>()
                .clone()
                .with_timezone_opt(None::<String>),
        ),
        TimeUnit::Microsecond => Arc::new(
            source
                .as_primitive::<TimestampMicrosecondType>()
                .clone()
                .with_timezone_opt(None::<String>),
        ),
        TimeUnit::Nanosecond => Arc::new(
            source
                .as_primitive::<TimestampNanosecondType>()
                .clone()
                .with_timezone_opt(None::<String>),
        ),
    }
}

fn floats_to_ints(
    column: &ValidColumn,
    source: &ArrayRef,
    first_row: u64,
    problems: &mut Problems,
) -> ArrayRef {
    // unwrap: casting any float type to Float64 cannot fail.
    let floats = arrow::compute::cast(source, &ArrowType::Float64).unwrap();
    let floats = floats.as_primitive::<Float64Type>();
    let mut out = Int64Builder::with_capacity(floats.len());
    for (i, v) in floats.iter().enumerate() {
        match v {
            None => out.append_null(),
            Some(f) if f.fract() == 0.0 && f.abs() < 9.2e18 => out.append_value(f as i64),
            Some(f) => {
                out.append_null();
                let place = Place::row(
                    first_row + i as u64,
                    &column.name,
                    "type",
                    Some(f.to_string()),
                );
                problems.add_at(place, || {
                    format!(
                        "Column [{}] has an incorrect data type. Expected int, received {f} in row {}",
                        column.name,
                        first_row + i as u64
                    )
                });
            }
        }
    }
    Arc::new(out.finish())
}

fn text_to_dates(
    column: &ValidColumn,
    source: &ArrayRef,
    first_row: u64,
    problems: &mut Problems,
) -> ArrayRef {
    // unwrap: casting any string type to Utf8 cannot fail.
    let text = arrow::compute::cast(source, &ArrowType::Utf8).unwrap();
    let text = text.as_string::<i32>();
    let format = column.format.unwrap_or(crate::schema::DateFormat::ALL[3]);
    let mut out = Date32Builder::with_capacity(text.len());
    for (i, v) in text.iter().enumerate() {
        match v.map(|s| (s, format.parse_value(s))) {
            None => out.append_null(),
            Some((_, Some(d))) => out.append_value(date_to_days(d)),
            Some((s, None)) => {
                out.append_null();
                let place = Place::row(
                    first_row + i as u64,
                    &column.name,
                    "type",
                    Some(s.to_string()),
                );
                problems.add_at(place, || {
                    format!(
                        "Column [{}] has an incorrect data type. Expected date in format {}, received {} in row {}",
                        column.name,
                        format.as_str(),
                        shown(s.as_bytes()),
                        first_row + i as u64
                    )
                });
            }
        }
    }
    Arc::new(out.finish())
}
