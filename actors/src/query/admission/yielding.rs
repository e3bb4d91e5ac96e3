//! Query work that gives its thread back after every batch, so a time limit can stop it.
//!
//! A query is one task on the query runtime, and the time limit is a timer polled by that task.
//! DataFusion's own cooperation spends tokio's budget of 128 units per poll, so a query reading
//! fewer batches than that (a 300,000-row dataset is 37 of them) can compute for tens of seconds
//! in one poll, expensive expressions over every row included, and no timer or abort is seen.
//! Every leaf of the physical plan (after optimisation, so no rule sees this node) is wrapped to
//! yield before a batch once [`YIELD_AFTER`] has passed since it last gave its thread back: the
//! work above it then runs at most that long plus a batch's worth between two chances to stop.
//! (Yielding before every batch cost a group-by over 1M rows a tenth of its time in thread
//! wake-ups and driver polls: about 250 yields per query.) It yields with `tokio::task::yield_now`, which wakes the task only after the
//! worker has polled its timers: a plain self-wake would run it again at once, and with every
//! worker busy tokio looks at timers only every 61 polls (minutes of work).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use arrow::array::RecordBatch;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::error::Result as DfResult;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties};
use futures_util::Stream;

/// `plan` with every leaf wrapped in a [`YieldingExec`].
pub(crate) fn yield_per_batch(plan: Arc<dyn ExecutionPlan>) -> DfResult<Arc<dyn ExecutionPlan>> {
    plan.transform_up(|node| {
        if node.children().is_empty() {
            Ok(Transformed::yes(
                Arc::new(YieldingExec { input: node }) as Arc<dyn ExecutionPlan>
            ))
        } else {
            Ok(Transformed::no(node))
        }
    })
    .map(|t| t.data)
}

#[derive(Debug)]
pub(crate) struct YieldingExec {
    input: Arc<dyn ExecutionPlan>,
}

impl DisplayAs for YieldingExec {
    fn fmt_as(&self, _: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "YieldingExec")
    }
}

impl ExecutionPlan for YieldingExec {
    fn name(&self) -> &str {
        "YieldingExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        self.input.properties()
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    fn apply_expressions(
        &self,
        _: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> DfResult<TreeNodeRecursion>,
    ) -> DfResult<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn maintains_input_order(&self) -> Vec<bool> {
        vec![true]
    }

    fn with_new_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        match children.pop() {
            Some(input) if children.is_empty() => Ok(Arc::new(YieldingExec { input })),
            _ => Err(datafusion::error::DataFusionError::Internal(
                "YieldingExec has one child".into(),
            )),
        }
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> DfResult<SendableRecordBatchStream> {
        let work = super::work_scope::token_of(&context);
        let inner = self.input.execute(partition, context)?;
        let schema = inner.schema();
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            schema,
            YieldEachBatch {
                inner,
                pause: None,
                since: Instant::now(),
                _work: work,
            },
        )))
    }
}

/// How long a leaf computes (with the plan above it) before it gives its thread back.
pub(crate) const YIELD_AFTER: Duration = Duration::from_millis(5);

/// Yields to the runtime before a batch of `inner` once [`YIELD_AFTER`] has passed.
struct YieldEachBatch {
    inner: SendableRecordBatchStream,
    /// The yield under way.
    pause: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
    /// When this stream last gave its thread back (a yield, or `inner` waiting).
    since: Instant,
    /// The query run's token, kept while this pipeline lives (see work_scope).
    _work: Option<Arc<super::work_scope::WorkToken>>,
}

impl Stream for YieldEachBatch {
    type Item = DfResult<RecordBatch>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.pause.is_some() || self.since.elapsed() >= YIELD_AFTER {
            let pause = self
                .pause
                .get_or_insert_with(|| Box::pin(tokio::task::yield_now()));
            if pause.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            self.pause = None;
            self.since = Instant::now();
        }
        let next = self.inner.as_mut().poll_next(cx);
        if next.is_pending() {
            self.since = Instant::now();
        }
        next
    }
}
