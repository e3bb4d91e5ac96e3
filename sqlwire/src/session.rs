//! One connection's signed-in session. Its DataFusion session is the engine's
//! [`SqlSession`], made from the pass the sign-in gave (the query memory pool, the catalog list
//! of the subject's tables), served by datafusion-postgres's `DfSessionService`. Around every
//! statement this module asks the engine's session for its rules: the subject and its readable
//! datasets read again, the read-only gate, a query slot, the time limit and the row cap; what
//! is the protocol's own (the library's parser, SQLSTATEs, a client that went away) stays here.
//! Rows are collected before they are sent, so a slow client holds memory for its answer but no
//! query slot.

use std::borrow::Cow;
use std::sync::{Arc, OnceLock};

use datafusion::logical_expr::LogicalPlan;
use datafusion::sql::sqlparser::ast::Statement;
use datafusion_postgres::datafusion_pg_catalog::sql::PostgresCompatibilityParser;
use datafusion_postgres::pgwire::api::query::ExtendedQueryHandler;
use datafusion_postgres::pgwire::api::results::{QueryResponse, Response};
use datafusion_postgres::pgwire::error::PgWireResult;
use datafusion_postgres::{DfSessionService, Parser};
use futures_util::StreamExt;
use rapid_actors::audit::Note;
use rapid_actors::auth::pass::SubjectPass;
use rapid_actors::auth::Subject;
use rapid_actors::engine::sql::{within_row_cap, Admitted, SqlSession, TimedOut};
use rapid_actors::engine::Engine;
use tokio::io::Interest;
use tokio::net::TcpStream;

use crate::errors::{self, classify, pg_error, refused};
use crate::{copy_out, functions, rewrite};

/// A connection's session: nothing until sign-in, then the subject's.
pub(crate) struct Checker {
    engine: Engine,
    open: OnceLock<Open>,
    /// The current statement's audit note: the rows it answers are noted in it.
    note: std::sync::Mutex<Note>,
    /// The connection's socket, watched (never read) while a statement runs.
    watcher: TcpStream,
    /// Statements this connection has run: each one's span carries its number.
    statements: std::sync::atomic::AtomicU64,
}

/// What sign-in opens: the engine's session for the subject, and the library's service and
/// parser over it.
pub(crate) struct Open {
    session: SqlSession,
    subject: Arc<Subject>,
    pub(crate) service: Arc<DfSessionService>,
    pub(crate) parser: Arc<Parser>,
}

impl Checker {
    pub(crate) fn new(engine: Engine, watcher: TcpStream) -> Checker {
        Checker {
            engine,
            open: OnceLock::new(),
            note: Default::default(),
            watcher,
            statements: Default::default(),
        }
    }

    /// After sign-in: the session of `pass`'s subject, whose default catalog is `database`,
    /// holding `pg_catalog` and an empty `public` schema beside the domains of the layer of
    /// that name, if any. `user` is the name it signed in with, its role in `pg_roles`.
    /// The span of the connection's next statement (inside the connection's span, which names
    /// the peer, backend pid and subject): its log lines say which session and statement.
    pub(crate) fn statement_span(&self) -> tracing::Span {
        let statement = 1 + self
            .statements
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        tracing::info_span!("pg_statement", statement)
    }

    pub(crate) fn start(
        &self,
        pass: &SubjectPass,
        user: &str,
        database: &str,
    ) -> Result<(), String> {
        let session = self.engine.sql_session(pass, database);
        let ctx = session.context();
        let role = crate::roles::SubjectRole(user.to_string());
        crate::catalogue_tables::setup(ctx, database, role)?;
        ctx.register_udf(functions::version());
        ctx.register_udf(functions::expand_array());
        ctx.register_udf(functions::to_regtype());
        ctx.register_udf(crate::settings::current_setting());
        ctx.register_udf(crate::format_function::udf());
        ctx.register_udf(crate::like_escape::udf());
        ctx.register_udf(crate::pg_types::udf());
        for udf in crate::meta_functions::all()
            .into_iter()
            .chain(crate::privileges::all())
        {
            ctx.register_udf(udf);
        }
        let service = Arc::new(DfSessionService::new(Arc::new(ctx.clone())));
        let parser = ExtendedQueryHandler::query_parser(service.as_ref());
        let open = Open {
            session,
            subject: pass.subject().clone(),
            service,
            parser,
        };
        self.open
            .set(open)
            .map_err(|_| "signed in twice".to_string())
    }

    /// The session, its subject as it is now (gone: 28000) and the datasets it may read now.
    pub(crate) fn refresh(&self) -> PgWireResult<&Open> {
        let open = self
            .open
            .get()
            .ok_or_else(|| pg_error("28000", "not signed in"))?;
        open.session.refresh().map_err(errors::engine)?;
        Ok(open)
    }

    pub(crate) fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The signed-in subject (none before sign-in).
    pub(crate) fn subject(&self) -> Option<Arc<Subject>> {
        self.open.get().map(|o| o.subject.clone())
    }

    /// The client's address, as the connection's peer.
    pub(crate) fn client_addr(&self) -> Option<String> {
        self.watcher
            .peer_addr()
            .ok()
            .map(|a| a.ip().to_canonical().to_string())
    }

