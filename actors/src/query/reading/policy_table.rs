//! The table the engine gives a subject under a dataset policy (docs/DESIGN.md, "Dataset
//! policies"). [`subject_table`] is the one constructor: with nothing applying it is the plain
//! [`ManifestTable`]; otherwise a [`PolicyTable`] whose scan is files -> the row filters ->
//! the masks, all inside one leaf node, [`PolicyExec`]. Being a leaf, nothing the statement asks
//! (its filters, projections, limits) is pushed below it, so a user predicate that can fail
//! runs only on rows the policy kept and sees masked values; EXPLAIN shows the node with the
//! policies' names, never their expressions or the subject's attributes; and it reports no
//! statistics (a count from file statistics would count hidden rows).

use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;

use arrow::array::{RecordBatch, RecordBatchOptions};
use arrow::datatypes::{DataType as ArrowType, Field, Schema, SchemaRef};
use async_trait::async_trait;
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{Column, DFSchema, ScalarValue};
use datafusion::error::{DataFusionError, Result as DfResult};
use datafusion::execution::context::SessionState;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::utils::conjunction;
use datafusion::logical_expr::{
    cast, lit, when, Expr, ExprSchemable, TableProviderFilterPushDown, TableType,
};
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::filter::FilterExec;
use datafusion::physical_plan::projection::ProjectionExec;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, ExecutionPlanProperties, Partitioning,
    PlanProperties,
};
use futures_util::StreamExt;

use super::table::ManifestTable;
use crate::error::Result;
use crate::manifest::DataFile;
use crate::query::policy::{EffectivePolicy, Mask};
use crate::schema::ValidSchema;
use crate::storage::Storage;
use rapid_rows::mask_hash::MaskHash;

/// The table of `files` as `policy`'s subject may see it.
pub fn subject_table(
    storage: &Storage,
    schema: &ValidSchema,
    files: &[DataFile],
    policy: &EffectivePolicy,
) -> Result<Arc<dyn TableProvider>> {
    let table = ManifestTable::new(storage, schema, files)?;
    if policy.is_none() {
        return Ok(Arc::new(table));
    }
    Ok(Arc::new(PolicyTable::new(table, policy.clone())?))
}

