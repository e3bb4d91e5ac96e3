//! One connection's handlers. Its DataFusion session (from the engine: the query memory pool,
//! the catalog list of the subject's tables) is served by datafusion-postgres's
//! `DfSessionService`; around every statement this module re-reads the subject and its
//! readable datasets, applies the read-only gate, takes a query slot, and bounds the run by the
//! time limit and the row guard. Rows are collected before they are sent, so a slow client
//! holds memory for its answer but no query slot.

use std::borrow::Cow;
use std::fmt::Debug;
use std::net::IpAddr;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::logical_expr::LogicalPlan;
use datafusion::sql::sqlparser::ast::Statement;
use datafusion_postgres::datafusion_pg_catalog::pg_catalog::setup_pg_catalog;
use datafusion_postgres::datafusion_pg_catalog::sql::PostgresCompatibilityParser;
use datafusion_postgres::pgwire::api::cancel::DefaultCancelHandler;
use datafusion_postgres::pgwire::api::portal::{Format, Portal};
use datafusion_postgres::pgwire::api::query::{ExtendedQueryHandler, SimpleQueryHandler};
use datafusion_postgres::pgwire::api::results::{FieldInfo, QueryResponse, Response};
use datafusion_postgres::pgwire::api::stmt::QueryParser;
use datafusion_postgres::pgwire::api::store::PortalStore;
use datafusion_postgres::pgwire::api::{
    ClientInfo, ClientPortalStore, ConnectionManager, PgWireServerHandlers, Type,
};
use datafusion_postgres::pgwire::error::{PgWireError, PgWireResult};
use datafusion_postgres::pgwire::messages::PgWireBackendMessage;
use datafusion_postgres::{DfSessionService, Parser};
use futures_util::sink::Sink;
use futures_util::StreamExt;
use rapid_actors::engine::{Engine, SqlSession};

use crate::figures::FIGURES;
use crate::{copy_out, functions, rewrite, savepoints};
use rapid_actors::query::sql::{check_parse_cost, check_parsed};
use rapid_actors::query::{pools, QueryKind, SYNC_ROW_LIMIT};
use tokio::io::Interest;
use tokio::net::TcpStream;

use crate::errors::{self, classify, pg_error, refused};
use crate::signin::{server_parameters, SignIn};

type PgStatement = (String, Option<(Statement, LogicalPlan)>);

/// The handlers of one connection (pgwire asks for them once per connection).
pub struct Connection {
    statements: Arc<Statements>,
    signin: Arc<SignIn>,
    cancel: Arc<DefaultCancelHandler>,
}

impl Connection {
    pub fn new(
        engine: Engine,
        peer: IpAddr,
        manager: Arc<ConnectionManager>,
        watcher: TcpStream,
    ) -> Connection {
        // The default catalog is the database the client names, known at sign-in.
        let session = engine.sql_session("postgres");
        let service = Arc::new(DfSessionService::new(Arc::new(session.context.clone())));
        let checker = Arc::new(Checker {
            engine: engine.clone(),
            session,
            subject: OnceLock::new(),
            watcher,
        });
        let parser = Arc::new(GuardedParser {
            inner: ExtendedQueryHandler::query_parser(service.as_ref()),
            checker: checker.clone(),
        });
        Connection {
            statements: Arc::new(Statements {
                checker: checker.clone(),
                service,
                parser,
            }),
            signin: Arc::new(SignIn {
                engine,
                peer,
                checker,
                manager: manager.clone(),
                keys: Default::default(),
                signed_in: Default::default(),
                parameters: server_parameters(),
            }),
            cancel: Arc::new(DefaultCancelHandler::new(manager)),
        }
    }

    /// Set once the client has finished startup and sign-in.
    pub fn signed_in(&self) -> Arc<AtomicBool> {
        self.signin.signed_in.clone()
    }
}

impl PgWireServerHandlers for Connection {
    fn simple_query_handler(&self) -> Arc<impl SimpleQueryHandler> {
        self.statements.clone()
    }

    fn extended_query_handler(&self) -> Arc<impl ExtendedQueryHandler> {
        self.statements.clone()
    }

    fn startup_handler(&self) -> Arc<impl datafusion_postgres::pgwire::api::auth::StartupHandler> {
        self.signin.clone()
    }

    fn cancel_handler(&self) -> Arc<impl datafusion_postgres::pgwire::api::cancel::CancelHandler> {
        self.cancel.clone()
    }
}

/// The session's subject and tables, checked before every statement.
pub struct Checker {
    engine: Engine,
    session: SqlSession,
    subject: OnceLock<String>,
    /// The connection's socket, watched (never read) while a statement runs.
    watcher: TcpStream,
}

