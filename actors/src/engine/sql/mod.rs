//! SQL use cases: one statement over HTTP (`POST /api/sql`, `POST /api/sql/large`), and the
//! sessions of the PostgreSQL front ([`SqlSession`], made from a pass). Both see only the
//! datasets their subject may read, read again before every statement, and run under the same
//! statement rules (`query::sql::rules`, `query::sql::statement`), which the session applies.

mod session;

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use tracing::Instrument;

use super::audit::JobAudit;
use super::query::{render, OutputFormat};
use super::Engine;
use crate::auth::pass::SubjectPass;
use crate::error::{Error, Result};
use crate::jobs::{JobKind, NewJob};
use crate::key::DatasetKey;
use crate::query::answers::large::write_csv_streams;
use crate::query::answers::Table;
use crate::query::sql::{collect_capped, partition_streams, plan};

pub use crate::query::sql::chrono_patterns;
pub use crate::query::sql::name_as_written;
pub use crate::query::sql::not_null_columns;
pub use crate::query::sql::rules::{within_row_cap, Admitted, TimedOut, TooManyRows, ROWS_ASKED};
pub use crate::query::sql::statement::Refused;
pub use crate::query::sql::tables::live_sessions;
pub use session::SqlSession;

/// The catalog unqualified names resolve in over HTTP (tables are named in full there).
const HTTP_DEFAULT_CATALOG: &str = "datafusion";

impl Engine {
    /// `POST /api/sql`: one SELECT (or EXPLAIN) over the datasets the subject may read, answered
    /// as the query endpoint answers: admitted to the sync pool (503 when full), bounded by
    /// the sync time limit, refused past the synchronous row cap.
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

    /// One SELECT through the pass's session, its answer shaped by `shape`.
    async fn run_sql<T: Send + 'static>(
        &self,
        pass: &SubjectPass,
        sql: String,
        shape: impl FnOnce(SchemaRef, &[RecordBatch]) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let session = self.sql_session(pass, HTTP_DEFAULT_CATALOG);
        let note = pass.note().clone();
        note.statement(crate::audit::statement::without_literals(&sql));
        let admitted = session.admit().await?;
        let timed_out = Error::invalid(format!(
            "The statement ran longer than the limit of {} seconds for synchronous queries \
             (RAPID_QUERY_TIMEOUT_SECONDS) and was stopped: narrow it (filter, limit)",
            admitted.limit().as_secs()
        ));
        let work = async move {
            session.refresh()?;
            let statement = session.one_select(&sql)?;
            let (schema, batches) =
                collect_capped(session.context(), statement, ROWS_ASKED).await?;
            let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
            note.rows(rows as u64);
            within_row_cap(rows as u64)?;
            shape(schema, &batches)
        };
        admitted.run(work, timed_out).await
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
        let pools = self.pools.clone();
        let ticket = pools.admit_job().await?;
        let check_limit = pools.settings().timeout;
        let session = self.sql_session(pass, HTTP_DEFAULT_CATALOG);
        pass.note()
            .statement(crate::audit::statement::without_literals(&sql));
        let check = async move {
            session.refresh()?;
            let statement = session.one_select(&sql)?;
            let logical = plan(session.context(), statement).await?;
            Ok((session, logical))
        };
        let timed_out = Error::invalid(format!(
            "Planning the statement took longer than {} seconds (RAPID_QUERY_TIMEOUT_SECONDS)",
            check_limit.as_secs()
        ));
        let (session, logical) = pools.run(None, check_limit, check, timed_out).await?;
        // The link carries the datasets read and their policies: checked again at download.
        let bound = crate::query::sql::lazy_table::link_binding(&logical);
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
            bound,
            audit: JobAudit {
                subject: pass.subject().clone(),
                note: pass.note().clone(),
                started: std::time::Instant::now(),
            },
        };
        self.spawn_large_sql(job, ticket, span);
        Ok(job_id)
    }

    fn spawn_large_sql(&self, job: LargeSql, ticket: crate::query::JobTicket, span: tracing::Span) {
        let pools = self.pools.clone();
        let (jobs, auth, storage) = (self.jobs.clone(), self.auth.clone(), self.storage.clone());
        let ttl = self.settings.result_ttl_seconds;
        let limit = pools.settings().large_timeout;
        let this = self.clone();
        actix::spawn(
            async move {
                let (id, jobs_for_run) = (job.id.clone(), jobs.clone());
                let (base_url, audit) = (job.base_url.clone(), job.audit.clone());
                let bound = job.bound.clone();
                let work = async move {
                    let (names, streams) =
                        partition_streams(job.session.context(), &job.plan).await?;
                    let written =
                        write_csv_streams(names, streams, &jobs_for_run, &job.id, &storage).await;
                    job.session.end_statement();
                    written
                };
                let timed_out = Error::invalid(format!(
                    "The statement ran longer than the limit of {} seconds for large-query jobs \
                     (RAPID_LARGE_QUERY_TIMEOUT_SECONDS) and was stopped",
                    limit.as_secs()
                ));
                let outcome = pools.run_job(ticket, limit, work, timed_out).await;
                let recorded = match &outcome {
                    Ok(_) => {
                        let name = format!("{id}.csv");
                        let url = auth.result_link_bound(&base_url, &name, &bound, ttl);
                        jobs.succeed_with_url(&id, &url)
                    }
                    Err(e) => jobs.fail(&id, &crate::ingest::messages(e)),
                };
                if let Err(e) = recorded {
                    tracing::error!(job_id = id, error = %e.report(), "could not record a SQL job's outcome");
                }
                let rows = outcome.as_ref().map(|(_, rows)| *rows);
                this.record_job(("SQL", &id), audit, rows).await;
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
    /// What its result link is bound to (`lazy_table::link_binding`).
    bound: String,
    audit: JobAudit,
}
