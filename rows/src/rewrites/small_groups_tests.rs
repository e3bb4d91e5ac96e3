use std::sync::Arc;

use arrow::array::{
    Float64Array, Int64Array, LargeStringArray, RecordBatch, StringArray, StringViewArray,
};
use arrow::datatypes::{DataType, Field, Schema};
use datafusion::datasource::MemTable;
use datafusion::physical_plan::{collect, displayable, ExecutionPlan};
use datafusion::prelude::{SessionConfig, SessionContext};

use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::physical_plan::aggregates::{AggregateExec, AggregateMode};

use super::{rewrite, rewrite_with, Grouping, Limits};
use crate::test_plans::{answer, plan};

/// Three partitions of several small batches: short and long text (long values repeat, in
/// batches with buffers of their own), nulls in the key and in the values.
fn context(rows_per_batch: usize, batches: usize, distinct: usize) -> SessionContext {
    let schema = Arc::new(Schema::new(vec![
        Field::new("k", DataType::Utf8View, true),
        Field::new("v", DataType::Int64, true),
        Field::new("x", DataType::Float64, true),
        Field::new("ts", DataType::Utf8, true),
        Field::new("tl", DataType::LargeUtf8, true),
    ]));
    let mut partitions = vec![Vec::new(), Vec::new(), Vec::new()];
    let mut n = 0usize;
    for b in 0..batches {
        let mut keys = Vec::new();
        let mut values = Vec::new();
        let mut floats = Vec::new();
        let mut runs = Vec::new();
        for _ in 0..rows_per_batch {
            n += 1;
            let pick = (n * 7919) % distinct;
            keys.push(match pick % 5 {
                0 => None,
                1 => Some(format!("a much longer text value number {pick}")),
                2 => Some(String::new()),
                _ => Some(format!("k{pick}")),
            });
            values.push((!n.is_multiple_of(11)).then_some((n % 13) as i64 - 6));
            floats.push((!n.is_multiple_of(7)).then_some(n as f64 / 8.0));
            // Runs of equal text, as a partition column arrives, with nulls between some.
            runs.push((n % 17 != 3).then(|| format!("run {}", (n / 9) % distinct.min(6))));
        }
        let batch = RecordBatch::try_new(
            Arc::clone(&schema),
            vec![
                Arc::new(StringViewArray::from_iter(keys)),
                Arc::new(Int64Array::from(values)),
                Arc::new(Float64Array::from(floats)),
                Arc::new(StringArray::from(runs.clone())),
                Arc::new(LargeStringArray::from(runs)),
            ],
        )
        .unwrap();
        partitions[b % 3].push(batch);
    }
    let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(3));
    ctx.register_table(
        "t",
        Arc::new(MemTable::try_new(schema, partitions).unwrap()),
    )
    .unwrap();
    ctx
}

fn shown(plan: &Arc<dyn ExecutionPlan>) -> String {
    displayable(plan.as_ref()).indent(false).to_string()
}

const EVERY_AGGREGATE: &str = "SELECT k, count(*) AS n, count(v) AS nv, sum(v) AS s, \
    avg(x) AS a, min(v) AS lo, max(x) AS hi, min(k) AS first, \
    count(*) FILTER (WHERE v > 2) AS big, sum(x) FILTER (WHERE k IS NOT NULL) AS sx \
    FROM t GROUP BY k ORDER BY k NULLS FIRST";

/// Same answer as DataFusion's own partial aggregate, and the replacement did happen.
async fn same_as_datafusion(ctx: &SessionContext, sql: &str, limits: Limits) -> String {
    // Two plans: operators below the replaced one (a repartition) run once per plan.
    let theirs = plan(ctx, sql).await;
    let ours = rewrite_with(plan(ctx, sql).await, limits).unwrap();
    assert!(shown(&ours).contains("SmallGroupsExec"), "{}", shown(&ours));
    assert!(!shown(&theirs).contains("SmallGroupsExec"));
    let expected = answer(ctx, theirs).await;
    let got = answer(ctx, ours).await;
    assert_eq!(got, expected);
    got
}

