//! The query use cases: a small result answered at once, and a large one written by a job.
//! Everything (parse, check, plan, run, render) runs on the query threads within a time limit;
//! the HTTP worker only waits (see `crate::query::admission::pools`).

use std::sync::Arc;

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use bytes::Bytes;
use tracing::Instrument;

use super::audit::JobAudit;
use super::{pick_version, Engine};
use crate::audit::Note;
use crate::auth::pass::{DatasetPass, Read};
use crate::auth::Subject;
use crate::error::{Error, Result};
use crate::history::AsOf;
use crate::jobs::{JobKind, NewJob};
use crate::key::DatasetRecord;
use crate::query::answers::large;
use crate::query::answers::output::{to_arrow_stream, to_csv, to_json, to_parquet};
use crate::query::answers::Table;
use crate::query::{PreparedQuery, QueryKind, QueryPools, QueryRequest, SYNC_ROW_LIMIT};

/// A query as a front door hands it over: the API's JSON body (parsed, with its depth checked,
/// on the query threads) or a request a page built.
enum QueryInput {
    Json(Bytes),
    Typed(Box<QueryRequest>),
}

impl QueryInput {
    fn request(self, limits: &crate::query::QueryLimits) -> Result<QueryRequest> {
        match self {
            QueryInput::Json(body) => crate::query::parse_request(&body, limits),
            QueryInput::Typed(request) => Ok(*request),
        }
    }
}

/// The formats a synchronous result is rendered in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum OutputFormat {
    Json,
    Csv,
    Arrow,
    Parquet,
}

impl Engine {
    /// The query pools: their load (metrics) and their runtime (the PostgreSQL listener).
    pub fn query_pools(&self) -> &Arc<QueryPools> {
        &self.pools
    }

    /// The checked query over the chosen version's files as of commit `at` (400 for a bad
    /// query, 404 for an unknown version or commit), and that version. Runs on the query threads:
    /// the checks walk trees.
    fn prepare(
        &self,
        (subject, record, note): (&Subject, &DatasetRecord, &Note),
        asked_version: Option<i64>,
        at: &AsOf,
        input: QueryInput,
        cap: Option<u64>,
    ) -> Result<(PreparedQuery, i64)> {
        let request = input.request(&self.pools.settings().limits)?;
        let version = pick_version(asked_version, record.latest_version);
        let schema = self.registry.schema(&record.key, Some(version))?;
        let policy = self.policy_for(subject, record, version, &schema)?;
        let prepared = PreparedQuery::new(
            (&self.pools, self.catalog.as_ref()),
            &self.storage,
            record,
            (&schema, &policy),
            (version, at),
            &request,
            cap,
        )?;
        let commit = Some(prepared.commit());
        let (columns, statement) = prepared.audit_view();
        // The statement first: the read opens the request's audit row with what is noted.
        note.statement(statement);
        note.read(&record.key, version, commit, columns, &policy.names);
        Ok((prepared, version))
    }

    /// Runs the query `body` (JSON; empty: every row) over commit `at` and renders the result in
    /// `format`: (content type, bytes, the commit read). Admitted to the sync pool (503 when full), then bounded by the
    /// sync time limit; more than [`SYNC_ROW_LIMIT`] rows is a 400 pointing at large queries.
    pub async fn query(
        &self,
        pass: DatasetPass<Read>,
        version: Option<i64>,
        at: AsOf,
        body: Bytes,
        format: OutputFormat,
    ) -> Result<(&'static str, Vec<u8>, i64)> {
        let input = QueryInput::Json(body);
        let render = move |schema, batches: &[RecordBatch]| render(format, schema, batches);
        let ((content_type, bytes), commit) =
            self.run_sync(pass, version, at, input, render).await?;
        Ok((content_type, bytes, commit))
    }

    /// The query `request` (built by a front door, not parsed from JSON) as [`Engine::query`]
    /// runs it, in `format`: (content type, bytes, the commit read).
    pub async fn query_request(
        &self,
        pass: DatasetPass<Read>,
        version: Option<i64>,
        at: AsOf,
        request: QueryRequest,
        format: OutputFormat,
    ) -> Result<(&'static str, Vec<u8>, i64)> {
        let input = QueryInput::Typed(Box::new(request));
        let render = move |schema, batches: &[RecordBatch]| render(format, schema, batches);
        let ((content_type, bytes), commit) =
            self.run_sync(pass, version, at, input, render).await?;
        Ok((content_type, bytes, commit))
    }