    /// Where the next statement's reads and rows are noted.
    pub(crate) fn set_note(&self, note: Note) {
        if let Some(open) = self.open.get() {
            open.session.set_note(note.clone());
        }
        *self.note.lock().unwrap_or_else(|p| p.into_inner()) = note;
    }

    /// The library's parser, for what it reads off a statement it parsed (after sign-in).
    pub(crate) fn library_parser(&self) -> PgWireResult<&Parser> {
        self.open
            .get()
            .map(|open| open.parser.as_ref())
            .ok_or_else(|| pg_error("28000", "not signed in"))
    }

    /// The parse budget alone (before any parser without one reads `sql`).
    pub(crate) fn check_parse_cost(&self, open: &Open, sql: &str) -> PgWireResult<()> {
        open.session.check_parse_cost(sql).map_err(refused)
    }

    /// The read-only gate, on the statements as the library's parser reads them; then the
    /// statement as the library should plan it (see [`rewrite`]). `sql` has passed the parse
    /// budget.
    pub(crate) fn check_read_only<'a>(
        &self,
        open: &Open,
        sql: &'a str,
    ) -> PgWireResult<Cow<'a, str>> {
        let library = PostgresCompatibilityParser::new();
        let statements = library
            .parse(sql)
            .map_err(|e| pg_error("42601", e.to_string()))?;
        open.session.check_read_only(&statements).map_err(refused)?;
        if statements.iter().any(nameless_show) {
            return Err(pg_error("42601", "SHOW needs the name of a setting"));
        }
        let rewritten = rewrite::for_datafusion(sql, &library, &statements);
        Ok(rewritten.map_or(Cow::Borrowed(sql), Cow::Owned))
    }

    /// Follows a `SET search_path` of `sql`: unqualified names resolve in its schema from then
    /// on (see [`crate::search_path`]).
    pub(crate) fn follow_search_path(&self, open: &Open, sql: &str) {
        crate::search_path::follow(open.session.context(), sql);
    }

    /// `COPY (query) TO STDOUT`: the query through the gate and the rewrites, run as any
    /// statement (slot, time limit, row cap), its rows written in the copy's format.
    pub(crate) async fn copy_out(
        &self,
        open: &Open,
        copy: copy_out::CopyOut,
    ) -> PgWireResult<Vec<Response>> {
        let query = self.check_read_only(open, &copy.query)?.into_owned();
        let work = copy_out::run(open.session.context().clone(), query, copy);
        self.limited(open, work).await
    }

    /// Every table `plan` scans is still one the subject may read (a prepared statement
    /// outlives the refresh it was planned after).
    pub(crate) fn still_readable(&self, open: &Open, plan: &LogicalPlan) -> PgWireResult<()> {
        open.session.still_readable(plan).map_err(refused)
    }

    /// Runs `work` as the engine's session admits it (a query slot, the time limit), its rows
    /// collected within the row cap; stopped when the client goes away.
    pub(crate) async fn limited(
        &self,
        open: &Open,
        work: impl std::future::Future<Output = PgWireResult<Vec<Response>>>,
    ) -> PgWireResult<Vec<Response>> {
        let admitted: Admitted = open.session.admit().await.map_err(errors::engine)?;
        let note = self.note.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let run = admitted.within(async {
            let (responses, rows) = drain(work.await.map_err(classify)?).await?;
            note.rows(rows);
            Ok(responses)
        });
        tokio::select! {
            out = run => out.unwrap_or_else(|TimedOut(limit)| Err(errors::timed_out(limit))),
            // The client has gone: the statement's work is dropped, as on a cancel request.
            () = closed(&self.watcher) => Err(pg_error("08006", "the client closed the connection")),
        }
    }
}

/// A `SHOW` without a setting's name: datafusion-postgres 0.19 reads its first name unchecked
/// (`hooks/set_show.rs:341`, index out of bounds), so it never gets there (found by the
/// `sql_wire` fuzz target, fuzz/README.md).
fn nameless_show(statement: &Statement) -> bool {
    matches!(statement, Statement::ShowVariable { variable } if variable.is_empty())
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

/// The responses with their rows in memory, and how many rows they hold.
async fn drain(responses: Vec<Response>) -> PgWireResult<(Vec<Response>, u64)> {
    let mut out = Vec::with_capacity(responses.len());
    let mut rows = 0;
    for response in responses {
        out.push(match response {
            Response::Query(q) => {
                let (q, n) = drain_rows(q).await?;
                rows += n;
                Response::Query(q)
            }
            other => other,
        });
    }
    Ok((out, rows))
}

/// The rows of `q` in memory, refused past the row cap of synchronous answers.
async fn drain_rows(q: QueryResponse) -> PgWireResult<(QueryResponse, u64)> {
    let (tag, schema) = (q.command_tag().to_string(), q.row_schema());
    let mut stream = q.data_rows;
    let mut rows = Vec::new();
    while let Some(row) = stream.next().await {
        rows.push(row.map_err(classify)?);
        within_row_cap(rows.len() as u64).map_err(errors::too_many_rows)?;
    }
    let count = rows.len() as u64;
    let mut out = QueryResponse::new(schema, futures_util::stream::iter(rows.into_iter().map(Ok)));
    out.set_command_tag(&tag);
    Ok((out, count))
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
