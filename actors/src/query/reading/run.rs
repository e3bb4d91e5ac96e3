//! Running a checked query over one version of a dataset.

use std::sync::Arc;

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use datafusion::catalog::TableProvider;
use datafusion::error::DataFusionError;
use datafusion::execution::SendableRecordBatchStream;
use datafusion::physical_plan::{collect, execute_stream_partitioned, ExecutionPlan};

use super::plan_cache::PlanKey;
use super::policy_table::subject_table;
use crate::catalog::Catalog;
use crate::error::{Error, Result};
use crate::history::{snapshot_at, AsOf, FilesAt};
use crate::key::DatasetRecord;
use crate::manifest::DataFile;
use crate::query::admission::pools::{QueryPools, MEMORY_LIMIT};
use crate::query::language::request::QueryRequest;
use crate::query::policy::EffectivePolicy;
use crate::schema::ValidSchema;
use crate::storage::{LeaseGuard, Storage};

/// The synchronous endpoint answers at most this many rows (docs/SPEC.md, Limits).
pub const SYNC_ROW_LIMIT: u64 = 100_000;

/// A query ready to run: checked, with its files fixed from one manifest read.
pub struct PreparedQuery {
    /// The engine's pools: its session template, limits and kept plans.
    pools: Arc<QueryPools>,
    /// The subject's view of the files; a session is made for it only when no plan is kept.
    table: Arc<dyn TableProvider>,
    /// Whether a TopK's running bound stays in its sort (so that the plan can be kept).
    topk_bounds_in_sorts: bool,
    /// The statement over one version, as the plan cache knows it.
    key: PlanKey,
    /// The manifest's files and the table's schema, which a kept plan must have been made for.
    files: Vec<DataFile>,
    schema: SchemaRef,
    /// The commit whose files it reads (0: the version has no commit yet).
    commit: i64,
    /// The fingerprint of the policy it reads under (0: none).
    policy: u64,
    /// Keeps the snapshot's files on disk until the query is dropped.
    _lease: LeaseGuard,
}

impl PreparedQuery {
    /// Checks `request` against the version's schema and takes the file list of commit `at` of `version`
    /// (the live manifest for [`AsOf::Latest`]; an earlier commit's files cost the same to read).
    /// `cap` bounds the rows asked of the engine (the sync endpoint asks for one more than it
    /// answers, to know whether there are more without reading them all).
    pub fn new(
        (pools, catalog): (&Arc<QueryPools>, &dyn Catalog),
        storage: &Storage,
        record: &DatasetRecord,
        (schema, policy): (&ValidSchema, &EffectivePolicy),
        (version, at): (i64, &AsOf),
        request: &QueryRequest,
        cap: Option<u64>,
    ) -> Result<PreparedQuery> {
        let names: Vec<String> = schema.columns().iter().map(|c| c.name.clone()).collect();
        // Bounded before the checker or DataFusion walk anything (see limits).
        crate::query::language::limits::check_request(request, &pools.settings().limits)?;
        let checked = request.check(&names)?;
        let (FilesAt { commit, files }, lease) =
            snapshot_at(catalog, storage, record.id, version, at)?;
        let table = subject_table(storage, schema, &files, policy)?;
        let table_schema = table.schema();
        // Only the cap limits the rows. A TopK's running bound in the scan would prune once
        // more than `cap` rows were found, when the answer is refused anyway; without it, an
        // ordered query's plan can be kept for the next run (see plan_cache).
        let topk_bounds_in_sorts = cap.is_some_and(|c| checked.limit.is_none_or(|l| l >= c));
        Ok(PreparedQuery {
            pools: pools.clone(),
            table,
            topk_bounds_in_sorts,
            key: PlanKey {
                dataset: record.id,
                version,
                sql: checked.to_sql("dataset", cap),
                policy: policy.plan_text(),
            },
            files,
            schema: table_schema,
            commit,
            policy: policy_bound(policy),
            _lease: lease,
        })
    }

    /// The commit whose files this query reads.
    pub fn commit(&self) -> i64 {
        self.commit
    }

    /// The fingerprint of the policy it reads under (0: none), which its result link carries.
    pub fn policy_bound(&self) -> u64 {
        self.policy
    }

