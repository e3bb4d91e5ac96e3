//! Unit tests' reading of a statement's answer: its rows as one printed table.

use datafusion::prelude::SessionContext;

/// `sql` run in `ctx`, its rows as one printed table, or the error's text.
pub(crate) async fn answer(ctx: &SessionContext, sql: &str) -> Result<String, String> {
    let frame = ctx.sql(sql).await.map_err(|e| e.to_string())?;
    let batches = frame.collect().await.map_err(|e| e.to_string())?;
    let text = datafusion::arrow::util::pretty::pretty_format_batches(&batches)
        .map_err(|e| e.to_string())?;
    Ok(text.to_string())
}
