//! Query answers: JSON keyed by row index (typed values, null booleans as `{}`), CSV with an
//! index column, Arrow IPC stream, Parquet.

use arrow::array::{Array, AsArray, RecordBatch};
use arrow::datatypes::{
    DataType as ArrowType, Date32Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type,
    Int8Type, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use arrow::util::display::{ArrayFormatter, FormatOptions};
use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::ingest::date32_to_string;

/// One cell as JSON. `None` means "null" for the caller to render (JSON: `null`, or `{}` for booleans).
fn cell(array: &dyn Array, i: usize) -> Option<Value> {
    if array.is_null(i) {
        return None;
    }
    let float = |f: f64| {
        if f.is_finite() {
            serde_json::Number::from_f64(f).map(Value::Number)
        } else {
            None
        }
    };
    Some(match array.data_type() {
        ArrowType::Int64 => Value::from(array.as_primitive::<Int64Type>().value(i)),
        ArrowType::Int32 => Value::from(array.as_primitive::<Int32Type>().value(i)),
        ArrowType::Int16 => Value::from(array.as_primitive::<Int16Type>().value(i)),
        ArrowType::Int8 => Value::from(array.as_primitive::<Int8Type>().value(i)),
        ArrowType::UInt64 => Value::from(array.as_primitive::<UInt64Type>().value(i)),
        ArrowType::UInt32 => Value::from(array.as_primitive::<UInt32Type>().value(i)),
        ArrowType::UInt16 => Value::from(array.as_primitive::<UInt16Type>().value(i)),
        ArrowType::UInt8 => Value::from(array.as_primitive::<UInt8Type>().value(i)),
        ArrowType::Float64 => return float(array.as_primitive::<Float64Type>().value(i)),
        ArrowType::Float32 => return float(array.as_primitive::<Float32Type>().value(i) as f64),
        ArrowType::Boolean => Value::from(array.as_boolean().value(i)),
        ArrowType::Utf8 => Value::from(array.as_string::<i32>().value(i)),
        ArrowType::LargeUtf8 => Value::from(array.as_string::<i64>().value(i)),
        ArrowType::Utf8View => Value::from(array.as_string_view().value(i)),
        ArrowType::Date32 => Value::from(date32_to_string(
            array.as_primitive::<Date32Type>().value(i),
        )),
        _ => {
            let options = FormatOptions::default();
            let text = ArrayFormatter::try_new(array, &options)
                .ok()?
                .value(i)
                .to_string();
            if let Ok(n) = text.parse::<f64>() {
                return float(n);
            }
            Value::from(text)
        }
    })
}

/// `{"0": {"col": value, ...}, "1": ...}` with null booleans as `{}` (docs/SPEC.md 2.1).
pub fn to_json(batches: &[RecordBatch]) -> Vec<u8> {
    let mut out = Map::new();
    let mut index = 0usize;
    for batch in batches {
        let schema = batch.schema();
        for i in 0..batch.num_rows() {
            let mut row = Map::with_capacity(batch.num_columns());
            for (field, column) in schema.fields().iter().zip(batch.columns()) {
                let value = match cell(column.as_ref(), i) {
                    Some(v) => v,
                    None if field.data_type() == &ArrowType::Boolean => Value::Object(Map::new()),
                    None => Value::Null,
                };
                row.insert(field.name().clone(), value);
            }
            out.insert(index.to_string(), Value::Object(row));
            index += 1;
        }
    }
    // unwrap: serialising a map of JSON values cannot fail.
    serde_json::to_vec(&Value::Object(out)).unwrap()
}

/// CSV with an empty first header cell and each row's index first (docs/SPEC.md 4.2).
pub struct CsvRows<W: std::io::Write> {
    writer: csv::Writer<W>,
    next_index: u64,
    header_written: bool,
}

impl<W: std::io::Write> CsvRows<W> {
    pub fn new(out: W) -> Self {
        CsvRows {
            writer: csv::Writer::from_writer(out),
            next_index: 0,
            header_written: false,
        }
    }

    pub fn header(&mut self, names: &[String]) -> Result<()> {
        let mut header = vec![String::new()];
        header.extend(names.iter().cloned());
        self.writer.write_record(&header).map_err(csv_error)?;
        self.header_written = true;
        Ok(())
    }

    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        if !self.header_written {
            let names: Vec<String> = batch
                .schema()
                .fields()
                .iter()
                .map(|f| f.name().clone())
                .collect();
            self.header(&names)?;
        }
        let mut record: Vec<String> = Vec::with_capacity(batch.num_columns() + 1);
        for i in 0..batch.num_rows() {
            record.clear();
            record.push(self.next_index.to_string());
            for column in batch.columns() {
                record.push(match cell(column.as_ref(), i) {
                    None => String::new(),
                    Some(Value::String(s)) => s,
                    Some(v) => v.to_string(),
                });
            }
            self.writer.write_record(&record).map_err(csv_error)?;
            self.next_index += 1;
        }
        Ok(())
    }

    pub fn rows(&self) -> u64 {
        self.next_index
    }

    pub fn finish(self) -> Result<W> {
        self.writer
            .into_inner()
            .map_err(|e| Error::internal(format!("writing CSV: {e}")))
    }
}

fn csv_error(e: csv::Error) -> Error {
    Error::internal(format!("writing CSV: {e}"))
}

/// The whole result as one CSV document.
pub fn to_csv(names: &[String], batches: &[RecordBatch]) -> Result<Vec<u8>> {
    let mut rows = CsvRows::new(Vec::new());
    rows.header(names)?;
    for b in batches {
        rows.write(b)?;
    }
    rows.finish()
}

pub fn to_parquet(schema: arrow::datatypes::SchemaRef, batches: &[RecordBatch]) -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    let mut w = parquet::arrow::ArrowWriter::try_new(&mut buf, schema, None)
        .map_err(|e| Error::internal(format!("writing Parquet: {e}")))?;
    for b in batches {
        w.write(b)
            .map_err(|e| Error::internal(format!("writing Parquet: {e}")))?;
    }
    w.close()
        .map_err(|e| Error::internal(format!("writing Parquet: {e}")))?;
    Ok(buf)
}

pub fn to_arrow_stream(
    schema: arrow::datatypes::SchemaRef,
    batches: &[RecordBatch],
) -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    let mut w = arrow_ipc::writer::StreamWriter::try_new(&mut buf, &schema)
        .map_err(|e| Error::internal(format!("writing Arrow: {e}")))?;
    for b in batches {
        w.write(b)
            .map_err(|e| Error::internal(format!("writing Arrow: {e}")))?;
    }
    w.finish()
        .map_err(|e| Error::internal(format!("writing Arrow: {e}")))?;
    drop(w);
    Ok(buf)
}