#[tokio::test]
async fn same_answers_as_datafusion_for_every_aggregate_nulls_and_long_text() {
    let ctx = context(100, 12, 40);
    let got = same_as_datafusion(&ctx, EVERY_AGGREGATE, Limits::default()).await;
    // 40 picks: 8 nulls collapse into one group, 8 empty strings into another, 24 others.
    assert_eq!(got.lines().count(), 4 + 26, "{got}");
    assert!(got.contains("a much longer text value number"));
}

#[tokio::test]
async fn text_without_views_grouped_by_runs() {
    let ctx = context(100, 12, 40);
    for key in ["ts", "tl"] {
        let sql = EVERY_AGGREGATE
            .replace(
                "GROUP BY k ORDER BY k",
                &format!("GROUP BY {key} ORDER BY {key}"),
            )
            .replace("SELECT k,", &format!("SELECT {key},"));
        let got = same_as_datafusion(&ctx, &sql, Limits::default()).await;
        // Six run values and the null group.
        assert_eq!(got.lines().count(), 4 + 7, "{got}");
        same_as_datafusion(
            &ctx,
            &sql,
            Limits {
                groups: 2,
                bytes: usize::MAX,
                batch_bytes: usize::MAX,
            },
        )
        .await;
    }
}

#[tokio::test]
async fn state_emitted_early_and_passed_on_gives_the_same_answers() {
    // Few distinct values: the group limit emits state again and again, never passing on.
    let ctx = context(50, 9, 40);
    for groups in [1, 2, 5] {
        let limits = Limits {
            groups,
            bytes: usize::MAX,
            batch_bytes: usize::MAX,
        };
        same_as_datafusion(&ctx, EVERY_AGGREGATE, limits).await;
    }
    // A byte limit of one: every batch with a text value emits.
    let limits = Limits {
        groups: usize::MAX,
        bytes: 1,
        batch_bytes: usize::MAX,
    };
    same_as_datafusion(&ctx, EVERY_AGGREGATE, limits).await;
    // Batches larger than a limit of one byte: every one is passed on ungrouped.
    let limits = Limits {
        batch_bytes: 1,
        ..Limits::default()
    };
    same_as_datafusion(&ctx, EVERY_AGGREGATE, limits).await;
    // Mostly distinct values: past the limit, rows are passed on as states.
    let ctx = context(64, 30, 100_000);
    let limits = Limits {
        groups: 100,
        bytes: usize::MAX,
        batch_bytes: usize::MAX,
    };
    same_as_datafusion(&ctx, EVERY_AGGREGATE, limits).await;
}

#[tokio::test]
async fn empty_input_and_expressions_as_keys() {
    let ctx = context(10, 6, 9);
    same_as_datafusion(
        &ctx,
        "SELECT k, count(*) AS n FROM t WHERE v > 100 GROUP BY k",
        Limits::default(),
    )
    .await;
    same_as_datafusion(
        &ctx,
        "SELECT upper(k) AS u, sum(v) AS s FROM t GROUP BY upper(k) HAVING sum(v) > 0 ORDER BY u",
        Limits::default(),
    )
    .await;
}

#[tokio::test]
async fn distinct_counts_through_datafusions_two_stages() {
    // DataFusion groups by (k, v) first, then counts per k: the second partial stage is ours.
    let ctx = context(40, 9, 30);
    let sql = "SELECT k, count(DISTINCT v) AS d FROM t GROUP BY k ORDER BY k";
    same_as_datafusion(&ctx, sql, Limits::default()).await;
}

