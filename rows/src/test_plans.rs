//! For tests: a statement's physical plan, and a plan's answer as a table to compare.

use std::sync::Arc;

use arrow::util::pretty::pretty_format_batches;
use datafusion::physical_plan::{collect, ExecutionPlan};
use datafusion::prelude::SessionContext;

pub async fn plan(ctx: &SessionContext, sql: &str) -> Arc<dyn ExecutionPlan> {
    ctx.sql(sql)
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .unwrap()
}

pub async fn answer(ctx: &SessionContext, plan: Arc<dyn ExecutionPlan>) -> String {
    let batches = collect(plan, ctx.task_ctx()).await.unwrap();
    pretty_format_batches(&batches).unwrap().to_string()
}
