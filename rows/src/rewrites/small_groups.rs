//! The partial stage of a group-by over one text column, faster than DataFusion's own.
//!
//! DataFusion's `GroupValuesBytesView` hashes every row's string and probes a hash table with
//! it: grouping 5M rows by a four-valued text column cost two thirds of the query's CPU (65 ms
//! against 23 without the group-by; benches/README.md, "Fifth round"). Text read from a Parquet dictionary arrives as
//! views that repeat exactly, so [`TextGroups`] looks a row's 16-byte view up in a small
//! direct-mapped cache first and hashes the string only when the cache misses. Text without
//! views (a partition column arrives as `Utf8`) is hashed only when it differs from the row
//! before: a partition's value is the same for a whole file.
//!
//! Only a `Partial` aggregate is replaced ([`rewrite`]): its output is intermediate state that
//! the final stage merges by value, so emitting a group twice (a cache that missed, or the
//! group limit below) is harmless, and the answer is computed by DataFusion's own final stage
//! and accumulators. Memory is bounded without a reservation: at most [`MAX_GROUPS`] groups and
//! [`MAX_GROUP_BYTES`] of their text are held; past that the state is emitted and grouping
//! starts again, and when the input turns out to be mostly distinct values, rows are passed on
//! as states without grouping (as DataFusion's "skip partial aggregation" does); so is a single
//! batch whose keys alone are larger than that.

use std::fmt;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, BooleanArray, RecordBatch};
use arrow::compute::cast;
use arrow::datatypes::{DataType, SchemaRef};
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::config::ConfigOptions;
use datafusion::error::{DataFusionError, Result as DfResult};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::{EmitTo, GroupsAccumulator};
use datafusion::physical_expr::aggregate::AggregateFunctionExpr;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::aggregates::{AggregateExec, AggregateMode};
use datafusion::physical_plan::execution_plan::{ChildrenPropertiesMode, ReplaceChildrenOptions};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, InputOrderMode, PlanProperties,
};
use futures_util::StreamExt;

use super::text_groups::TextGroups;

/// Groups held before their state is emitted and grouping starts again.
pub(crate) const MAX_GROUPS: usize = 65_536;
/// Bytes of group text held before the state is emitted (held twice: once in the lookup map,
/// once in the values to emit).
pub(crate) const MAX_GROUP_BYTES: usize = 16 << 20;

/// `plan` with every eligible partial aggregate replaced by a [`SmallGroupsExec`].
pub(crate) fn rewrite(plan: Arc<dyn ExecutionPlan>) -> DfResult<Arc<dyn ExecutionPlan>> {
    rewrite_with(plan, Limits::default())
}

/// [`rewrite`] as the last physical optimizer rule of every session (`session::new_context`),
/// so SQL statements (HTTP and the PostgreSQL protocol) get it as the query endpoint does: a
/// group-by over text over the wire ran at half the endpoint's speed without it.
#[derive(Debug)]
pub(crate) struct SmallGroupsRule;

impl PhysicalOptimizerRule for SmallGroupsRule {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        _config: &ConfigOptions,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        rewrite(plan)
    }

    fn name(&self) -> &str {
        "rapid_small_groups"
    }

    fn schema_check(&self) -> bool {
        true
    }
}

/// [`rewrite`] with other limits (tests reach them with a few rows).
pub(crate) fn rewrite_with(
    plan: Arc<dyn ExecutionPlan>,
    limits: Limits,
) -> DfResult<Arc<dyn ExecutionPlan>> {
    plan.transform_up(|node| Ok(replaced(node, limits)))
        .map(|t| t.data)
}

/// `node` run by a [`SmallGroupsExec`] if it is eligible, else `node` as it is.
fn replaced(node: Arc<dyn ExecutionPlan>, limits: Limits) -> Transformed<Arc<dyn ExecutionPlan>> {
    if eligible(node.as_ref()) {
        Transformed::yes(Arc::new(SmallGroupsExec { agg: node, limits }))
    } else {
        Transformed::no(node)
    }
}