impl Checker {
    /// After sign-in: `database` becomes the default catalog, holding `pg_catalog` and an empty
    /// `public` schema beside the domains of the layer of that name, if any.
    /// `user` is the name it signed in with, its role in `pg_roles`.
    pub(crate) fn start(&self, subject: String, user: &str, database: &str) -> Result<(), String> {
        self.session.tables.set_home(database);
        let ctx = &self.session.context;
        ctx.state_ref()
            .write()
            .config_mut()
            .options_mut()
            .catalog
            .default_catalog = database.to_string();
        let role = crate::roles::SubjectRole(user.to_string());
        setup_pg_catalog(ctx, database, role).map_err(|e| e.to_string())?;
        ctx.register_udf(functions::version());
        ctx.register_udf(functions::expand_array());
        ctx.register_udf(functions::to_regtype());
        ctx.register_udf(crate::like_escape::udf());
        ctx.register_udf(crate::pg_types::udf());
        for udf in crate::meta_functions::all() {
            ctx.register_udf(udf);
        }
        self.subject
            .set(subject)
            .map_err(|_| "signed in twice".to_string())
    }

    /// The subject as it is now (gone: 28000) and the datasets it may read now.
    fn refresh(&self) -> PgWireResult<()> {
        let id = self
            .subject
            .get()
            .ok_or_else(|| pg_error("28000", "not signed in"))?;
        self.engine
            .sql_refresh(id, &self.session.tables)
            .map(|_| ())
            .map_err(errors::engine)
    }

    /// The parse budget, then [`Self::check_read_only`].
    fn check<'a>(&self, sql: &'a str) -> PgWireResult<Cow<'a, str>> {
        check_parse_cost(sql).map_err(refused)?;
        self.check_read_only(sql)
    }

    /// The read-only gate, on the statements as the library's parser reads them; then the
    /// statement as the library should plan it (see [`rewrite`]). `sql` has passed the parse
    /// budget.
    fn check_read_only<'a>(&self, sql: &'a str) -> PgWireResult<Cow<'a, str>> {
        let library = PostgresCompatibilityParser::new();
        let statements = library
            .parse(sql)
            .map_err(|e| pg_error("42601", e.to_string()))?;
        check_parsed(&statements, &pools().settings().limits).map_err(refused)?;
        if statements.iter().any(nameless_show) {
            return Err(pg_error("42601", "SHOW needs the name of a setting"));
        }
        let rewritten = rewrite::for_datafusion(sql, &library, &statements);
        Ok(rewritten.map_or(Cow::Borrowed(sql), Cow::Owned))
    }

    /// `COPY (query) TO STDOUT`: the query through the gate and the rewrites, run as any
    /// statement (slot, time limit, row guard), its rows written in the copy's format.
    async fn copy_out(&self, copy: copy_out::CopyOut) -> PgWireResult<Vec<Response>> {
        let query = self.check_read_only(&copy.query)?.into_owned();
        let work = copy_out::run(self.session.context.clone(), query, copy);
        self.limited(work).await
    }

    /// Every table `plan` scans still exists for the subject (a prepared statement outlives the
    /// refresh it was planned after).
    fn still_readable(&self, plan: &LogicalPlan) -> PgWireResult<()> {
        let mut missing = None;
        let _ = plan.apply_with_subqueries(|node| {
            if let LogicalPlan::TableScan(scan) = node {
                let exists = self.session.context.table_exist(scan.table_name.clone());
                if !matches!(exists, Ok(true)) {
                    missing = Some(scan.table_name.to_string());
                    return Ok(TreeNodeRecursion::Stop);
                }
            }
            Ok(TreeNodeRecursion::Continue)
        });
        match missing {
            Some(t) => Err(pg_error(
                "42501",
                format!("permission denied or no such table: {t}"),
            )),
            None => Ok(()),
        }
    }

    /// Runs `work` in a query slot within the time limit, its rows collected.
    async fn limited(
        &self,
        work: impl std::future::Future<Output = PgWireResult<Vec<Response>>>,
    ) -> PgWireResult<Vec<Response>> {
        let pools = pools();
        let _slot = pools.admit(QueryKind::Sync).await.map_err(errors::engine)?;
        let limit = pools.settings().timeout;
        let run = async { drain(work.await.map_err(classify)?).await };
        let out = tokio::select! {
            out = tokio::time::timeout(limit, run) => out,
            // The client has gone: the statement's work is dropped, as on a cancel request.
            () = closed(&self.watcher) => Ok(Err(pg_error("08006", "the client closed the connection"))),
        };
        let out = match out {
            Ok(out) => out,
            Err(_) => Err(pg_error(
                "57014",
                format!(
                    "canceling statement due to statement timeout: the limit is {} seconds \
                     (RAPID_QUERY_TIMEOUT_SECONDS)",
                    limit.as_secs()
                ),
            )),
        };
        self.session.tables.end_statement();
        out
    }
}

/// A `SHOW` without a setting's name: datafusion-postgres 0.19 reads its first name unchecked
/// (`hooks/set_show.rs:341`, index out of bounds), so it never gets there (found by the
/// `sql_wire` fuzz target, fuzz/README.md).
fn nameless_show(statement: &Statement) -> bool {
    matches!(statement, Statement::ShowVariable { variable } if variable.is_empty())
}