/// The columns a subject under `policy` sees: masked ones with their masks' types.
pub fn subject_schema(inner: SchemaRef, policy: &EffectivePolicy) -> Result<SchemaRef> {
    let df = DFSchema::try_from(inner.as_ref().clone()).map_err(schema_error)?;
    let fields = inner
        .fields()
        .iter()
        .map(|f| {
            let expr = column_expr(f, policy);
            let data_type = expr.get_type(&df).map_err(schema_error)?;
            Ok(Field::new(f.name(), data_type, true))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Arc::new(Schema::new(fields)))
}

fn schema_error(e: DataFusionError) -> crate::error::Error {
    crate::error::Error::internal(format!("a policy table's columns: {e}"))
}

/// What a column shows: itself, or its mask over it.
fn column_expr(field: &Field, policy: &EffectivePolicy) -> Expr {
    let name = field.name();
    let column = Expr::Column(Column::from_name(name));
    let text = || cast(column.clone(), ArrowType::Utf8);
    match policy.masks.get(name) {
        None => column,
        Some(Mask::Redact) => when(column.clone().is_null(), lit(ScalarValue::Utf8(None)))
            .otherwise(lit("REDACTED"))
            .unwrap_or_else(|_| lit("REDACTED")),
        Some(Mask::Null) => {
            lit(ScalarValue::try_from(field.data_type()).unwrap_or(ScalarValue::Null))
        }
        Some(Mask::Hash) => MaskHash::call(policy.hash_key.clone(), text()),
        Some(Mask::Last4) => datafusion::functions::unicode::expr_fn::right(text(), lit(4i64)),
        Some(Mask::Year) => cast(
            datafusion::functions::datetime::expr_fn::date_part(lit("year"), column.clone()),
            ArrowType::Int64,
        ),
    }
}

/// A [`ManifestTable`] under an effective policy (see the module's notes).
#[derive(Debug)]
pub struct PolicyTable {
    inner: ManifestTable,
    policy: EffectivePolicy,
    schema: SchemaRef,
}

impl PolicyTable {
    fn new(inner: ManifestTable, policy: EffectivePolicy) -> Result<PolicyTable> {
        let schema = subject_schema(inner.schema(), &policy)?;
        Ok(PolicyTable {
            inner,
            policy,
            schema,
        })
    }

    /// Whether a statement's filter may skip files below the policy: comparisons, `IN` lists and
    /// null tests between an unmasked column and literals, and their `AND`/`OR`/`NOT`. No value
    /// makes such a filter fail (nothing a hidden row holds can surface as an error), and on an
    /// unmasked column the stored value is the one shown, so a file it skips holds no row the
    /// statement would have kept. Anything else (arithmetic, casts, functions) stays above.
    fn skips_files(&self, e: &Expr) -> bool {
        use datafusion::logical_expr::Operator::*;
        let column =
            |e: &Expr| matches!(e, Expr::Column(c) if !self.policy.masks.contains_key(&c.name));
        let literal = |e: &Expr| matches!(e, Expr::Literal(..));
        match e {
            Expr::BinaryExpr(b) => match b.op {
                And | Or => self.skips_files(&b.left) && self.skips_files(&b.right),
                Eq | NotEq | Lt | LtEq | Gt | GtEq => {
                    (column(&b.left) && literal(&b.right)) || (literal(&b.left) && column(&b.right))
                }
                _ => false,
            },
            Expr::InList(l) => column(&l.expr) && l.list.iter().all(literal),
            Expr::IsNull(e) | Expr::IsNotNull(e) => column(e),
            Expr::Not(e) => self.skips_files(e),
            _ => false,
        }
    }

    /// The policy's row filters over the table's own columns.
    fn filters(&self, state: &dyn Session, df: &DFSchema) -> DfResult<Vec<Expr>> {
        let session = state
            .as_any()
            .downcast_ref::<SessionState>()
            .ok_or_else(|| DataFusionError::Internal("a policy table needs a session".into()))?;
        self.policy
            .filters
            .iter()
            .map(|sql| session.create_logical_expr(sql, df))
            .collect()
    }
}

#[async_trait]
impl TableProvider for PolicyTable {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> DfResult<Vec<TableProviderFilterPushDown>> {
        // The statement's filters run above the policy, never beside or before it; those that
        // cannot fail and read no masked column also skip files below it (see `skips_files`).
        Ok(filters
            .iter()
            .map(|f| match self.skips_files(as_written(f)) {
                true => TableProviderFilterPushDown::Inexact,
                false => TableProviderFilterPushDown::Unsupported,
            })
            .collect())
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        pushed: &[Expr],
        _limit: Option<usize>,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        let full = self.inner.schema();
        let full_df = DFSchema::try_from(full.as_ref().clone())?;
        let filters = self.filters(state, &full_df)?;
        // A row filter on partition columns only is applied whole by the files kept below
        // (each file holds one partition value, and a file is kept only where the filter is
        // true for it): it needs no evaluation per row, nor its columns read.
        let per_row: Vec<Expr> = filters
            .iter()
            .filter(|f| f.is_volatile() || !self.inner.is_partition_filter(f))
            .cloned()
            .collect();
        let shown: Vec<usize> = match projection {
            Some(p) => p.clone(),
            None => (0..full.fields().len()).collect(),
        };
        let mut read: BTreeSet<usize> = shown.iter().copied().collect();
        for f in &per_row {
            for c in f.column_refs() {
                read.insert(full.index_of(&c.name)?);
            }
        }
        let read: Vec<usize> = read.into_iter().collect();
        // The policy's own filters may skip files (partition values, column bounds), and so may
        // the statement's that cannot fail (they are applied above, after the policy's).
        let mut skipping = filters.clone();
        skipping.extend(
            pushed
                .iter()
                .map(as_written)
                .filter(|f| self.skips_files(f))
                .cloned(),
        );
        let mut plan = self.inner.scan(state, Some(&read), &skipping, None).await?;
        let read_df = DFSchema::try_from(plan.schema().as_ref().clone())?;
        if let Some(predicate) = conjunction(per_row) {
            let predicate = state.create_physical_expr(predicate, &read_df)?;
            plan = Arc::new(FilterExec::try_new(predicate, plan)?);
        }
        let exprs = shown
            .iter()
            .map(|&i| {
                let field = full.field(i);
                let expr =
                    state.create_physical_expr(column_expr(field, &self.policy), &read_df)?;
                Ok((expr, field.name().clone()))
            })
            .collect::<DfResult<Vec<(Arc<dyn PhysicalExpr>, String)>>>()?;
        plan = Arc::new(ProjectionExec::try_new(exprs, plan)?);
        let schema = Arc::new(self.schema.project(&shown)?);
        Ok(Arc::new(PolicyExec::new(plan, schema, &self.policy.names)))
    }
}

/// A statement's filter as written: the fronts hand each over as `(f) IS NOT DISTINCT FROM
/// true` (so a NULL drops the row wherever it is evaluated); for skipping files the two are
/// the same, and only the written form is one the file bounds can answer.
fn as_written(e: &Expr) -> &Expr {
    use datafusion::logical_expr::Operator::IsNotDistinctFrom;
    match e {
        Expr::BinaryExpr(b)
            if b.op == IsNotDistinctFrom
                && matches!(
                    &*b.right,
                    Expr::Literal(ScalarValue::Boolean(Some(true)), _)
                ) =>
        {
            &b.left
        }
        _ => e,
    }
}

/// The leaf a subject's policy is applied in (see the module's notes).
#[derive(Debug)]
pub struct PolicyExec {
    inner: Arc<dyn ExecutionPlan>,
    schema: SchemaRef,
    names: String,
    properties: Arc<PlanProperties>,
}

impl PolicyExec {
    fn new(inner: Arc<dyn ExecutionPlan>, schema: SchemaRef, names: &[String]) -> PolicyExec {
        let partitions = inner.output_partitioning().partition_count();
        let properties = PlanProperties::new(
            EquivalenceProperties::new(schema.clone()),
            Partitioning::UnknownPartitioning(partitions),
            EmissionType::Incremental,
            Boundedness::Bounded,
        );
        PolicyExec {
            inner,
            schema,
            names: names.join(", "),
            properties: Arc::new(properties),
        }
    }
}

impl DisplayAs for PolicyExec {
    fn fmt_as(&self, _: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "PolicyExec: policies=[{}]", self.names)
    }
}

