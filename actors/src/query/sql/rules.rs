//! The rules one synchronous SQL statement runs under, the same on every front (`POST /api/sql`
//! and the PostgreSQL listener), kept here so that the fronts apply them and never restate
//! them: a slot in the synchronous pool (Busy when full), the synchronous time limit, the row
//! cap of synchronous answers, and a prepared plan still reading only tables the subject may
//! read. The read-only gate is [`super::statement`]'s. Each front words a stop in its own
//! protocol (a 400 over HTTP; SQLSTATE 57014 or 54000 over the wire).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::TableReference;
use datafusion::logical_expr::LogicalPlan;
use datafusion::prelude::SessionContext;

use super::statement::Refused;
use super::tables::SqlTables;
use crate::error::{Error, Result};
use crate::query::{QueryKind, QueryPools, Slot, SYNC_ROW_LIMIT};

/// Rows to ask a plan for: one past the cap, so that an answer over it is told from one at it.
pub const ROWS_ASKED: usize = SYNC_ROW_LIMIT as usize + 1;

/// An answer with more rows than a synchronous answer may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooManyRows;

impl std::fmt::Display for TooManyRows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "The result has more than {SYNC_ROW_LIMIT} rows: add a LIMIT or a filter"
        )
    }
}

/// Over HTTP the client's to narrow (400).
impl From<TooManyRows> for Error {
    fn from(e: TooManyRows) -> Error {
        Error::invalid(e.to_string())
    }
}

/// The row cap: `rows` (counted so far) are within it.
pub fn within_row_cap(rows: u64) -> std::result::Result<(), TooManyRows> {
    match rows > SYNC_ROW_LIMIT {
        true => Err(TooManyRows),
        false => Ok(()),
    }
}

/// A statement stopped at its time limit (the limit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimedOut(pub Duration);

/// One admitted statement: its slot in the synchronous pool and its time limit. When it ends
/// (dropped, or with the work given to [`Admitted::run`]) the files the statement read are let
/// go, then the slot.
pub struct Admitted {
    pools: Arc<QueryPools>,
    ends: EndsStatement,
    slot: Slot,
    limit: Duration,
}

/// Lets go of the files a statement read when dropped, however the statement ended.
struct EndsStatement(SqlTables);

impl Drop for EndsStatement {
    fn drop(&mut self) {
        self.0.end_statement();
    }
}

/// A slot in the synchronous pool for one statement over `tables`: at once, or after at most
/// the queue wait; else Busy (503, SQLSTATE 53000).
pub(crate) async fn admit(pools: &Arc<QueryPools>, tables: &SqlTables) -> Result<Admitted> {
    let slot = pools.admit(QueryKind::Sync).await?;
    Ok(Admitted {
        pools: pools.clone(),
        ends: EndsStatement(tables.clone()),
        slot,
        limit: pools.settings().timeout,
    })
}

impl Admitted {
    /// The time limit (`RAPID_QUERY_TIMEOUT_SECONDS`).
    pub fn limit(&self) -> Duration {
        self.limit
    }

    /// `work`, run where the caller runs (the PostgreSQL listener already runs on the query
    /// threads), stopped at the time limit.
    pub async fn within<T>(&self, work: impl Future<Output = T>) -> Result<T, TimedOut> {
        tokio::time::timeout(self.limit, work)
            .await
            .map_err(|_| TimedOut(self.limit))
    }

    /// `work` on the query threads, stopped at the time limit with `timed_out` as the answer
    /// (see `QueryPools::run`); the statement ends with the work.
    pub async fn run<T: Send + 'static>(
        self,
        work: impl Future<Output = Result<T>> + Send + 'static,
        timed_out: Error,
    ) -> Result<T> {
        let Admitted {
            pools,
            ends,
            slot,
            limit,
        } = self;
        let work = async move {
            let _ends = ends;
            work.await
        };
        pools.run(Some(slot), limit, work, timed_out).await
    }
}

/// Every table `plan` scans still exists in `ctx` (a prepared statement outlives the refresh it
/// was planned after: a permission taken away since refuses it). A table function's rows
/// (`generate_series(...)`, scanned as `generate_series()`) are no table: the session's own
/// functions, unchanged by a refresh (the JDBC driver's `getTypeInfo` reads one).
pub(crate) fn still_readable(ctx: &SessionContext, plan: &LogicalPlan) -> Result<(), Refused> {
    let mut missing = None;
    let _ = plan.apply_with_subqueries(|node| {
        if let LogicalPlan::TableScan(scan) = node {
            if let TableReference::Bare { table } = &scan.table_name {
                // No dataset's name holds "()": only the planner names a scan so.
                let function = table.strip_suffix("()");
                if function.is_some_and(|f| ctx.table_function(f).is_ok()) {
                    return Ok(TreeNodeRecursion::Continue);
                }
            }
            let exists = ctx.table_exist(scan.table_name.clone());
            if !matches!(exists, Ok(true)) {
                missing = Some(scan.table_name.to_string());
                return Ok(TreeNodeRecursion::Stop);
            }
        }
        Ok(TreeNodeRecursion::Continue)
    });
    match missing {
        Some(t) => Err(Refused::new(
            "42501",
            format!("permission denied or no such table: {t}"),
        )),
        None => Ok(()),
    }
}