    /// The query `request` as [`Engine::query`] runs it, its answer as a typed [`Table`] (each
    /// cell converted as the JSON answer's), and the commit read.
    pub async fn query_table(
        &self,
        pass: DatasetPass<Read>,
        version: Option<i64>,
        at: AsOf,
        request: QueryRequest,
    ) -> Result<(Table, i64)> {
        let input = QueryInput::Typed(Box::new(request));
        let table = |schema: SchemaRef, batches: &[RecordBatch]| Ok(Table::of(&schema, batches));
        self.run_sync(pass, version, at, input, table).await
    }

    /// Several queries of one page over one commit (the first query's: an upload landing
    /// between them is not half seen), each answered or refused on its own; the commit read.
    pub async fn query_tables(
        &self,
        pass: DatasetPass<Read>,
        version: Option<i64>,
        at: AsOf,
        requests: Vec<QueryRequest>,
    ) -> (Vec<Result<Table>>, Option<i64>) {
        let (mut answers, mut at, mut commit) = (Vec::with_capacity(requests.len()), at, None);
        for request in requests {
            let pass = pass.clone();
            match self.query_table(pass, version, at.clone(), request).await {
                Ok((table, read)) => {
                    (at, commit) = (AsOf::Commit(read), Some(read));
                    answers.push(Ok(table));
                }
                Err(e) => answers.push(Err(e)),
            }
        }
        (answers, commit)
    }

    /// Admits, prepares and runs one synchronous query, its answer made by `answer`.
    async fn run_sync<T: Send + 'static>(
        &self,
        pass: DatasetPass<Read>,
        version: Option<i64>,
        at: AsOf,
        input: QueryInput,
        answer: impl FnOnce(SchemaRef, &[RecordBatch]) -> Result<T> + Send + 'static,
    ) -> Result<(T, i64)> {
        let record = pass.record().clone();
        let subject = pass.subject().clone();
        let note = pass.note().clone();
        let pools = self.pools.clone();
        let slot = pools.admit(QueryKind::Sync).await?;
        let limit = pools.settings().timeout;
        let key = record.key.clone();
        let this = self.clone();
        let work = async move {
            let cap = Some(SYNC_ROW_LIMIT + 1);
            let prepared = this.prepare((&subject, &record, &note), version, &at, input, cap);
            let (prepared, _) = prepared?;
            let commit = prepared.commit();
            let (arrow_schema, batches) = prepared.collect().await?;
            drop(prepared);
            let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
            note.rows(rows as u64);
            if rows as u64 > SYNC_ROW_LIMIT {
                return Err(too_many_rows(&record));
            }
            Ok((answer(arrow_schema, &batches)?, commit))
        };
        let timed_out = Error::invalid(format!(
            "The query ran longer than the limit of {} seconds for synchronous queries \
                 (RAPID_QUERY_TIMEOUT_SECONDS) and was stopped: run it with POST \
                 /api/datasets/{}/{}/{}/query/large, or narrow it (filter, limit)",
            limit.as_secs(),
            key.layer,
            key.domain,
            key.dataset
        ));
        pools.run(Some(slot), limit, work, timed_out).await
    }

    /// Checks the query `body` over commit `at` and starts a QUERY job writing its whole result
    /// as CSV; returns the job id and the commit it reads. The job's claim is taken now (a slot,
    /// or a place in the jobs' wait list): with both full the answer is 503 and no job is
    /// made. When the job succeeds its `result_url` (under `base_url`) downloads the file.
    pub async fn start_large_query(
        &self,
        pass: DatasetPass<Read>,
        version: Option<i64>,
        at: AsOf,
        body: Bytes,
        base_url: &str,
    ) -> Result<(String, i64)> {
        let input = QueryInput::Json(body);
        self.start_large(pass, version, at, input, base_url).await
    }

    /// [`Engine::start_large_query`] of a query `request` built by a front door.
    pub async fn start_large_query_request(
        &self,
        pass: DatasetPass<Read>,
        version: Option<i64>,
        at: AsOf,
        request: QueryRequest,
        base_url: &str,
    ) -> Result<(String, i64)> {
        let input = QueryInput::Typed(Box::new(request));
        self.start_large(pass, version, at, input, base_url).await
    }

    async fn start_large(
        &self,
        pass: DatasetPass<Read>,
        version: Option<i64>,
        at: AsOf,
        input: QueryInput,
        base_url: &str,
    ) -> Result<(String, i64)> {
        let record = pass.record().clone();
        let pools = self.pools.clone();
        let ticket = pools.admit_job().await?;
        let check_limit = pools.settings().timeout;
        let (this, checked_record) = (self.clone(), record.clone());
        let subject = pass.subject().clone();
        let note = pass.note().clone();
        let check = async move {
            this.prepare(
                (&subject, &checked_record, &note),
                version,
                &at,
                input,
                None,
            )
        };
        let timed_out = Error::invalid(format!(
            "Checking the query took longer than {} seconds (RAPID_QUERY_TIMEOUT_SECONDS)",
            check_limit.as_secs()
        ));
        let (prepared, version) = pools.run(None, check_limit, check, timed_out).await?;
        let commit = prepared.commit();
        let job_id = self.jobs.create(NewJob {
            kind: JobKind::Query,
            key: &record.key,
            version,
            subject_id: &pass.subject().id,
            filename: None,
            raw_filename: None,
        })?;
        let span = tracing::info_span!("job", job_id = %job_id, kind = "QUERY");
        let audit = JobAudit {
            subject: pass.subject().clone(),
            note: pass.note().clone(),
            started: std::time::Instant::now(),
        };
        let job = (job_id.clone(), prepared, audit);
        self.spawn_large_query(job, ticket, base_url.to_string(), span);
        Ok((job_id, commit))
    }

    fn spawn_large_query(
        &self,
        (id, prepared, audit): (String, PreparedQuery, JobAudit),
        ticket: crate::query::JobTicket,
        base_url: String,
        span: tracing::Span,
    ) {
        let pools = self.pools.clone();
        let (jobs, auth, storage) = (self.jobs.clone(), self.auth.clone(), self.storage.clone());
        let ttl = self.settings.result_ttl_seconds;
        let limit = pools.settings().large_timeout;
        let this = self.clone();
        // The link carries the policy the rows were read under: checked again at download.
        let bound = format!("{:x}", prepared.policy_bound());
        actix::spawn(async move {
            let (job, jobs_for_run) = (id.clone(), jobs.clone());
            let work = async move {
                large::write_csv_result(prepared, &jobs_for_run, &job, &storage).await
            };
            let timed_out = Error::invalid(format!(
                "The query ran longer than the limit of {} seconds for large-query jobs \
                     (RAPID_LARGE_QUERY_TIMEOUT_SECONDS) and was stopped: narrow it (filter, \
                     fewer columns)",
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
                tracing::error!(job_id = id, error = %e.report(), "could not record a query job's outcome");
            }
            let rows = outcome.as_ref().map(|(_, rows)| *rows);
            this.record_job(("QUERY", &id), audit, rows).await;
        }.instrument(span));
    }
}