impl ExecutionPlan for PolicyExec {
    fn name(&self) -> &str {
        "PolicyExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        Vec::new()
    }

    fn apply_expressions(
        &self,
        _: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> DfResult<TreeNodeRecursion>,
    ) -> DfResult<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn with_new_children(
        self: Arc<Self>,
        _: Vec<Arc<dyn ExecutionPlan>>,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        Ok(self)
    }

    /// A kept plan's copy for its next run (plan_cache): the hidden plan is reset too, as the
    /// walk over the visible tree cannot reach it.
    fn reset_state(self: Arc<Self>) -> DfResult<Arc<dyn ExecutionPlan>> {
        Ok(Arc::new(PolicyExec {
            inner: datafusion::physical_plan::execution_plan::reset_plan_states(
                self.inner.clone(),
            )?,
            schema: self.schema.clone(),
            names: self.names.clone(),
            properties: self.properties.clone(),
        }))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> DfResult<SendableRecordBatchStream> {
        let rows = self.inner.execute(partition, context)?;
        let schema = self.schema.clone();
        let out = schema.clone();
        let batches = rows.map(move |batch| {
            let batch = batch?;
            let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
            let columns = batch
                .columns()
                .iter()
                .zip(out.fields())
                .map(|(c, f)| match c.data_type() == f.data_type() {
                    true => Ok(c.clone()),
                    false => arrow::compute::cast(c, f.data_type()),
                })
                .collect::<std::result::Result<Vec<_>, _>>()?;
            Ok(RecordBatch::try_new_with_options(
                out.clone(),
                columns,
                &options,
            )?)
        });
        Ok(Box::pin(RecordBatchStreamAdapter::new(schema, batches)))
    }
}
