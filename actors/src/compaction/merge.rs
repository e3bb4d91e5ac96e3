//! Merging data files into one, and rewriting a merged file without one raw file's rows. Reads
//! and writes a batch at a time: memory is bounded by the writer's row group, not by the files.

use std::collections::HashMap;
use std::fs::File;
use std::path::Path;

use arrow::array::RecordBatch;
use arrow::datatypes::{DataType as ArrowType, SchemaRef};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use parquet::schema::types::ColumnPath;

use crate::catalog::FilePart;
use crate::error::{Error, ErrorKind, Result};
use crate::ingest::stored_file_properties;
use crate::manifest::DataFile;
use crate::storage::{ObjectReader, Storage};

/// A file written by [`merge`] or [`rewrite_without`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Merged {
    pub rows: i64,
    pub bytes: i64,
    /// Where its rows came from, in row order.
    pub parts: Vec<FilePart>,
    /// Its column bounds for the manifest ([`crate::manifest::stats`]).
    pub stats: Option<String>,
}

/// Writes the rows of `files`, in their order, into the new file `out` (fsynced). `parts_of`
/// holds the parts of inputs that are merged files themselves; `progress` hears the rows
/// written so far after each batch.
pub fn merge(
    storage: &Storage,
    files: &[DataFile],
    parts_of: &HashMap<i64, Vec<FilePart>>,
    out: &Path,
    progress: &mut dyn FnMut(u64),
) -> Result<Merged> {
    let mut writer = Output::new(out);
    let mut parts = Vec::new();
    for file in files {
        let offset = writer.rows;
        let read = read_batches(storage, file, &mut |batch| {
            writer.write(batch)?;
            progress(writer.rows as u64);
            Ok(())
        })?;
        match parts_of.get(&file.id) {
            Some(inner) => parts.extend(inner.iter().map(|p| FilePart {
                first_row: p.first_row + offset,
                ..p.clone()
            })),
            None => parts.push(FilePart {
                raw_filename: file.raw_filename.clone(),
                first_row: offset,
                rows: read,
            }),
        }
    }
    let (rows, bytes, stats) = writer.finish()?;
    Ok(Merged {
        rows,
        bytes,
        parts,
        stats,
    })
}

/// Writes the merged file `file` into `out` without the rows `parts` ascribe to `raw`. `None`
/// (nothing written) when no row stays.
pub fn rewrite_without(
    storage: &Storage,
    file: &DataFile,
    parts: &[FilePart],
    raw: &str,
    out: &Path,
) -> Result<Option<Merged>> {
    let mut writer = Output::new(out);
    let mut offset = 0i64;
    read_batches(storage, file, &mut |batch| {
        let start = offset;
        offset += batch.num_rows() as i64;
        for part in parts {
            let from = part.first_row.max(start);
            let to = (part.first_row + part.rows).min(offset);
            if from < to && part.raw_filename != raw {
                writer.write(&batch.slice((from - start) as usize, (to - from) as usize))?;
            }
        }
        Ok(())
    })?;
    let mut kept = Vec::new();
    let mut first_row = 0;
    for part in parts.iter().filter(|p| p.raw_filename != raw) {
        kept.push(FilePart {
            first_row,
            ..part.clone()
        });
        first_row += part.rows;
    }
    if writer.rows == 0 {
        return Ok(None);
    }
    let (rows, bytes, stats) = writer.finish()?;
    if rows != first_row {
        return Err(Error::internal(format!(
            "{}: its parts account for {first_row} rows, {rows} were kept",
            file.path
        )));
    }
    Ok(Some(Merged {
        rows,
        bytes,
        parts: kept,
        stats,
    }))
}

/// Calls `each` with every batch of the stored `file`; returns its rows, which must be the rows
/// the manifest lists for it.
fn read_batches(
    storage: &Storage,
    file: &DataFile,
    each: &mut dyn FnMut(&RecordBatch) -> Result<()>,
) -> Result<i64> {
    let failed = |e: &dyn std::fmt::Display| Error::internal(format!("reading {}: {e}", file.path));
    // A listed file that is missing is a fault of ours, not a 404.
    let reader = ObjectReader::new(storage.objects().clone(), &file.path)
        .map_err(|e| e.with_kind(ErrorKind::Internal))?;
    let batches = ParquetRecordBatchReaderBuilder::try_new(reader)
        .and_then(|b| b.with_batch_size(8192).build())
        .map_err(|e| failed(&e))?;
    let mut rows = 0i64;
    for batch in batches {
        let batch = batch.map_err(|e| failed(&e))?;
        rows += batch.num_rows() as i64;
        each(&batch)?;
    }
    if rows != file.rows {
        return Err(failed(&format!(
            "{rows} rows where the manifest lists {}",
            file.rows
        )));
    }
    Ok(rows)
}

/// The file being written, opened at its first rows (their schema is every input's).
struct Output<'a> {
    path: &'a Path,
    writer: Option<(SchemaRef, ArrowWriter<File>)>,
    rows: i64,
}

impl<'a> Output<'a> {
    fn new(path: &'a Path) -> Output<'a> {
        Output {
            path,
            writer: None,
            rows: 0,
        }
    }

    fn failed(&self, e: &dyn std::fmt::Display) -> Error {
        Error::internal(format!("writing {}: {e}", self.path.display()))
    }

    fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        if self.writer.is_none() {
            let file = File::create(self.path)?;
            let writer =
                ArrowWriter::try_new(file, batch.schema(), Some(properties(&batch.schema())))
                    .map_err(|e| self.failed(&e))?;
            self.writer = Some((batch.schema(), writer));
        }
        let Some((schema, writer)) = self.writer.as_mut() else {
            unreachable!("opened above")
        };
        if batch.schema() != *schema {
            return Err(Error::internal(format!(
                "writing {}: files of one version with different columns",
                self.path.display()
            )));
        }
        writer
            .write(batch)
            .map_err(|e| Error::internal(format!("{e}")))?;
        self.rows += batch.num_rows() as i64;
        Ok(())
    }

    /// Closes the file and fsyncs it; returns its rows, bytes and column bounds.
    fn finish(self) -> Result<(i64, i64, Option<String>)> {
        let path = self.path;
        let Some((schema, mut writer)) = self.writer else {
            return Err(Error::internal("no rows to write".to_string()));
        };
        let failed = |e: parquet::errors::ParquetError| {
            Error::internal(format!("writing {}: {e}", path.display()))
        };
        writer.flush().map_err(failed)?;
        let stats = crate::manifest::stats::encode(&schema, writer.flushed_row_groups());
        let file = writer.into_inner().map_err(failed)?;
        file.sync_all()?;
        let bytes = file.metadata()?.len() as i64;
        Ok((self.rows, bytes, stats))
    }
}

/// Stored files' settings, with a dictionary for text columns (as uploads write them).
fn properties(schema: &SchemaRef) -> parquet::file::properties::WriterProperties {
    let mut builder = stored_file_properties();
    for field in schema.fields() {
        if matches!(
            field.data_type(),
            ArrowType::Utf8 | ArrowType::Utf8View | ArrowType::LargeUtf8
        ) {
            builder = builder
                .set_column_dictionary_enabled(ColumnPath::from(field.name().as_str()), true);
        }
    }
    builder.build()
}