/// A partial aggregate by exactly one text expression, whose aggregates all have group
/// accumulators and need no input order, with no grouping sets, limit or dynamic filter.
fn eligible(node: &dyn ExecutionPlan) -> bool {
    let Some(agg) = node.downcast_ref::<AggregateExec>() else {
        return false;
    };
    let group_by = agg.group_expr();
    *agg.mode() == AggregateMode::Partial
        && !group_by.has_grouping_set()
        && group_by.is_single()
        && group_by.expr().len() == 1
        && group_by.expr()[0]
            .0
            .data_type(&agg.input_schema())
            .is_ok_and(|t| matches!(t, DataType::Utf8View | DataType::Utf8 | DataType::LargeUtf8))
        && agg.limit_options().is_none()
        && agg.dynamic_expressions_produced().is_empty()
        && matches!(agg.input_order_mode(), InputOrderMode::Linear)
        && agg.aggr_expr().iter().all(|a| {
            a.groups_accumulator_supported() && a.order_bys().is_empty() && !a.is_distinct()
        })
}

/// When state is emitted early, and which batches are passed on ungrouped (see the module
/// comment).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub groups: usize,
    pub bytes: usize,
    /// A batch whose keys take more memory than this is passed on as states: its text could
    /// all be new, and would be copied twice before the byte limit is next looked at.
    pub batch_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            groups: MAX_GROUPS,
            bytes: MAX_GROUP_BYTES,
            batch_bytes: MAX_GROUP_BYTES,
        }
    }
}

/// Runs the partial aggregate it replaces (kept as `agg`: its input, expressions and schema).
/// Made only by [`replaced`], so `agg` is always an eligible `AggregateExec`.
#[derive(Debug)]
pub(crate) struct SmallGroupsExec {
    agg: Arc<dyn ExecutionPlan>,
    limits: Limits,
}

impl SmallGroupsExec {
    fn aggregate(&self) -> &AggregateExec {
        self.agg
            .downcast_ref::<AggregateExec>()
            .expect("made by replaced")
    }
}

impl DisplayAs for SmallGroupsExec {
    fn fmt_as(&self, t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "SmallGroupsExec for ")?;
        self.aggregate().fmt_as(t, f)
    }
}

impl ExecutionPlan for SmallGroupsExec {
    fn name(&self) -> &str {
        "SmallGroupsExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        self.agg.properties()
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        self.agg.children()
    }

    fn apply_expressions(
        &self,
        f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> DfResult<TreeNodeRecursion>,
    ) -> DfResult<TreeNodeRecursion> {
        self.agg.apply_expressions(f)
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        let agg = Arc::clone(&self.agg).replace_children(
            children,
            ReplaceChildrenOptions::new(ChildrenPropertiesMode::Recompute),
        )?;
        // New children may make it ineligible (an ordered input): then DataFusion's runs.
        Ok(replaced(agg, self.limits).data)
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> DfResult<SendableRecordBatchStream> {
        let agg = self.aggregate();
        let input = agg.input().execute(partition, context)?;
        let state = Grouping::new(agg, self.limits)?;
        let schema = agg.schema();
        let batches = futures_util::stream::unfold(
            (input, state, false),
            |(mut input, mut state, done)| async move {
                if done {
                    return None;
                }
                loop {
                    let next = match input.next().await {
                        Some(Ok(batch)) => state.consume(&batch),
                        Some(Err(e)) => Err(e),
                        None => {
                            let last = state.emit().transpose()?;
                            return Some((last, (input, state, true)));
                        }
                    };
                    match next {
                        Ok(None) => continue,
                        Ok(Some(out)) => return Some((Ok(out), (input, state, false))),
                        Err(e) => return Some((Err(e), (input, state, true))),
                    }
                }
            },
        );
        Ok(Box::pin(RecordBatchStreamAdapter::new(schema, batches)))
    }
}

/// One aggregate function: its arguments, its `FILTER`, and its running state per group.
struct Aggregate {
    arguments: Vec<Arc<dyn PhysicalExpr>>,
    filter: Option<Arc<dyn PhysicalExpr>>,
    accumulator: Box<dyn GroupsAccumulator>,
}

/// The running state of one output partition.
struct Grouping {
    schema: SchemaRef,
    group: Arc<dyn PhysicalExpr>,
    aggregates: Vec<Aggregate>,
    groups: TextGroups,
    indices: Vec<usize>,
    limits: Limits,
    /// Rows grouped since the state was last emitted.
    rows: usize,
    /// Rows are passed on as states without grouping (mostly distinct input).
    passing: bool,
}

impl Grouping {
    fn new(agg: &AggregateExec, limits: Limits) -> DfResult<Self> {
        let aggregates = agg
            .aggr_expr()
            .iter()
            .zip(agg.filter_expr())
            .map(|(a, filter): (&Arc<AggregateFunctionExpr>, _)| {
                Ok(Aggregate {
                    arguments: a.expressions(),
                    filter: filter.clone(),
                    accumulator: a.create_groups_accumulator()?,
                })
            })
            .collect::<DfResult<Vec<_>>>()?;
        Ok(Grouping {
            schema: agg.schema(),
            group: Arc::clone(&agg.group_expr().expr()[0].0),
            aggregates,
            groups: TextGroups::new(),
            indices: Vec::new(),
            limits,
            rows: 0,
            passing: false,
        })
    }

