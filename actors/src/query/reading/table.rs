//! A DataFusion table over exactly the files the manifest listed at one moment (not whatever a
//! folder listing finds), with partition values taken from the manifest's partition paths. A
//! query therefore sees all of a commit or none of it.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, RecordBatch};
use arrow::datatypes::{DataType as ArrowType, Field, FieldRef, Schema as ArrowSchema, SchemaRef};
use async_trait::async_trait;
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::{DFSchema, ScalarValue};
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::physical_plan::parquet::CachedParquetFileReaderFactory;
use datafusion::datasource::physical_plan::{
    FileGroup, FileScanConfigBuilder, ParquetFileReaderFactory, ParquetSource,
};
use datafusion::datasource::source::DataSourceExec;
use datafusion::datasource::table_schema::TableSchema;
use datafusion::error::Result as DfResult;
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown, TableType};
use datafusion::object_store::path::Path;
use datafusion::object_store::ObjectMeta;
use datafusion::physical_plan::ExecutionPlan;

use super::file_pruning::{self, Candidate, TableColumns};
use super::local_reader::LocalReaderFactory;
use crate::error::{Error, Result};
use crate::ingest::arrow_type;
use crate::manifest::DataFile;
use crate::schema::{DataType, ValidSchema};
use crate::storage::{decode_partition_value, DataFusionStore, Storage};

#[derive(Debug)]
struct ManifestFile {
    /// The object in the storage's DataFusion store, its encoded partition folders as they are
    /// kept (`PartitionedFile::new` would percent-encode them a second time: `%` -> `%25`).
    location: Path,
    size: u64,
    partition_values: Vec<ScalarValue>,
    rows: u64,
    /// Its column bounds from the manifest, when recorded.
    stats: Option<String>,
}

#[derive(Debug)]
pub struct ManifestTable {
    /// File columns (schema order) followed by the partition columns (index order): the scan's.
    table_schema: SchemaRef,
    /// The columns in the dataset schema's order, as the table shows them (`SELECT *`, the
    /// catalog tables): a partition column where the schema puts it, not last.
    shown_schema: SchemaRef,
    /// For each shown column, its index in `table_schema`.
    shown_at: Vec<usize>,
    file_schema: SchemaRef,
    partition_fields: Vec<FieldRef>,
    files: Vec<ManifestFile>,
    /// Where the files are read from; registered with the session when it lacks it.
    store: DataFusionStore,
}

impl ManifestTable {
    pub fn new(
        storage: &Storage,
        schema: &ValidSchema,
        files: &[DataFile],
    ) -> Result<ManifestTable> {
        let field = |c: &crate::schema::ValidColumn| {
            Arc::new(Field::new(&c.name, arrow_type(c.data_type), true))
        };
        // Strings are read as views: the Parquet reader then points into its decoded pages
        // instead of copying every value out of the dictionary, and grouping or comparing short
        // strings works on their inlined bytes (profile in benches/README.md, "Profiles").
        let file_field = |c: &crate::schema::ValidColumn| match c.data_type {
            DataType::String => Arc::new(Field::new(&c.name, ArrowType::Utf8View, true)),
            _ => field(c),
        };
        let file_fields: Vec<FieldRef> = schema.data_columns().map(file_field).collect();
        let partitions: Vec<&crate::schema::ValidColumn> = schema.partition_columns().collect();
        let partition_fields: Vec<FieldRef> = partitions.iter().map(|c| field(c)).collect();
        let file_schema = Arc::new(ArrowSchema::new(file_fields.clone()));
        let mut all = file_fields;
        all.extend(partition_fields.iter().cloned());
        let mut manifest_files = Vec::with_capacity(files.len());
        for f in files {
            let location = storage.objects().location(&f.path)?;
            let values = partition_values(&f.partition_path, &partitions)?;
            manifest_files.push(ManifestFile {
                location,
                size: f.bytes as u64,
                partition_values: values,
                rows: f.rows.max(0) as u64,
                stats: f.stats.clone(),
            });
        }
        let position = |name: &str| all.iter().position(|f| f.name() == name);
        let shown_at: Vec<usize> = schema
            .columns()
            .iter()
            .filter_map(|c| position(&c.name))
            .collect();
        let shown: Vec<FieldRef> = shown_at.iter().map(|i| all[*i].clone()).collect();
        Ok(ManifestTable {
            shown_schema: Arc::new(ArrowSchema::new(shown)),
            shown_at,
            table_schema: Arc::new(ArrowSchema::new(all)),
            file_schema,
            partition_fields,
            files: manifest_files,
            store: storage.objects().datafusion_store(),
        })
    }

