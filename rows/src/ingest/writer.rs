//! Writes validated batches as Parquet files in staging, one file (or more) per partition.
//!
//! Partition columns live in the folder names (`col=value`), not in the files, as Hive lays
//! them out. Memory stays bounded: a writer's buffered row group is flushed when the writers
//! together hold more than [`BUFFER_BUDGET`] bytes, and at most [`MAX_OPEN_WRITERS`] files are
//! open at once (a partition seen again after its file was closed gets a new file). Written on
//! several threads (`writer_lanes`), each lane holds its share of both.

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{ArrayRef, AsArray, RecordBatch, UInt32Array};
use arrow::compute::take_record_batch;
use arrow::datatypes::{Date32Type, Float64Type, Int64Type, Schema as ArrowSchema};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, Encoding};
use parquet::file::properties::{WriterProperties, WriterVersion};
use parquet::schema::types::ColumnPath;

use crate::error::{Error, Result};
use crate::schema::{DataType, ValidColumn};
use crate::storage::{encode_partition_value, Durability, WriteBehind};

const BUFFER_BUDGET: usize = 24 * 1024 * 1024;
const MAX_OPEN_WRITERS: usize = 64;

/// Values of a file's first rows looked at to judge a text column, and the fewest that say
/// anything (a smaller start keeps the dictionary).
const DISTINCT_SAMPLE: usize = 2048;
const DISTINCT_MIN_SAMPLE: usize = 64;

/// Whether more than half of the first [`DISTINCT_SAMPLE`] non-null values of a text `column`
/// differ from each other.
fn mostly_distinct(column: &ArrayRef) -> bool {
    let Some(values) = column.as_string_opt::<i32>() else {
        return false;
    };
    let mut seen = std::collections::HashSet::new();
    let mut sampled = 0;
    for value in values.iter().flatten().take(DISTINCT_SAMPLE) {
        seen.insert(value);
        sampled += 1;
    }
    sampled >= DISTINCT_MIN_SAMPLE && seen.len() * 2 > sampled
}

/// One Parquet file written to staging, with where it belongs.
#[derive(Debug, Clone)]
pub struct StagedDataFile {
    /// "" when unpartitioned, else `p0=v/p1=w`.
    pub partition_path: String,
    pub staged_path: PathBuf,
    pub rows: u64,
    pub bytes: u64,
    /// Its column bounds for the manifest ([`crate::stats`]).
    pub stats: Option<String>,
}

/// The settings every stored data file starts from (see [`PartitionedWriter::new`] for why);
/// text columns then get a dictionary. Compaction writes merged files with the same ones.
pub fn stored_file_properties() -> parquet::file::properties::WriterPropertiesBuilder {
    WriterProperties::builder()
        .set_writer_version(WriterVersion::PARQUET_2_0)
        .set_encoding(Encoding::PLAIN)
        .set_data_page_v2_compression_ratio_threshold(0.875)
        .set_compression(Compression::LZ4_RAW)
        .set_max_row_group_row_count(Some(512 * 1024))
        .set_dictionary_enabled(false)
        .set_created_by(format!("rapid-rs {}", env!("CARGO_PKG_VERSION")))
}

struct OpenFile {
    writer: ArrowWriter<WriteBehind>,
    path: PathBuf,
    rows: u64,
}

pub(super) struct PartitionedWriter {
    dir: PathBuf,
    /// Schema of the stored files: the non-partition columns.
    file_schema: Arc<ArrowSchema>,
    /// Positions (in the batch) of the stored columns, and of the partition columns in index order.
    data_positions: Vec<usize>,
    partition_positions: Vec<(usize, String, DataType)>,
    open: HashMap<String, OpenFile>,
    done: Vec<StagedDataFile>,
    /// Staged file numbers: `next_file`, then every `file_step`-th (lanes share one folder).
    next_file: usize,
    file_step: usize,
    /// Buffered row groups and open files this writer may hold (its share, in lanes).
    budget: usize,
    max_open: usize,
    properties: WriterProperties,
    /// Text columns (position in the file batch, path) written with a dictionary by default.
    text_columns: Vec<(usize, ColumnPath)>,
    /// How the finished files are synced.
    durability: Durability,
}