/// The partial aggregate of `sql`, and its input's batches.
async fn partial_and_input(
    ctx: &SessionContext,
    sql: &str,
) -> (Arc<dyn ExecutionPlan>, Vec<RecordBatch>) {
    let plan = plan(ctx, sql).await;
    let mut aggregate = None;
    plan.apply(|node| {
        if node
            .downcast_ref::<AggregateExec>()
            .is_some_and(|a| *a.mode() == AggregateMode::Partial)
        {
            aggregate = Some(Arc::clone(node));
        }
        Ok(TreeNodeRecursion::Continue)
    })
    .unwrap();
    let aggregate = aggregate.unwrap();
    let input = aggregate.downcast_ref::<AggregateExec>().unwrap().input();
    let batches = collect(Arc::clone(input), ctx.task_ctx()).await.unwrap();
    (aggregate, batches)
}

#[tokio::test]
async fn a_batch_of_keys_over_the_byte_limit_is_passed_on_whole() {
    let ctx = context(64, 3, 40);
    let (aggregate, batches) =
        partial_and_input(&ctx, "SELECT k, count(*) FROM t GROUP BY k").await;
    let aggregate = aggregate.downcast_ref::<AggregateExec>().unwrap();
    let limits = Limits {
        batch_bytes: 1,
        ..Limits::default()
    };
    let mut grouping = Grouping::new(aggregate, limits).unwrap();
    for batch in batches.iter().filter(|b| b.num_rows() > 0) {
        let out = grouping.consume(batch).unwrap().unwrap();
        assert_eq!(out.num_rows(), batch.num_rows());
    }
    assert_eq!(grouping.groups.len(), 0);
}

#[tokio::test]
async fn mostly_distinct_input_is_passed_on_after_the_limit() {
    let ctx = context(64, 30, 100_000);
    let (aggregate, batches) =
        partial_and_input(&ctx, "SELECT k, count(*) FROM t GROUP BY k").await;
    let aggregate = aggregate.downcast_ref::<AggregateExec>().unwrap();
    let limits = Limits {
        groups: 100,
        bytes: usize::MAX,
        batch_bytes: usize::MAX,
    };
    let mut grouping = Grouping::new(aggregate, limits).unwrap();
    let mut rows_out = 0;
    for batch in &batches {
        if let Some(out) = grouping.consume(batch).unwrap() {
            rows_out += out.num_rows();
        }
    }
    assert!(grouping.passing);
    rows_out += grouping.emit().unwrap().map_or(0, |b| b.num_rows());
    // Every row is accounted for once, grouped or passed on, and nothing is lost.
    let rows_in: usize = batches.iter().map(|b| b.num_rows()).sum();
    assert!(
        rows_out <= rows_in && rows_out > rows_in / 2,
        "{rows_out} of {rows_in}"
    );
}

#[tokio::test]
async fn other_group_bys_are_left_to_datafusion() {
    let ctx = context(10, 6, 9);
    for sql in [
        "SELECT k, v, count(*) FROM t GROUP BY k, v",
        "SELECT v, count(*) FROM t GROUP BY v",
        "SELECT k, array_agg(v ORDER BY x) FROM t GROUP BY k",
        "SELECT k, count(*) FROM t GROUP BY ROLLUP (k)",
    ] {
        let plan = rewrite(plan(&ctx, sql).await).unwrap();
        assert!(
            !shown(&plan).contains("SmallGroupsExec"),
            "{sql}: {}",
            shown(&plan)
        );
    }
}

#[tokio::test]
async fn a_kept_plan_reset_for_another_run_still_groups_alike() {
    // What the plan cache does: a kept plan runs, and later runs are reset copies of it.
    let ctx = context(60, 9, 40);
    let expected = answer(&ctx, plan(&ctx, EVERY_AGGREGATE).await).await;
    let ours = rewrite(plan(&ctx, EVERY_AGGREGATE).await).unwrap();
    let copy =
        datafusion::physical_plan::execution_plan::reset_plan_states(Arc::clone(&ours)).unwrap();
    assert!(shown(&copy).contains("SmallGroupsExec"), "{}", shown(&copy));
    assert_eq!(answer(&ctx, ours).await, expected);
    assert_eq!(answer(&ctx, copy).await, expected);
}
