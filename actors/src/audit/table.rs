//! The audit log as a SQL table, `"_system"."audit"."events"` (docs/API.md): the same rows as
//! `GET /api/audit`, for the same readers (USER_ADMIN or DATA_ADMIN; the session shows the
//! `_system` catalog to no one else). Rows are read in pages of the store as the scan asks,
//! so a statement over a long log holds one page at a time.

use std::sync::Arc;

use arrow::array::{
    ArrayRef, Int64Builder, ListBuilder, RecordBatch, StringBuilder, TimestampMillisecondBuilder,
};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef, TimeUnit};
use datafusion::catalog::streaming::StreamingTable;
use datafusion::catalog::TableProvider;
use datafusion::error::DataFusionError;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::streaming::PartitionStream;

use super::{AuditRecord, AuditStore};

/// The reserved layer (catalog) and schema the table is under.
pub const SYSTEM_CATALOG: &str = "_system";
pub const AUDIT_SCHEMA: &str = "audit";
pub const EVENTS_TABLE: &str = "events";

/// Rows read from the store per batch.
const PAGE: usize = 8_192;

pub fn schema() -> SchemaRef {
    let text = |name: &str| Field::new(name, DataType::Utf8, true);
    let int = |name: &str| Field::new(name, DataType::Int64, true);
    let list = |name: &str| {
        Field::new(
            name,
            DataType::List(Arc::new(Field::new("item", DataType::Utf8, true))),
            false,
        )
    };
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new(
            "at",
            DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into())),
            false,
        ),
        text("subject_id"),
        text("subject_name"),
        Field::new("front", DataType::Utf8, false),
        Field::new("action", DataType::Utf8, false),
        text("layer"),
        text("domain"),
        text("dataset"),
        int("version"),
        int("commit"),
        list("columns"),
        list("policies"),
        int("rows"),
        int("bytes"),
        Field::new("status", DataType::Int64, false),
        Field::new("duration_ms", DataType::Int64, false),
        text("request_id"),
        text("client_addr"),
        text("statement"),
    ]))
}

/// The table over `store`.
pub fn events_table(
    store: Arc<dyn AuditStore>,
) -> datafusion::error::Result<Arc<dyn TableProvider>> {
    let schema = schema();
    let partition = Arc::new(Events {
        store,
        schema: schema.clone(),
    });
    Ok(Arc::new(StreamingTable::try_new(schema, vec![partition])?))
}

struct Events {
    store: Arc<dyn AuditStore>,
    schema: SchemaRef,
}

impl std::fmt::Debug for Events {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AuditEvents")
    }
}

impl PartitionStream for Events {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn execute(&self, _: Arc<TaskContext>) -> SendableRecordBatchStream {
        let (store, schema) = (self.store.clone(), self.schema.clone());
        let pages = futures_util::stream::unfold(Some(0i64), move |after| {
            let (store, schema) = (store.clone(), schema.clone());
            async move {
                let after = after?;
                let read = tokio::task::spawn_blocking(move || store.chain_from(after, PAGE)).await;
                let rows = match read {
                    Ok(Ok(rows)) => rows,
                    Ok(Err(e)) => return Some((Err(DataFusionError::External(Box::new(e))), None)),
                    Err(e) => return Some((Err(DataFusionError::External(Box::new(e))), None)),
                };
                let last = rows.last().map(|r| r.id)?;
                let next = (rows.len() == PAGE).then_some(last);
                Some((batch(&schema, &rows), next))
            }
        });
        Box::pin(RecordBatchStreamAdapter::new(self.schema.clone(), pages))
    }
}

fn batch(schema: &SchemaRef, rows: &[AuditRecord]) -> datafusion::error::Result<RecordBatch> {
    let mut id = Int64Builder::new();
    let mut at = TimestampMillisecondBuilder::new().with_timezone("UTC");
    let mut texts: Vec<StringBuilder> = (0..7).map(|_| StringBuilder::new()).collect();
    let mut ints: Vec<Int64Builder> = (0..6).map(|_| Int64Builder::new()).collect();
    let mut lists: Vec<ListBuilder<StringBuilder>> = (0..2)
        .map(|_| ListBuilder::new(StringBuilder::new()))
        .collect();
    let mut tail: Vec<StringBuilder> = (0..3).map(|_| StringBuilder::new()).collect();
    for r in rows {
        let e = &r.entry;
        id.append_value(r.id);
        let millis = chrono::DateTime::parse_from_rfc3339(&e.at)
            .map(|t| t.timestamp_millis())
            .map_err(|err| DataFusionError::Internal(format!("an audit row's time: {err}")))?;
        at.append_value(millis);
        for (b, v) in texts.iter_mut().zip([
            e.subject_id.as_deref(),
            e.subject_name.as_deref(),
            Some(e.front.as_str()),
            Some(e.action.as_str()),
            e.layer.as_deref(),
            e.domain.as_deref(),
            e.dataset.as_deref(),
        ]) {
            b.append_option(v);
        }
        for (b, v) in ints.iter_mut().zip([
            e.version,
            e.commit,
            e.rows.map(|n| n as i64),
            e.bytes.map(|n| n as i64),
            Some(i64::from(e.status)),
            Some(e.duration_ms as i64),
        ]) {
            b.append_option(v);
        }
        for (b, values) in lists.iter_mut().zip([&e.columns, &e.policies]) {
            for v in values {
                b.values().append_value(v);
            }
            b.append(true);
        }
        for (b, v) in tail.iter_mut().zip([
            e.request_id.as_deref(),
            e.client_addr.as_deref(),
            e.statement.as_deref(),
        ]) {
            b.append_option(v);
        }
    }
    let mut columns: Vec<ArrayRef> = vec![Arc::new(id.finish()), Arc::new(at.finish())];
    for mut b in texts {
        columns.push(Arc::new(b.finish()));
    }
    // version, commit, columns, policies, rows, bytes, status, duration_ms in the schema's order.
    let mut ints: Vec<ArrayRef> = ints
        .into_iter()
        .map(|mut b| Arc::new(b.finish()) as ArrayRef)
        .collect();
    let mut lists: Vec<ArrayRef> = lists
        .into_iter()
        .map(|mut b| Arc::new(b.finish()) as ArrayRef)
        .collect();
    columns.push(ints.remove(0));
    columns.push(ints.remove(0));
    columns.push(lists.remove(0));
    columns.push(lists.remove(0));
    columns.extend(ints);
    for mut b in tail {
        columns.push(Arc::new(b.finish()));
    }
    RecordBatch::try_new(schema.clone(), columns).map_err(DataFusionError::from)
}