impl Engine {
    /// The policy of `record`'s schema `version` as it applies to `subject` (nothing when the
    /// version has none): what the table given to that subject applies.
    pub(crate) fn policy_for(
        &self,
        subject: &Subject,
        record: &DatasetRecord,
        version: i64,
        schema: &crate::schema::ValidSchema,
    ) -> Result<crate::query::policy::EffectivePolicy> {
        crate::query::policy::for_subject(
            self.catalog.as_ref(),
            (record.id, version),
            schema,
            subject,
            &self.mask_key,
        )
    }
}

/// A synchronous result in `format`: (content type, bytes).
pub(super) fn render(
    format: OutputFormat,
    arrow_schema: SchemaRef,
    batches: &[RecordBatch],
) -> Result<(&'static str, Vec<u8>)> {
    let names: Vec<String> = arrow_schema
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    Ok(match format {
        OutputFormat::Json => ("application/json", to_json(batches)),
        OutputFormat::Csv => ("text/csv; charset=utf-8", to_csv(&names, batches)),
        OutputFormat::Arrow => (
            "application/vnd.apache.arrow.stream",
            to_arrow_stream(arrow_schema, batches)?,
        ),
        OutputFormat::Parquet => (
            "application/vnd.apache.parquet",
            to_parquet(arrow_schema, batches)?,
        ),
    })
}

fn too_many_rows(record: &DatasetRecord) -> Error {
    Error::invalid(format!(
        "The result has more than {SYNC_ROW_LIMIT} rows: use POST /api/datasets/{}/{}/{}/query/large, \
         or narrow the query (filter, limit)",
        record.key.layer, record.key.domain, record.key.dataset
    ))
}