    /// Whether `expr` reads partition columns only: such a filter is answered exactly by the
    /// files a scan keeps ([`Self::prune_by_partition`]).
    pub(super) fn is_partition_filter(&self, expr: &Expr) -> bool {
        let columns = expr.column_refs();
        !columns.is_empty()
            && columns
                .iter()
                .all(|c| self.partition_fields.iter().any(|f| f.name() == &c.name))
    }

    /// Keeps the files whose partition values can satisfy every partition-only filter, then
    /// those whose column bounds may satisfy the other filters ([`file_pruning`]).
    fn prune(&self, state: &dyn Session, filters: &[Expr]) -> DfResult<Vec<&ManifestFile>> {
        let (partition, other): (Vec<&Expr>, Vec<&Expr>) =
            filters.iter().partition(|f| self.is_partition_filter(f));
        let files = self.prune_by_partition(state, &partition)?;
        let candidates: Vec<Candidate<'_>> = files
            .iter()
            .map(|f| Candidate {
                rows: f.rows,
                partition_values: &f.partition_values,
                stats: f.stats.as_deref(),
            })
            .collect();
        let table = TableColumns {
            schema: &self.table_schema,
            file_fields: self.file_schema.fields(),
            partition_fields: &self.partition_fields,
        };
        let keep = file_pruning::may_match(state, &table, &other, &candidates);
        Ok(files
            .into_iter()
            .zip(keep)
            .filter(|(_, k)| *k)
            .map(|(f, _)| f)
            .collect())
    }

    /// Keeps the files whose partition values satisfy every one of `filters` (exactly: they
    /// are evaluated on the values themselves).
    fn prune_by_partition(
        &self,
        state: &dyn Session,
        filters: &[&Expr],
    ) -> DfResult<Vec<&ManifestFile>> {
        if filters.is_empty() || self.files.is_empty() {
            return Ok(self.files.iter().collect());
        }
        let schema = Arc::new(ArrowSchema::new(self.partition_fields.clone()));
        let columns: Vec<ArrayRef> = (0..self.partition_fields.len())
            .map(|i| {
                ScalarValue::iter_to_array(self.files.iter().map(|f| f.partition_values[i].clone()))
            })
            .collect::<DfResult<_>>()?;
        let batch = RecordBatch::try_new(schema.clone(), columns)?;
        let df_schema = DFSchema::try_from(schema.as_ref().clone())?;
        let mut keep = vec![true; self.files.len()];
        for filter in filters {
            let predicate = state.create_physical_expr((*filter).clone(), &df_schema)?;
            let result = predicate.evaluate(&batch)?.into_array(batch.num_rows())?;
            let mask = result.as_boolean();
            for (i, k) in keep.iter_mut().enumerate() {
                *k &= mask.is_valid(i) && mask.value(i);
            }
        }
        Ok(self
            .files
            .iter()
            .zip(keep)
            .filter(|(_, k)| *k)
            .map(|(f, _)| f)
            .collect())
    }
}

