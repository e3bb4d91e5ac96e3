//! The statement handlers of one connection (simple and extended protocol) and the parser
//! behind them: each statement refreshes the session first, passes the gate, and runs as the
//! session admits it (see [`crate::session`]); the library's own handlers do the rest.

use std::fmt::Debug;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::logical_expr::LogicalPlan;
use datafusion::sql::sqlparser::ast::Statement;
use datafusion_postgres::pgwire::api::portal::{Format, Portal};
use datafusion_postgres::pgwire::api::query::{ExtendedQueryHandler, SimpleQueryHandler};
use datafusion_postgres::pgwire::api::results::{FieldInfo, Response};
use datafusion_postgres::pgwire::api::stmt::QueryParser;
use datafusion_postgres::pgwire::api::store::PortalStore;
use datafusion_postgres::pgwire::api::{ClientInfo, ClientPortalStore, Type};
use datafusion_postgres::pgwire::error::{PgWireError, PgWireResult};
use datafusion_postgres::pgwire::messages::PgWireBackendMessage;
use futures_util::sink::Sink;
use tracing::Instrument;

use crate::errors::{classify, pg_error};
use crate::figures::FIGURES;
use crate::session::Checker;
use crate::{copy_out, savepoints};

pub(crate) type PgStatement = (String, Option<(Statement, LogicalPlan)>);

pub(crate) struct Statements {
    pub(crate) checker: Arc<Checker>,
    pub(crate) parser: Arc<GuardedParser>,
}

#[async_trait]
impl SimpleQueryHandler for Statements {
    async fn do_query<C>(&self, client: &mut C, query: &str) -> PgWireResult<Vec<Response>>
    where
        C: ClientInfo + ClientPortalStore + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::PortalStore: PortalStore,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        let span = self.checker.statement_span();
        let status = client.transaction_status();
        let running = self.checker.begin(query);
        let answer = async {
            let open = self.checker.refresh()?;
            // Before any parser without a budget reads it (the savepoint check is one).
            self.checker.check_parse_cost(open, query)?;
            if let Some(answer) = savepoints::answer(query, status) {
                return answer;
            }
            if let Some(copy) = copy_out::parse(query) {
                return self.checker.copy_out(open, copy).await;
            }
            let query = self.checker.check_read_only(open, query)?;
            self.checker.follow_search_path(open, &query);
            let work = SimpleQueryHandler::do_query(open.service.as_ref(), client, &query);
            self.checker.limited(open, work).await
        }
        .instrument(span.clone())
        .await;
        FIGURES.statement(&answer);
        self.checker.end(running, answer).instrument(span).await
    }
}

#[async_trait]
impl ExtendedQueryHandler for Statements {
    type Statement = PgStatement;
    type QueryParser = GuardedParser;

    fn query_parser(&self) -> Arc<GuardedParser> {
        self.parser.clone()
    }

    async fn do_query<C>(
        &self,
        client: &mut C,
        portal: &Portal<PgStatement>,
        max_rows: usize,
    ) -> PgWireResult<Response>
    where
        C: ClientInfo + ClientPortalStore + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::PortalStore: PortalStore<Statement = PgStatement>,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        let span = self.checker.statement_span();
        let running = self.checker.begin(&portal.statement.statement.0);
        let answer = async {
            let open = self.checker.refresh()?;
            if let (sql, None) = &portal.statement.statement {
                if let Some(copy) = copy_out::parse(sql) {
                    let mut responses = self.checker.copy_out(open, copy).await?;
                    return Ok(responses.pop().unwrap_or(Response::EmptyQuery));
                }
            }
            result_formats_fit(&portal.statement.statement, &portal.result_column_format)?;
            if let (_, Some((_, plan))) = &portal.statement.statement {
                self.checker.still_readable(open, plan)?;
            }
            self.checker
                .follow_search_path(open, &portal.statement.statement.0);
            let service = open.service.as_ref();
            let work = async move {
                ExtendedQueryHandler::do_query(service, client, portal, max_rows)
                    .await
                    .map(|r| vec![r])
            };
            let mut responses = self.checker.limited(open, work).await?;
            Ok(responses.pop().unwrap_or(Response::EmptyQuery))
        }
        .instrument(span.clone())
        .await;
        FIGURES.statement(&answer);
        self.checker.end(running, answer).instrument(span).await
    }
}

/// The library's parser, behind the session's refresh and the read-only gate.
pub(crate) struct GuardedParser {
    pub(crate) checker: Arc<Checker>,
}

#[async_trait]
impl QueryParser for GuardedParser {
    type Statement = PgStatement;

    async fn parse_sql<C>(
        &self,
        client: &C,
        sql: &str,
        types: &[Option<Type>],
    ) -> PgWireResult<Option<PgStatement>>
    where
        C: ClientInfo + Unpin + Send + Sync,
    {
        let open = self.checker.refresh()?;
        self.checker.check_parse_cost(open, sql)?;
        // `COPY (...) TO STDOUT` by Parse/Bind/Execute (libpq's PQexecParams: the ADBC driver
        // reads every result so): kept as written, no plan; its query passes the gate when run.
        if let Some(copy) = copy_out::parse(sql) {
            self.checker.check_read_only(open, &copy.query)?;
            return Ok(Some((sql.to_string(), None)));
        }
        let sql = self.checker.check_read_only(open, sql)?;
        open.parser
            .parse_sql(client, &sql, types)
            .await
            .map_err(classify)
    }

    fn get_parameter_types(&self, stmt: &PgStatement) -> PgWireResult<Vec<Type>> {
        self.checker.library_parser()?.get_parameter_types(stmt)
    }

    fn get_result_schema(
        &self,
        stmt: &PgStatement,
        column_format: Option<&Format>,
    ) -> PgWireResult<Vec<FieldInfo>> {
        if let Some(format) = column_format {
            result_formats_fit(stmt, format)?;
        }
        self.checker
            .library_parser()?
            .get_result_schema(stmt, column_format)
    }
}

/// A portal's result formats are 0, 1 or one per column, as PostgreSQL requires at Bind:
/// arrow-pg looks each column's format up by index (`Format::format_for`), so fewer formats than
/// columns panicked when the portal was described or executed.
fn result_formats_fit(stmt: &PgStatement, format: &Format) -> PgWireResult<()> {
    let (Format::Individual(codes), (_, Some((_, plan)))) = (format, stmt) else {
        return Ok(());
    };
    let columns = plan.schema().fields().len();
    if codes.len() == columns || matches!(plan, LogicalPlan::Ddl(_) | LogicalPlan::Dml(_)) {
        return Ok(());
    }
    let formats = codes.len();
    let message =
        format!("bind message has {formats} result formats but query has {columns} columns");
    Err(pg_error("08P01", message))
}