    /// Takes one input batch; returns state to send on, if any is due.
    fn consume(&mut self, batch: &RecordBatch) -> DfResult<Option<RecordBatch>> {
        let rows = batch.num_rows();
        let keys = self.group.evaluate(batch)?.into_array(rows)?;
        let mut arguments = Vec::with_capacity(self.aggregates.len());
        for a in &self.aggregates {
            let values = a
                .arguments
                .iter()
                .map(|e| e.evaluate(batch)?.into_array(rows))
                .collect::<DfResult<Vec<_>>>()?;
            let filter = match &a.filter {
                Some(f) => Some(f.evaluate(batch)?.into_array(rows)?),
                None => None,
            };
            arguments.push((values, filter));
        }
        if self.passing || keys.get_array_memory_size() > self.limits.batch_bytes {
            let mut columns = vec![keys];
            for (a, (values, filter)) in self.aggregates.iter().zip(&arguments) {
                let filter = filter.as_ref().map(|f| f.as_boolean());
                columns.extend(a.accumulator.convert_to_state(values, filter)?);
            }
            return Ok(Some(RecordBatch::try_new(
                Arc::clone(&self.schema),
                columns,
            )?));
        }
        match keys.data_type() {
            DataType::Utf8 => self
                .groups
                .intern_runs(keys.as_string::<i32>(), &mut self.indices),
            DataType::LargeUtf8 => self
                .groups
                .intern_runs(keys.as_string::<i64>(), &mut self.indices),
            DataType::Utf8View => self.groups.intern(keys.as_string_view(), &mut self.indices),
            other => {
                return Err(DataFusionError::Internal(format!(
                    "SmallGroupsExec was given {other} keys"
                )))
            }
        }
        let total = self.groups.len();
        for (a, (values, filter)) in self.aggregates.iter_mut().zip(&arguments) {
            let filter: Option<&BooleanArray> = filter.as_ref().map(|f| f.as_boolean());
            a.accumulator
                .update_batch(values, &self.indices, filter, total)?;
        }
        self.rows += rows;
        if total < self.limits.groups && self.groups.bytes < self.limits.bytes {
            return Ok(None);
        }
        // Mostly new groups: grouping only costs; the final stage does the work either way.
        if total * 2 > self.rows {
            self.passing = true;
        }
        self.emit()
    }

    /// The state of every group so far (none if there is none); grouping starts again.
    fn emit(&mut self) -> DfResult<Option<RecordBatch>> {
        if self.groups.len() == 0 {
            return Ok(None);
        }
        let values = self.groups.take();
        let key_type = self.schema.field(0).data_type();
        let values = if values.data_type() == key_type {
            values
        } else {
            cast(&values, key_type)?
        };
        let mut columns: Vec<ArrayRef> = vec![values];
        for a in &mut self.aggregates {
            columns.extend(a.accumulator.state(EmitTo::All)?);
        }
        self.rows = 0;
        Ok(Some(RecordBatch::try_new(
            Arc::clone(&self.schema),
            columns,
        )?))
    }
}

#[cfg(test)]
#[path = "small_groups_tests.rs"]
mod tests;
