//! SQL use cases: one statement over HTTP (`POST /api/sql`), and the sessions of the
//! PostgreSQL front. Both see only the datasets their subject may read, read again before
//! every statement (`query::sql::tables`), and run under the query pools' limits.

use std::sync::Arc;

use tracing::Instrument;

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use datafusion::prelude::SessionContext;

use super::query::{render, OutputFormat};
use super::Engine;
use crate::auth::pass::SubjectPass;
use crate::auth::Subject;
use crate::error::{Error, Result};
use crate::jobs::{JobKind, NewJob};
use crate::key::DatasetKey;
use crate::query::answers::large::write_csv_streams;
use crate::query::answers::Table;
use crate::query::sql::{collect_capped, one_select, partition_streams, plan, SqlTables};
use crate::query::{pools, QueryKind, SYNC_ROW_LIMIT};

/// The catalog unqualified names resolve in over HTTP (tables are named in full there).
const HTTP_DEFAULT_CATALOG: &str = "datafusion";

/// A DataFusion session over a subject's tables, on the query engine's memory pool.
pub struct SqlSession {
    pub context: SessionContext,
    pub tables: SqlTables,
}

impl Engine {
    /// A session with no dataset yet (see [`Self::sql_refresh`]); unqualified names resolve in
    /// `default_catalog`'s `public` schema (over the PostgreSQL protocol: the database asked for).
    pub fn sql_session(&self, default_catalog: &str) -> SqlSession {
        let tables = SqlTables::new(self.catalog.clone(), self.storage.clone(), default_catalog);
        let context = pools().sql_session(Arc::new(tables.clone()), default_catalog);
        SqlSession { context, tables }
    }

    /// The layers `subject_id` may read datasets of (over the PostgreSQL protocol, the
    /// databases it may sign in to), as configured.
    pub fn sql_layers(&self, subject_id: &str) -> Vec<String> {
        let snapshot = self.auth.snapshot();
        let Some(subject) = snapshot.subjects.get(subject_id) else {
            return Vec::new();
        };
        self.layers()
            .iter()
            .filter(|l| subject.permissions.iter().any(|p| p.reads_layer(l)))
            .cloned()
            .collect()
    }

    /// The subject `subject_id` as it is now, with `tables` read again for its permissions: a
    /// deleted subject is refused (401) and a permission change applies at once. Call before
    /// every statement.
    pub fn sql_refresh(&self, subject_id: &str, tables: &SqlTables) -> Result<Arc<Subject>> {
        let subject = self
            .auth
            .snapshot()
            .subjects
            .get(subject_id)
            .cloned()
            .ok_or_else(|| {
                Error::unauthenticated("The subject of this session no longer exists")
            })?;
        tables.refresh(&subject.permissions)?;
        Ok(subject)
    }

    /// `POST /api/sql`: one SELECT (or EXPLAIN) over the datasets the subject may read, answered
    /// as the query endpoint answers: admitted to the sync pool (503 when full), bounded by
    /// the sync time limit, refused past [`SYNC_ROW_LIMIT`] rows.
    pub async fn sql(
        &self,
        pass: &SubjectPass,
        sql: String,
        format: OutputFormat,
    ) -> Result<(&'static str, Vec<u8>)> {
        let render = move |schema, batches: &[RecordBatch]| render(format, schema, batches);
        self.run_sql(pass, sql, render).await
    }

    /// One SELECT as [`Engine::sql`] runs it, its answer as a typed [`Table`] (for the pages).
    pub async fn sql_table(&self, pass: &SubjectPass, sql: String) -> Result<Table> {
        let table = |schema: SchemaRef, batches: &[RecordBatch]| Ok(Table::of(&schema, batches));
        self.run_sql(pass, sql, table).await
    }

