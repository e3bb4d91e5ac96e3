//! One checked statement planned over a session's tables and run to the end, as the query
//! endpoint runs its plans: leaves that yield after every batch (so the time limit can stop
//! them), pipelines that end with the work (see admission::work_scope).

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use datafusion::execution::SendableRecordBatchStream;
use datafusion::logical_expr::LogicalPlan;
use datafusion::logical_expr::LogicalPlanBuilder;
use datafusion::physical_plan::{collect, execute_stream_partitioned};
use datafusion::prelude::SessionContext;
use datafusion::sql::parser::Statement as DfStatement;

use crate::error::Result;
use crate::query::admission::{work_scope, yielding};
use crate::query::engine_error;

/// The answer of `statement` in `ctx`, at most `cap` rows: its schema and batches.
pub(crate) async fn collect_capped(
    ctx: &SessionContext,
    statement: DfStatement,
    cap: usize,
) -> Result<(SchemaRef, Vec<RecordBatch>)> {
    let state = ctx.state();
    let plan = state
        .statement_to_plan(statement)
        .await
        .map_err(engine_error)?;
    // An EXPLAIN must stay the plan's root (a limit above it fails planning); its answer is
    // a few rows anyway.
    let plan = match plan {
        LogicalPlan::Explain(_) | LogicalPlan::Analyze(_) => plan,
        plan => LogicalPlanBuilder::from(plan)
            .limit(0, Some(cap))
            .and_then(|b| b.build())
            .map_err(engine_error)?,
    };
    let physical = state
        .create_physical_plan(&plan)
        .await
        .map_err(engine_error)?;
    let physical = yielding::yield_per_batch(physical).map_err(engine_error)?;
    let planned = physical.schema();
    let batches = collect(physical, work_scope::task_context(ctx))
        .await
        .map_err(engine_error)?;
    // As PreparedQuery::collect: the batches' own schema, refined after planning.
    let schema = batches.first().map_or(planned, |b| b.schema());
    Ok((schema, batches))
}

/// The logical plan of `statement` in `ctx` (its errors: the caller's, before any job starts).
pub(crate) async fn plan(ctx: &SessionContext, statement: DfStatement) -> Result<LogicalPlan> {
    ctx.state()
        .statement_to_plan(statement)
        .await
        .map_err(engine_error)
}

/// The answer's column names and one stream per output partition of `plan` (large answers).
pub(crate) async fn partition_streams(
    ctx: &SessionContext,
    plan: &LogicalPlan,
) -> Result<(Vec<String>, Vec<SendableRecordBatchStream>)> {
    let physical = ctx
        .state()
        .create_physical_plan(plan)
        .await
        .map_err(engine_error)?;
    let physical = yielding::yield_per_batch(physical).map_err(engine_error)?;
    let names = physical
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    let streams = execute_stream_partitioned(physical, work_scope::task_context(ctx))
        .map_err(engine_error)?;
    Ok((names, streams))
}