impl PartitionedWriter {
    pub(super) fn new(
        dir: &Path,
        batch_schema: &ArrowSchema,
        columns: &[ValidColumn],
        durability: Durability,
    ) -> Result<Self> {
        std::fs::create_dir_all(dir)?;
        let mut partitions: Vec<(usize, usize, String, DataType)> = columns
            .iter()
            .enumerate()
            .filter_map(|(pos, c)| {
                c.partition_index
                    .map(|p| (p, pos, c.name.clone(), c.data_type))
            })
            .collect();
        partitions.sort_by_key(|p| p.0);
        let data_positions: Vec<usize> = columns
            .iter()
            .enumerate()
            .filter(|(_, c)| c.partition_index.is_none())
            .map(|(pos, _)| pos)
            .collect();
        let file_schema = Arc::new(batch_schema.project(&data_positions).map_err(arrow_error)?);
        // Dictionary encoding pays off for repeated text; for numbers and dates it mostly costs
        // hashing every value before falling back, so it is on for string columns only (and off,
        // file by file, for mostly distinct text: see file_properties).
        // LZ4_RAW: decompressing it took 13% of a group-by where Snappy took 21%, and it
        // compresses faster (upload 0.88 s -> 0.73 s for 1M rows; benches/README.md, "peers").
        // Version 2 data pages say whether they are compressed: a page LZ4 shrinks by less than
        // an eighth (bit-packed dictionary indexes, booleans) is kept as it is and never
        // decompressed. Encodings stay PLAIN (version 2 would default to delta encodings).
        let mut properties = stored_file_properties();
        let text_columns: Vec<(usize, ColumnPath)> = data_positions
            .iter()
            .enumerate()
            .filter(|(_, &pos)| columns[pos].data_type == DataType::String)
            .map(|(i, &pos)| (i, ColumnPath::from(columns[pos].name.as_str())))
            .collect();
        for (_, path) in &text_columns {
            properties = properties.set_column_dictionary_enabled(path.clone(), true);
        }
        Ok(PartitionedWriter {
            dir: dir.to_path_buf(),
            file_schema,
            data_positions,
            partition_positions: partitions
                .into_iter()
                .map(|(_, pos, n, t)| (pos, n, t))
                .collect(),
            open: HashMap::new(),
            done: Vec::new(),
            next_file: 0,
            file_step: 1,
            budget: BUFFER_BUDGET,
            max_open: MAX_OPEN_WRITERS,
            properties: properties.build(),
            text_columns,
            durability,
        })
    }

    /// Whether the stored files are split into partition folders.
    pub(super) fn is_partitioned(&self) -> bool {
        !self.partition_positions.is_empty()
    }

    /// A writer for lane `lane` of `lanes`: the same files' settings, a `lanes`-th of the
    /// memory and open files, and file numbers of its own.
    pub(super) fn lane(&self, lane: usize, lanes: usize) -> PartitionedWriter {
        PartitionedWriter {
            dir: self.dir.clone(),
            file_schema: self.file_schema.clone(),
            data_positions: self.data_positions.clone(),
            partition_positions: self.partition_positions.clone(),
            open: HashMap::new(),
            done: Vec::new(),
            next_file: lane,
            file_step: lanes,
            budget: (BUFFER_BUDGET / lanes).max(1),
            max_open: (MAX_OPEN_WRITERS / lanes).max(1),
            properties: self.properties.clone(),
            text_columns: self.text_columns.clone(),
            durability: self.durability,
        }
    }

