//! Column types of a Parquet file, from its footer: the schema is in the file, nothing to guess.

use std::path::Path;

use arrow::array::{Array, RecordBatch};
use arrow::datatypes::DataType as ArrowType;
use arrow::util::display::{ArrayFormatter, FormatOptions};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use crate::error::{Error, Result};
use crate::infer::{ColumnSample, InferredColumn};

/// The rows read (from the start of the file) for each column's example values and null count.
const SAMPLE_ROWS: usize = 10_000;
use crate::schema::{column_names_from_headers, DataType, DateFormat};

pub(super) fn infer(path: &Path) -> Result<Vec<InferredColumn>> {
    crate::ingest::parquet_guard::check_footer(path)
        .map_err(|e| Error::invalid(crate::ingest::messages(&e).join("; ")))?;
    let file = std::fs::File::open(path)?;
    let options = crate::ingest::untrusted_file_options();
    let builder = ParquetRecordBatchReaderBuilder::try_new_with_options(file, options)
        .map_err(|e| Error::invalid(format!("The file is not a readable Parquet file: {e}")))?;
    if builder.metadata().file_metadata().num_rows() == 0 {
        return Err(Error::invalid(
            "The Parquet file has no rows: a schema cannot be inferred from it",
        ));
    }
    let schema = builder.schema().clone();
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    let sanitised = column_names_from_headers(&names)?;
    let mut columns: Vec<InferredColumn> = schema
        .fields()
        .iter()
        .zip(sanitised)
        .map(|(field, name)| {
            let (data_type, format) = map_type(field.data_type()).ok_or_else(|| {
                Error::invalid(format!(
                    "Column [{}] has the Parquet type {}, which is not supported: use integers, \
                     floats, decimals, booleans, strings, dates or timestamps",
                    field.name(),
                    field.data_type()
                ))
            })?;
            Ok(InferredColumn {
                name,
                data_type,
                format,
                sample: ColumnSample::default(),
            })
        })
        .collect::<Result<_>>()?;
    let first = builder.with_batch_size(SAMPLE_ROWS).build();
    let first =
        first.map_err(|e| Error::invalid(format!("The Parquet file could not be read: {e}")));
    if let Some(batch) = first?.next() {
        let batch = batch
            .map_err(|e| Error::invalid(format!("The Parquet file could not be read: {e}")))?;
        for (column, sample) in columns.iter_mut().zip(samples_of(&batch)) {
            column.sample = sample;
        }
    }
    Ok(columns)
}

/// Each column's examples and null count in `batch`.
fn samples_of(batch: &RecordBatch) -> Vec<ColumnSample> {
    let options = FormatOptions::default();
    batch
        .columns()
        .iter()
        .map(|array| {
            let mut sample = ColumnSample::default();
            let Ok(shown) = ArrayFormatter::try_new(array.as_ref(), &options) else {
                return sample;
            };
            for row in 0..array.len() {
                let value = (!array.is_null(row)).then(|| shown.value(row).to_string());
                sample.observe(value.as_deref());
            }
            sample
        })
        .collect()
}

fn map_type(t: &ArrowType) -> Option<(DataType, Option<DateFormat>)> {
    use ArrowType::*;
    let iso = DateFormat::parse("%Y-%m-%d");
    Some(match t {
        Int8 | Int16 | Int32 | Int64 | UInt8 | UInt16 | UInt32 | UInt64 => (DataType::Int, None),
        Float16 | Float32 | Float64 | Decimal32(..) | Decimal64(..) | Decimal128(..)
        | Decimal256(..) => (DataType::Double, None),
        Boolean => (DataType::Boolean, None),
        Utf8 | LargeUtf8 | Utf8View | Null => (DataType::String, None),
        Date32 | Date64 | Timestamp(..) => (DataType::Date, iso),
        Dictionary(_, value) => return map_type(value),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{Int64Array, StringArray};
    use arrow::datatypes::{Field, Schema};
    use parquet::arrow::ArrowWriter;

    use super::*;

    #[test]
    fn examples_and_null_counts_come_from_the_first_rows() {
        let schema = Arc::new(Schema::new(vec![
            Field::new("n", ArrowType::Int64, true),
            Field::new("s", ArrowType::Utf8, true),
        ]));
        let n = Int64Array::from(vec![Some(1), None, Some(1), Some(7)]);
        let s = StringArray::from(vec![Some("a"), Some("b"), None, None]);
        let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(n), Arc::new(s)]).unwrap();
        let path =
            std::env::temp_dir().join(format!("rapid-infer-{}.parquet", uuid::Uuid::new_v4()));
        let mut w =
            ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), schema, None).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        let cols = infer(&path);
        std::fs::remove_file(&path).unwrap();
        let cols = cols.unwrap();
        let expected = ColumnSample {
            examples: vec!["1".into(), "7".into()],
            nulls: 1,
            rows: 4,
        };
        assert_eq!(cols[0].sample, expected);
        assert_eq!(
            (cols[1].sample.nulls, cols[1].sample.examples.len()),
            (2, 2)
        );
    }
}