#[async_trait]
impl TableProvider for ManifestTable {
    fn schema(&self) -> SchemaRef {
        self.shown_schema.clone()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> DfResult<Vec<TableProviderFilterPushDown>> {
        // Filters only skip whole files (by partition values and column bounds); the engine
        // still applies every filter itself.
        Ok(vec![TableProviderFilterPushDown::Inexact; filters.len()])
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        let files = self.prune(state, filters)?;
        let groups_wanted = state.config().target_partitions().max(1);
        let mut groups: Vec<Vec<PartitionedFile>> =
            vec![Vec::new(); groups_wanted.min(files.len()).max(1)];
        let count = groups.len();
        for (i, f) in files.into_iter().enumerate() {
            let mut pf = PartitionedFile::from(ObjectMeta {
                location: f.location.clone(),
                last_modified: chrono::DateTime::UNIX_EPOCH,
                size: f.size,
                e_tag: None,
                version: None,
            });
            pf.partition_values = f.partition_values.clone();
            groups[i % count].push(pf);
        }
        let table_schema = TableSchema::builder(self.file_schema.clone())
            .with_table_partition_cols(self.partition_fields.clone())
            .build();
        let env = state.runtime_env();
        if env.object_store(&self.store.url).is_err() {
            env.register_object_store(self.store.url.as_ref(), self.store.store.clone());
        }
        // Footers (and page indexes) are read once per file, not once per query: the engine's
        // bounded metadata cache keys them by path and size, and a data file's path names the
        // upload that wrote it, so a path never holds other bytes.
        let cached = CachedParquetFileReaderFactory::new(
            self.store.store.clone(),
            env.cache_manager.get_file_metadata_cache(),
        );
        let readers: Arc<dyn ParquetFileReaderFactory> =
            if self.store.url == ObjectStoreUrl::local_filesystem() {
                Arc::new(LocalReaderFactory { cached })
            } else {
                Arc::new(cached)
            };
        let source =
            Arc::new(ParquetSource::new(table_schema).with_parquet_file_reader_factory(readers));
        let config = FileScanConfigBuilder::new(self.store.url.clone(), source)
            .with_file_groups(groups.into_iter().map(FileGroup::new).collect())
            .with_projection_indices(Some(self.scanned(projection)))?
            .with_limit(limit)
            .build();
        Ok(DataSourceExec::from_data_source(config))
    }
}

impl ManifestTable {
    /// The scan's columns for `projection` of the shown columns (all of them when `None`), in
    /// the projection's order.
    fn scanned(&self, projection: Option<&Vec<usize>>) -> Vec<usize> {
        match projection {
            Some(p) => p.iter().map(|i| self.shown_at[*i]).collect(),
            None => self.shown_at.clone(),
        }
    }
}

/// Typed partition values from `p0=v/p1=w` (percent-decoded), in partition index order.
fn partition_values(
    path: &str,
    partitions: &[&crate::schema::ValidColumn],
) -> Result<Vec<ScalarValue>> {
    let segments: Vec<&str> = if path.is_empty() {
        Vec::new()
    } else {
        path.split('/').collect()
    };
    if segments.len() != partitions.len() {
        return Err(Error::internal(format!(
            "partition path [{path}] does not match the schema"
        )));
    }
    segments
        .iter()
        .zip(partitions)
        .map(|(segment, column)| {
            let raw = segment
                .strip_prefix(&format!("{}=", column.name))
                .ok_or_else(|| {
                    Error::internal(format!("partition path [{path}] does not match the schema"))
                })?;
            let text = decode_partition_value(raw);
            let bad = || {
                Error::internal(format!(
                    "partition value [{text}] of [{}] does not parse",
                    column.name
                ))
            };
            Ok(match column.data_type {
                DataType::String => ScalarValue::Utf8(Some(text.clone())),
                DataType::Int => ScalarValue::Int64(Some(text.parse().map_err(|_| bad())?)),
                DataType::Double => ScalarValue::Float64(Some(text.parse().map_err(|_| bad())?)),
                DataType::Boolean => ScalarValue::Boolean(Some(text.parse().map_err(|_| bad())?)),
                DataType::Date => {
                    let d =
                        chrono::NaiveDate::parse_from_str(&text, "%Y-%m-%d").map_err(|_| bad())?;
                    ScalarValue::Date32(Some(crate::ingest::date_to_days(d)))
                }
            })
        })
        .collect()
}
