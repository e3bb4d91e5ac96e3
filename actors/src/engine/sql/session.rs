//! A subject's SQL session: the one door both SQL fronts read through. It is made from a pass
//! (HTTP: the request's; the PostgreSQL listener: the one its sign-in gives), and sees only
//! the datasets that pass's subject may read, read again at every [`SqlSession::refresh`]: a
//! deleted subject is refused and a permission taken away applies to an open session at once.
//! Its other methods are the statement rules (`query::sql::rules`, `query::sql::statement`),
//! so that no front restates them.

use std::net::IpAddr;
use std::sync::Arc;

use datafusion::logical_expr::LogicalPlan;
use datafusion::prelude::SessionContext;
use datafusion::sql::parser::Statement as DfStatement;
use datafusion::sql::sqlparser::ast::Statement;

use super::super::Engine;
use crate::audit::Note;
use crate::auth::pass::SubjectPass;
use crate::auth::{Auth, Subject};
use crate::error::{Error, Result};
use crate::query::sql::{
    admit, check_parse_cost, check_parsed, one_select, still_readable, Admitted, Refused, SqlTables,
};
use crate::query::QueryPools;

/// A DataFusion session over the tables a pass's subject may read, on the query engine's
/// memory pool.
pub struct SqlSession {
    /// The engine's query pools: slots, time limit, query limits.
    pools: Arc<QueryPools>,
    auth: Auth,
    pass: SubjectPass,
    context: SessionContext,
    tables: SqlTables,
}

impl Engine {
    /// A session for `pass`'s subject, with no dataset until [`SqlSession::refresh`];
    /// unqualified names resolve in `default_catalog`'s `public` schema (over the PostgreSQL
    /// protocol: the database the client signed in to).
    pub fn sql_session(&self, pass: &SubjectPass, default_catalog: &str) -> SqlSession {
        let tables = SqlTables::new(
            (self.catalog.clone(), self.storage.clone()),
            self.mask_key.clone(),
            default_catalog,
        )
        .with_audit(self.audit.store().clone());
        let context = self
            .pools
            .sql_session(Arc::new(tables.clone()), default_catalog);
        tables.set_note(pass.note().clone());
        SqlSession {
            pools: self.pools.clone(),
            auth: self.auth.clone(),
            pass: pass.clone(),
            context,
            tables,
        }
    }

    /// The layers `pass`'s subject may read datasets of (over the PostgreSQL protocol, the
    /// databases it may sign in to).
    pub fn sql_layers(&self, pass: &SubjectPass) -> Vec<String> {
        let permissions = &pass.subject().permissions;
        self.layers()
            .iter()
            .filter(|l| permissions.iter().any(|p| p.reads_layer(l)))
            .cloned()
            .collect()
    }

    /// Signs in with a name and secret (a client's id and secret, or a user's name and
    /// password) as the token endpoint does, behind its throttle and hash pool: the pass of the
    /// subject signed in. 401 for wrong credentials, 429 when throttled, 503 when the hash
    /// pool is full.
    pub async fn sign_in(&self, name: &str, secret: &str, addr: IpAddr) -> Result<SubjectPass> {
        let id = self.auth.sign_in(name, secret, addr).await?;
        let subject = self.auth.snapshot().subjects.get(&id).cloned();
        // Deleted between the check and now: as a wrong password.
        let subject = subject.ok_or_else(|| Error::unauthenticated("Unknown subject"))?;
        Ok(self.subject_pass(subject))
    }
}

impl SqlSession {
    /// The DataFusion session (the PostgreSQL front serves its catalog emulation from it).
    pub fn context(&self) -> &SessionContext {
        &self.context
    }

    /// The subject as it is now, with the datasets it may read read again: a deleted subject is
    /// refused (401) and a permission change applies at once. Call before every statement.
    pub fn refresh(&self) -> Result<Arc<Subject>> {
        let subject = self
            .auth
            .snapshot()
            .subjects
            .get(&self.pass.subject().id)
            .cloned()
            .ok_or_else(|| {
                Error::unauthenticated("The subject of this session no longer exists")
            })?;
        self.tables.refresh(&subject)?;
        Ok(subject)
    }

    /// Where the next statements' reads are noted for the audit log (a connection's session
    /// takes one note per statement).
    pub fn set_note(&self, note: Note) {
        self.tables.set_note(note);
    }

    /// A slot in the synchronous pool for one statement, and its time limit (see
    /// [`Admitted`]); Busy when every slot is taken past the queue wait.
    pub async fn admit(&self) -> Result<Admitted> {
        admit(&self.pools, &self.tables).await
    }

    /// The parse budget and size limit, before any parser without a budget reads `sql`.
    pub fn check_parse_cost(&self, sql: &str) -> Result<(), Refused> {
        check_parse_cost(sql)
    }

    /// The read-only gate and the size and depth limits, on statements another parser made
    /// (the PostgreSQL front's, which rewrites clients' catalog queries).
    pub fn check_read_only(&self, statements: &[Statement]) -> Result<(), Refused> {
        check_parsed(statements, &self.pools.settings().limits)
    }

    /// `sql` when it is exactly one SELECT (or EXPLAIN of one), through the same gate.
    pub(super) fn one_select(&self, sql: &str) -> Result<DfStatement> {
        one_select(sql, &self.pools.settings().limits)
    }

    /// Every table a prepared `plan` scans is still one the subject may read (42501 if not).
    pub fn still_readable(&self, plan: &LogicalPlan) -> Result<(), Refused> {
        still_readable(&self.context, plan)
    }

    /// Lets go of the files the statement read (a large statement's job, once written).
    pub(super) fn end_statement(&self) {
        self.tables.end_statement();
    }
}

impl Drop for SqlSession {
    /// A catalog the PostgreSQL front registers in the session's home catalog (`pg_catalog`)
    /// holds the session's catalog list, which holds it: a cycle of `Arc`s that kept every
    /// signed-in connection's session and pg_catalog tables (about 5 MB) after it closed.
    /// Replacing the registered catalogs breaks the cycle (found by the `sql_wire` fuzz target,
    /// fuzz/README.md).
    fn drop(&mut self) {
        self.tables.set_home("");
    }
}