    async fn run_sql<T: Send + 'static>(
        &self,
        pass: &SubjectPass,
        sql: String,
        shape: impl FnOnce(SchemaRef, &[RecordBatch]) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let pools = pools();
        let slot = pools.admit(QueryKind::Sync).await?;
        let limit = pools.settings().timeout;
        let (this, subject_id) = (self.clone(), pass.subject().id.clone());
        let cap = SYNC_ROW_LIMIT as usize + 1;
        let work = async move {
            let session = this.sql_session(HTTP_DEFAULT_CATALOG);
            this.sql_refresh(&subject_id, &session.tables)?;
            let answer = match one_select(&sql, &crate::query::pools().settings().limits) {
                Ok(statement) => collect_capped(&session.context, statement, cap).await,
                Err(e) => Err(e),
            };
            session.tables.end_statement();
            let (schema, batches) = answer?;
            let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
            if rows as u64 > SYNC_ROW_LIMIT {
                return Err(Error::invalid(format!(
                    "The result has more than {SYNC_ROW_LIMIT} rows: add a LIMIT or a filter"
                )));
            }
            shape(schema, &batches)
        };
        let timed_out = Error::invalid(format!(
            "The statement ran longer than the limit of {} seconds for synchronous queries \
             (RAPID_QUERY_TIMEOUT_SECONDS) and was stopped: narrow it (filter, limit)",
            limit.as_secs()
        ));
        pools.run(Some(slot), limit, work, timed_out).await
    }
}

impl Engine {
    /// `POST /api/sql/large`: checks and plans one SELECT now (its errors are the answer), then a
    /// QUERY job writes its whole result as CSV, as a large query's; the job id. The job names no
    /// dataset (empty layer, domain and dataset, version 0): a statement may read several.
    pub async fn start_large_sql(
        &self,
        pass: &SubjectPass,
        sql: String,
        base_url: &str,
    ) -> Result<String> {
        let pools = pools();
        let slot = pools.admit(QueryKind::Large).await?;
        let check_limit = pools.settings().timeout;
        let (this, subject_id) = (self.clone(), pass.subject().id.clone());
        let check = async move {
            let session = this.sql_session(HTTP_DEFAULT_CATALOG);
            this.sql_refresh(&subject_id, &session.tables)?;
            let statement = one_select(&sql, &crate::query::pools().settings().limits)?;
            let logical = plan(&session.context, statement).await?;
            Ok((session, logical))
        };
        let timed_out = Error::invalid(format!(
            "Planning the statement took longer than {} seconds (RAPID_QUERY_TIMEOUT_SECONDS)",
            check_limit.as_secs()
        ));
        let (session, logical) = pools.run(None, check_limit, check, timed_out).await?;
        let job_id = self.jobs.create(NewJob {
            kind: JobKind::Query,
            key: &DatasetKey::new("", "", ""),
            version: 0,
            subject_id: &pass.subject().id,
            filename: None,
            raw_filename: None,
        })?;
        let span = tracing::info_span!("job", job_id = %job_id, kind = "QUERY", sql = true);
        let job = LargeSql {
            id: job_id.clone(),
            session,
            plan: logical,
            base_url: base_url.to_string(),
        };
        self.spawn_large_sql(job, slot, span);
        Ok(job_id)
    }

    fn spawn_large_sql(&self, job: LargeSql, slot: crate::query::Slot, span: tracing::Span) {
        let pools = pools();
        let (jobs, auth, storage) = (self.jobs.clone(), self.auth.clone(), self.storage.clone());
        let ttl = self.settings.result_ttl_seconds;
        let limit = pools.settings().large_timeout;
        actix::spawn(
            async move {
                let (id, jobs_for_run) = (job.id.clone(), jobs.clone());
                let work = async move {
                    let (names, streams) =
                        partition_streams(&job.session.context, &job.plan).await?;
                    let written =
                        write_csv_streams(names, streams, &jobs_for_run, &job.id, &storage).await;
                    job.session.tables.end_statement();
                    written
                };
                let timed_out = Error::invalid(format!(
                    "The statement ran longer than the limit of {} seconds for large-query jobs \
                     (RAPID_LARGE_QUERY_TIMEOUT_SECONDS) and was stopped",
                    limit.as_secs()
                ));
                let recorded = match pools.run(Some(slot), limit, work, timed_out).await {
                    Ok(_) => {
                        let url = auth.result_link(&job.base_url, &format!("{id}.csv"), ttl);
                        jobs.succeed_with_url(&id, &url)
                    }
                    Err(e) => jobs.fail(&id, &crate::ingest::messages(&e)),
                };
                if let Err(e) = recorded {
                    tracing::error!(job_id = id, error = %e.report(), "could not record a SQL job's outcome");
                }
            }
            .instrument(span),
        );
    }
}

/// A checked, planned statement waiting for its job to run it.
struct LargeSql {
    id: String,
    session: SqlSession,
    plan: datafusion::logical_expr::LogicalPlan,
    base_url: String,
}