impl Drop for Checker {
    /// The `pg_catalog` schema [`Checker::start`] registers holds the session's catalog list,
    /// which holds it (through the home catalog): a cycle of `Arc`s that kept every signed-in
    /// connection's session and pg_catalog tables (about 5 MB) after it closed. Replacing the
    /// registered catalogs breaks the cycle (found by the `sql_wire` fuzz target, fuzz/README.md).
    fn drop(&mut self) {
        self.session.tables.set_home("");
    }
}

/// Resolves when the peer has closed (or reset) the connection. Data the client sent ahead
/// (pipelined messages) is left for the connection to read.
async fn closed(socket: &TcpStream) {
    loop {
        match socket.ready(Interest::READABLE).await {
            Ok(ready) if ready.is_read_closed() => return,
            Ok(_) => {
                // Readable with data: forget this readiness and wait for the next event (a
                // close is one), without reading.
                let _ = socket.try_io(Interest::READABLE, || {
                    Err::<(), _>(std::io::ErrorKind::WouldBlock.into())
                });
                // At most one check per 100 ms while data waits unread.
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
            Err(_) => return,
        }
    }
}

async fn drain(responses: Vec<Response>) -> PgWireResult<Vec<Response>> {
    let mut out = Vec::with_capacity(responses.len());
    for response in responses {
        out.push(match response {
            Response::Query(q) => Response::Query(drain_rows(q).await?),
            other => other,
        });
    }
    Ok(out)
}

/// The rows of `q` in memory, refused past the row guard of synchronous queries.
async fn drain_rows(q: QueryResponse) -> PgWireResult<QueryResponse> {
    let (tag, schema) = (q.command_tag().to_string(), q.row_schema());
    let mut stream = q.data_rows;
    let mut rows = Vec::new();
    while let Some(row) = stream.next().await {
        rows.push(row.map_err(classify)?);
        if rows.len() as u64 > SYNC_ROW_LIMIT {
            return Err(pg_error(
                "54000",
                format!("The result has more than {SYNC_ROW_LIMIT} rows: add a LIMIT or a filter"),
            ));
        }
    }
    let mut out = QueryResponse::new(schema, futures_util::stream::iter(rows.into_iter().map(Ok)));
    out.set_command_tag(&tag);
    Ok(out)
}

pub struct Statements {
    checker: Arc<Checker>,
    service: Arc<DfSessionService>,
    parser: Arc<GuardedParser>,
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
        let status = client.transaction_status();
        let answer = async {
            self.checker.refresh()?;
            // Before any parser without a budget reads it (the savepoint check is one).
            check_parse_cost(query).map_err(refused)?;
            if let Some(answer) = savepoints::answer(query, status) {
                return answer;
            }
            if let Some(copy) = copy_out::parse(query) {
                return self.checker.copy_out(copy).await;
            }
            let query = self.checker.check_read_only(query)?;
            let work = SimpleQueryHandler::do_query(self.service.as_ref(), client, &query);
            self.checker.limited(work).await
        }
        .await;
        FIGURES.statement(&answer);
        answer
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
        let answer = async {
            self.checker.refresh()?;
            result_formats_fit(&portal.statement.statement, &portal.result_column_format)?;
            if let (_, Some((_, plan))) = &portal.statement.statement {
                self.checker.still_readable(plan)?;
            }
            let service = self.service.as_ref();
            let work = async move {
                ExtendedQueryHandler::do_query(service, client, portal, max_rows)
                    .await
                    .map(|r| vec![r])
            };
            let mut responses = self.checker.limited(work).await?;
            Ok(responses.pop().unwrap_or(Response::EmptyQuery))
        }
        .await;
        FIGURES.statement(&answer);
        answer
    }
}

/// The library's parser, behind the subject refresh and the read-only gate.
pub struct GuardedParser {
    inner: Arc<Parser>,
    checker: Arc<Checker>,
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
        self.checker.refresh()?;
        let sql = self.checker.check(sql)?;
        self.inner
            .parse_sql(client, &sql, types)
            .await
            .map_err(classify)
    }

    fn get_parameter_types(&self, stmt: &PgStatement) -> PgWireResult<Vec<Type>> {
        self.inner.get_parameter_types(stmt)
    }

    fn get_result_schema(
        &self,
        stmt: &PgStatement,
        column_format: Option<&Format>,
    ) -> PgWireResult<Vec<FieldInfo>> {
        if let Some(format) = column_format {
            result_formats_fit(stmt, format)?;
        }
        self.inner.get_result_schema(stmt, column_format)
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

#[cfg(test)]
mod tests {
    use datafusion::sql::sqlparser::ast::{Ident, Statement};

    #[test]
    fn a_show_without_a_name_is_refused_and_one_with_a_name_is_not() {
        let nameless = Statement::ShowVariable { variable: vec![] };
        assert!(super::nameless_show(&nameless));
        let named = Statement::ShowVariable {
            variable: vec![Ident::new("datestyle")],
        };
        assert!(!super::nameless_show(&named));
    }
}