    /// The stored columns of `batch` (all columns, schema order), by partition path, each
    /// partition's rows in their order.
    pub(super) fn split(&self, batch: &RecordBatch) -> Result<Vec<(String, RecordBatch)>> {
        let data = batch.project(&self.data_positions).map_err(arrow_error)?;
        if self.partition_positions.is_empty() {
            return Ok(vec![(String::new(), data)]);
        }
        let groups = match self.groups_by_text(batch) {
            Some(groups) => groups,
            None => self.groups_by_key(batch),
        };
        if groups.len() == 1 {
            // unwrap: exactly one group exists.
            let (path, _) = groups.into_iter().next().unwrap();
            return Ok(vec![(path, data)]);
        }
        groups
            .into_iter()
            .map(|(path, rows)| {
                take_record_batch(&data, &UInt32Array::from(rows))
                    .map(|part| (path, part))
                    .map_err(arrow_error)
            })
            .collect()
    }

    /// Splits `batch` (all columns, schema order) by partition and appends each part.
    pub(super) fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        for (path, part) in self.split(batch)? {
            self.append(path, &part)?;
        }
        Ok(())
    }

    /// Rows by partition path, the path built for every row.
    fn groups_by_key(&self, batch: &RecordBatch) -> HashMap<String, Vec<u32>> {
        let mut groups: HashMap<String, Vec<u32>> = HashMap::new();
        let mut key = String::new();
        for row in 0..batch.num_rows() {
            key.clear();
            for (i, (pos, name, data_type)) in self.partition_positions.iter().enumerate() {
                if i > 0 {
                    key.push('/');
                }
                key.push_str(name);
                key.push('=');
                key.push_str(&encode_partition_value(&canonical_value(
                    *data_type,
                    batch.column(*pos),
                    row,
                )));
            }
            match groups.get_mut(key.as_str()) {
                Some(rows) => rows.push(row as u32),
                None => {
                    groups.insert(key.clone(), vec![row as u32]);
                }
            }
        }
        groups
    }

    /// The common case of one text partition column: rows grouped by the value itself, the
    /// path built once per value. `None` for other layouts, or if two values gave one path (the
    /// general grouping keeps such rows in one group, in order).
    fn groups_by_text(&self, batch: &RecordBatch) -> Option<HashMap<String, Vec<u32>>> {
        let [(pos, name, DataType::String)] = self.partition_positions.as_slice() else {
            return None;
        };
        let values = batch.column(*pos).as_string::<i32>();
        let mut by_value: HashMap<&str, Vec<u32>> = HashMap::new();
        for row in 0..batch.num_rows() {
            by_value
                .entry(values.value(row))
                .or_default()
                .push(row as u32);
        }
        let count = by_value.len();
        let groups: HashMap<String, Vec<u32>> = by_value
            .into_iter()
            .map(|(v, rows)| (format!("{name}={}", encode_partition_value(v)), rows))
            .collect();
        (groups.len() == count).then_some(groups)
    }

    pub(super) fn append(&mut self, partition_path: String, batch: &RecordBatch) -> Result<()> {
        if !self.open.contains_key(&partition_path) {
            if self.open.len() >= self.max_open {
                self.close_largest()?;
            }
            let path = crate::storage::staged_parquet(&self.dir, self.next_file);
            self.next_file += self.file_step;
            let file = WriteBehind::new(File::create(&path)?, self.durability);
            let writer = ArrowWriter::try_new(
                file,
                self.file_schema.clone(),
                Some(self.file_properties(batch)),
            )
            .map_err(parquet_error)?;
            self.open.insert(
                partition_path.clone(),
                OpenFile {
                    writer,
                    path,
                    rows: 0,
                },
            );
        }
        // unwrap: inserted just above when missing.
        let open = self.open.get_mut(&partition_path).unwrap();
        open.writer.write(batch).map_err(parquet_error)?;
        open.rows += batch.num_rows() as u64;
        self.keep_within_budget()
    }

    /// The settings of a file whose first rows are `first`: dictionary encoding is turned off
    /// for text columns whose values there are mostly distinct (ids, free text). Such a
    /// dictionary only grows until its page limit: every value hashed, and a dictionary page as
    /// large as the values plus the indexes (an upload spent a tenth of its time on it).
    fn file_properties(&self, first: &RecordBatch) -> WriterProperties {
        let distinct: Vec<&ColumnPath> = self
            .text_columns
            .iter()
            .filter(|(i, _)| mostly_distinct(first.column(*i)))
            .map(|(_, path)| path)
            .collect();
        if distinct.is_empty() {
            return self.properties.clone();
        }
        let mut builder = self.properties.clone().into_builder();
        for path in distinct {
            builder = builder.set_column_dictionary_enabled(path.clone(), false);
        }
        builder.build()
    }

    fn keep_within_budget(&mut self) -> Result<()> {
        loop {
            let total: usize = self
                .open
                .values()
                .map(|f| f.writer.in_progress_size())
                .sum();
            if total <= self.budget {
                return Ok(());
            }
            let Some(largest) = self
                .open
                .values_mut()
                .max_by_key(|f| f.writer.in_progress_size())
            else {
                return Ok(());
            };
            largest.writer.flush().map_err(parquet_error)?;
        }
    }

    fn close_largest(&mut self) -> Result<()> {
        let key = self
            .open
            .iter()
            .max_by_key(|(_, f)| f.rows)
            .map(|(k, _)| k.clone());
        if let Some(key) = key {
            self.close(&key)?;
        }
        Ok(())
    }

    /// Finishes a file (footer written) and records it; returns it, still to be synced.
    fn close_unsynced(&mut self, partition_path: &str) -> Result<Option<File>> {
        let Some(open) = self.open.remove(partition_path) else {
            return Ok(None);
        };
        let mut writer = open.writer;
        writer.flush().map_err(parquet_error)?;
        let stats = crate::stats::encode(&self.file_schema, writer.flushed_row_groups());
        let file = writer.into_inner().map_err(parquet_error)?.into_inner();
        self.done.push(StagedDataFile {
            partition_path: partition_path.to_string(),
            staged_path: open.path,
            rows: open.rows,
            bytes: file.metadata()?.len(),
            stats,
        });
        Ok(Some(file))
    }

    /// A file closed to make room is synced at once, on this writer thread, while parsing goes
    /// on (durable before it can become reachable: the storage module's discipline).
    fn close(&mut self, partition_path: &str) -> Result<()> {
        if let Some(file) = self.close_unsynced(partition_path)? {
            self.durability.sync_file(&file)?;
        }
        Ok(())
    }

    /// The files still open are finished, then synced all at once.
    pub(super) fn finish(mut self) -> Result<Vec<StagedDataFile>> {
        let keys: Vec<String> = self.open.keys().cloned().collect();
        let mut files = Vec::with_capacity(keys.len());
        for key in keys {
            files.extend(self.close_unsynced(&key)?);
        }
        self.durability.sync_files(&files)?;
        Ok(self.done)
    }
}

/// The canonical text of a partition value: dates `YYYY-MM-DD`, booleans `true`/`false`.
fn canonical_value(data_type: DataType, array: &ArrayRef, row: usize) -> String {
    match data_type {
        DataType::Int => array.as_primitive::<Int64Type>().value(row).to_string(),
        DataType::Double => array.as_primitive::<Float64Type>().value(row).to_string(),
        DataType::Boolean => array.as_boolean().value(row).to_string(),
        DataType::Date => super::date32_to_string(array.as_primitive::<Date32Type>().value(row)),
        DataType::String => array.as_string::<i32>().value(row).to_string(),
    }
}

fn arrow_error(e: arrow::error::ArrowError) -> Error {
    Error::internal(format!("arrow: {e}"))
}

fn parquet_error(e: parquet::errors::ParquetError) -> Error {
    Error::internal(format!("writing parquet: {e}"))
}

#[cfg(test)]
#[path = "writer_tests.rs"]
mod tests;