    /// For the audit log, from one reading of the statement: the table's columns it names
    /// (every one for `SELECT *`) and the statement with its literals as `?`.
    pub fn audit_view(&self) -> (Vec<String>, String) {
        use crate::audit::statement::tokens_without_literals;
        use datafusion::sql::sqlparser::dialect::PostgreSqlDialect;
        use datafusion::sql::sqlparser::tokenizer::{Token, Tokenizer};
        let all = || {
            self.schema
                .fields()
                .iter()
                .map(|f| f.name().clone())
                .collect()
        };
        let Ok(tokens) = Tokenizer::new(&PostgreSqlDialect {}, &self.key.sql).tokenize() else {
            return (all(), "?".to_string());
        };
        let statement = tokens_without_literals(&tokens);
        let words: Vec<&Token> = tokens
            .iter()
            .filter(|t| !matches!(t, Token::Whitespace(_)))
            .collect();
        if matches!(words.get(1), Some(Token::Mul)) {
            return (all(), statement);
        }
        let mut named: Vec<String> = Vec::new();
        for token in words {
            if let Token::Word(w) = token {
                // Quoted or not (the checker prints names either way): a word that is a column.
                let known = self.schema.fields().iter().any(|f| f.name() == &w.value);
                if known && !named.contains(&w.value) {
                    named.push(w.value.clone());
                }
            }
        }
        (named, statement)
    }

    /// The physical plan, its leaves made to yield now and then (see yielding): a fresh copy of
    /// the one kept for this statement over these files, or planned now (and kept).
    async fn plan(&self) -> Result<Arc<dyn ExecutionPlan>> {
        let plans = self.pools.plans();
        if let Some(plan) = plans
            .reuse(&self.key, &self.files, &self.schema)
            .map_err(engine_error)?
        {
            return Ok(plan);
        }
        // A session of its own (a copy of the template, function registries and all, made
        // only here: a kept plan runs without one), so that no other query sees its table.
        let ctx = self.pools.session();
        if self.topk_bounds_in_sorts {
            crate::query::rewrites::session::keep_topk_bounds_in_sorts(&ctx);
        }
        ctx.register_table("dataset", Arc::clone(&self.table))
            .map_err(engine_error)?;
        let df = ctx.sql(&self.key.sql).await.map_err(engine_error)?;
        let plan = df.create_physical_plan().await.map_err(engine_error)?;
        let plan =
            crate::query::admission::yielding::yield_per_batch(plan).map_err(engine_error)?;
        plans
            .keep(&self.key, &self.files, &self.schema, &plan)
            .map_err(engine_error)?;
        Ok(plan)
    }

    /// The answer's column names and one stream per output partition of the plan: several
    /// only when the rows have no order to keep.
    pub async fn partition_streams(&self) -> Result<(Vec<String>, Vec<SendableRecordBatchStream>)> {
        let plan = self.plan().await?;
        let names = plan
            .schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect();
        let streams =
            execute_stream_partitioned(plan, self.pools.task_context()).map_err(engine_error)?;
        Ok((names, streams))
    }

    /// Runs to completion; fine for results bounded by a cap.
    pub async fn collect(&self) -> Result<(SchemaRef, Vec<RecordBatch>)> {
        let plan = self.plan().await?;
        let planned = plan.schema();
        let batches = collect(plan, self.pools.task_context())
            .await
            .map_err(engine_error)?;
        // The batches' own schema: the analyzer rules may refine types and nullability after
        // the statement was planned.
        let schema = batches.first().map_or(planned, |b| b.schema());
        Ok((schema, batches))
    }
}

/// Planning and type errors come from the query the user wrote (400); file and I/O errors are ours.
pub fn engine_error(e: DataFusionError) -> Error {
    match e.find_root() {
        DataFusionError::ResourcesExhausted(why) => out_of_memory(why),
        DataFusionError::IoError(_)
        | DataFusionError::ObjectStore(_)
        | DataFusionError::ParquetError(_)
        | DataFusionError::Internal(_) => Error::internal(format!("query engine: {e}")),
        root => Error::invalid(format!(
            "Query failed to execute: {}",
            one_line(&root.to_string())
        )),
    }
}

/// The shared memory pool (or the spill folder) cannot hold what the query needs (400). The
/// limit is named when the error is made on the work of the engine's pools (`MEMORY_LIMIT`).
fn out_of_memory(why: &str) -> Error {
    let limit = MEMORY_LIMIT
        .try_with(|bytes| format!("the limit of {} MiB", bytes >> 20))
        .unwrap_or_else(|_| "the limit".to_string());
    Error::invalid(format!(
        "The query needs more memory than {limit} for queries allows \
         (RAPID_QUERY_MEMORY_BYTES; spill space: RAPID_QUERY_SPILL_BYTES): narrow it (filter, \
         fewer groups or columns), or try again when fewer queries run ({})",
        one_line(why)
    ))
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// What a result made under `policy` is bound to: its fingerprint, 0 with none.
pub fn policy_bound(policy: &EffectivePolicy) -> u64 {
    match policy.is_none() {
        true => 0,
        false => policy.fingerprint,
    }
}
