//! Running a checked query over one version of a dataset.

use std::sync::Arc;

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use datafusion::error::DataFusionError;
use datafusion::execution::SendableRecordBatchStream;
use datafusion::prelude::{SessionConfig, SessionContext};

use super::request::QueryRequest;
use super::table::ManifestTable;
use crate::catalog::Catalog;
use crate::dataset::manifest::snapshot;
use crate::error::{Error, Result};
use crate::registry::DatasetRecord;
use crate::schema::ValidSchema;
use crate::storage::{LeaseGuard, Storage};

/// The synchronous endpoint answers at most this many rows (SPEC.md, Limits).
pub const SYNC_ROW_LIMIT: u64 = 100_000;

/// A query ready to run: checked, with its files fixed from one manifest read.
pub struct PreparedQuery {
    ctx: SessionContext,
    sql: String,
    /// Keeps the snapshot's files on disk until the query is dropped.
    _lease: LeaseGuard,
}

impl PreparedQuery {
    /// Checks `request` against the version's schema and takes the manifest's file list now.
    /// `cap` bounds the rows asked of the engine (the sync endpoint asks for one more than it
    /// answers, to know whether there are more without reading them all).
    pub fn new(
        catalog: &Catalog,
        storage: &Storage,
        record: &DatasetRecord,
        schema: &ValidSchema,
        version: i64,
        request: &QueryRequest,
        cap: Option<u64>,
    ) -> Result<PreparedQuery> {
        let names: Vec<String> = schema.columns().iter().map(|c| c.name.clone()).collect();
        let checked = request.check(&names)?;
        let (files, lease) = snapshot(catalog, storage, record.id, version)?;
        let table = ManifestTable::new(storage, schema, &files)?;
        let config = SessionConfig::new()
            .with_target_partitions(2)
            .with_information_schema(false);
        let ctx = super::session::new_context(config);
        ctx.register_table("dataset", Arc::new(table))
            .map_err(engine_error)?;
        Ok(PreparedQuery {
            ctx,
            sql: checked.to_sql("dataset", cap),
            _lease: lease,
        })
    }

    pub async fn stream(&self) -> Result<SendableRecordBatchStream> {
        let df = self.ctx.sql(&self.sql).await.map_err(engine_error)?;
        df.execute_stream().await.map_err(engine_error)
    }

    /// Runs to completion; fine for results bounded by a cap.
    pub async fn collect(&self) -> Result<(SchemaRef, Vec<RecordBatch>)> {
        let df = self.ctx.sql(&self.sql).await.map_err(engine_error)?;
        let planned = Arc::new(df.schema().as_arrow().clone());
        let batches = df.collect().await.map_err(engine_error)?;
        // The batches' own schema: the analyzer rules may refine types and nullability after
        // the statement was planned.
        let schema = batches.first().map_or(planned, |b| b.schema());
        Ok((schema, batches))
    }
}

/// Planning and type errors come from the query the user wrote (400); file and I/O errors are ours.
pub fn engine_error(e: DataFusionError) -> Error {
    match e.find_root() {
        DataFusionError::IoError(_)
        | DataFusionError::ObjectStore(_)
        | DataFusionError::ParquetError(_)
        | DataFusionError::Internal(_) => Error::internal(format!("query engine: {e}")),
        root => Error::invalid(format!(
            "Query failed to execute: {}",
            one_line(&root.to_string())
        )),
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}
