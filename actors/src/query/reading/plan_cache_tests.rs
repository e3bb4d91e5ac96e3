//! Kept plans: reused only for the same files and schema, run as fresh copies with the same
//! answers, never kept with dynamic filters, bounded in runs and in count.

use std::sync::Arc;

use arrow::array::{Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use datafusion::execution::runtime_env::RuntimeEnv;
use datafusion::prelude::{ParquetReadOptions, SessionConfig, SessionContext};

use super::*;
use crate::query::rewrites::session::{from_template, keep_topk_bounds_in_sorts, new_context};
use rapid_rows::test_plans::{answer, plan};

fn file(id: i64) -> DataFile {
    DataFile {
        id,
        raw_filename: "raw.csv".into(),
        partition_path: String::new(),
        path: format!("data/x/{id}.parquet"),
        rows: 1,
        bytes: 100,
        stats: None,
    }
}

fn key(sql: &str) -> PlanKey {
    PlanKey {
        dataset: 1,
        version: 1,
        sql: sql.into(),
        policy: String::new(),
    }
}

/// A context over one Parquet file `t` (x int64 0..1000, s one of four strings).
async fn context(dir: &std::path::Path) -> SessionContext {
    let schema = Arc::new(Schema::new(vec![
        Field::new("x", DataType::Int64, false),
        Field::new("s", DataType::Utf8, false),
    ]));
    let x = Int64Array::from_iter_values(0..1000);
    let s = StringArray::from_iter_values((0..1000).map(|i| ["a", "b", "c", "d"][i % 4]));
    let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(x), Arc::new(s)]).unwrap();
    let path = dir.join("t.parquet");
    let mut writer =
        parquet::arrow::ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), schema, None)
            .unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
    let template = new_context(SessionConfig::new(), Arc::new(RuntimeEnv::default())).state();
    let ctx = from_template(&template);
    ctx.register_parquet("t", path.to_str().unwrap(), ParquetReadOptions::default())
        .await
        .unwrap();
    ctx
}

fn schema() -> SchemaRef {
    Arc::new(Schema::new(vec![Field::new("x", DataType::Int64, true)]))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kept_plan_runs_again_as_fresh_copies_with_the_same_answer() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path()).await;
    let sql = "SELECT s, count(*) AS n, avg(x) AS mean FROM t GROUP BY s HAVING avg(x) > 1 \
               ORDER BY s";
    let cache = PlanCache::default();
    let files = [file(1)];
    let first = plan(&ctx, sql).await;
    cache.keep(&key(sql), &files, &schema(), &first).unwrap();
    let expected = answer(&ctx, first).await;
    assert!(expected.contains("| a | 250 | 498.0 |"), "{expected}");
    for _ in 0..3 {
        let again = cache.reuse(&key(sql), &files, &schema()).unwrap();
        assert_eq!(answer(&ctx, again.expect("kept")).await, expected);
    }
    // Two copies at once share no run state.
    let a = cache.reuse(&key(sql), &files, &schema()).unwrap().unwrap();
    let b = cache.reuse(&key(sql), &files, &schema()).unwrap().unwrap();
    let (ra, rb) = tokio::join!(answer(&ctx, a), answer(&ctx, b));
    assert_eq!(
        (ra.as_str(), rb.as_str()),
        (expected.as_str(), expected.as_str())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_files_or_another_schema_plan_afresh() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path()).await;
    let sql = "SELECT x FROM t WHERE x < 3";
    let cache = PlanCache::default();
    let kept = plan(&ctx, sql).await;
    cache.keep(&key(sql), &[file(1)], &schema(), &kept).unwrap();
    // A commit added a file: not reused, and the stale plan is gone.
    assert!(cache
        .reuse(&key(sql), &[file(1), file(2)], &schema())
        .unwrap()
        .is_none());
    assert_eq!(cache.len(), 0);
    cache.keep(&key(sql), &[file(1)], &schema(), &kept).unwrap();
    let other = Arc::new(Schema::new(vec![Field::new("y", DataType::Int64, true)]));
    assert!(cache
        .reuse(&key(sql), &[file(1)], &other)
        .unwrap()
        .is_none());
    // Another version or statement is another key.
    cache.keep(&key(sql), &[file(1)], &schema(), &kept).unwrap();
    let mut next = key(sql);
    next.version = 2;
    assert!(cache.reuse(&next, &[file(1)], &schema()).unwrap().is_none());
    assert!(cache
        .reuse(&key("SELECT 1"), &[file(1)], &schema())
        .unwrap()
        .is_none());
    assert!(cache
        .reuse(&key(sql), &[file(1)], &schema())
        .unwrap()
        .is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plans_with_dynamic_filters_in_the_scan_are_not_kept() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path()).await;
    // A TopK pushes its running bound into the scan.
    let sql = "SELECT x, s FROM t ORDER BY x DESC LIMIT 3";
    let topk = plan(&ctx, sql).await;
    assert!(has_shared_dynamic_filter(&topk).unwrap());
    let cache = PlanCache::default();
    cache.keep(&key(sql), &[file(1)], &schema(), &topk).unwrap();
    assert_eq!(cache.len(), 0);
    let plain = plan(&ctx, "SELECT x, s FROM t ORDER BY x DESC").await;
    assert!(!has_shared_dynamic_filter(&plain).unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_topk_that_keeps_its_bound_to_itself_is_kept_and_answers_alike() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path()).await;
    // As a query limited only by the sync cap is planned (see run.rs).
    keep_topk_bounds_in_sorts(&ctx);
    let sql = "SELECT x, s FROM t WHERE x % 7 = 0 ORDER BY s DESC, x LIMIT 5";
    let topk = plan(&ctx, sql).await;
    assert!(!has_shared_dynamic_filter(&topk).unwrap());
    let cache = PlanCache::default();
    cache.keep(&key(sql), &[file(1)], &schema(), &topk).unwrap();
    let expected = answer(&ctx, topk).await;
    assert!(
        expected.contains("| 7   | d |") && expected.contains("| 119 | d |"),
        "{expected}"
    );
    for _ in 0..3 {
        let again = cache.reuse(&key(sql), &[file(1)], &schema()).unwrap();
        assert_eq!(answer(&ctx, again.expect("kept")).await, expected);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_is_reused_until_it_has_opened_its_share_of_files() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path()).await;
    let sql = "SELECT x FROM t";
    let kept = plan(&ctx, sql).await;
    // Two files, six openings: the first run and two reuses.
    let cache = PlanCache::new(4, 6);
    let files = [file(1), file(2)];
    cache.keep(&key(sql), &files, &schema(), &kept).unwrap();
    for _ in 0..2 {
        assert!(cache.reuse(&key(sql), &files, &schema()).unwrap().is_some());
    }
    assert!(cache.reuse(&key(sql), &files, &schema()).unwrap().is_none());
    assert_eq!(cache.len(), 0);
    // More files than openings allowed: never kept.
    let many: Vec<DataFile> = (0..7).map(file).collect();
    cache.keep(&key(sql), &many, &schema(), &kept).unwrap();
    assert_eq!(cache.len(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_least_recently_used_plan_goes_first() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path()).await;
    let kept = plan(&ctx, "SELECT x FROM t").await;
    let cache = PlanCache::new(2, 100);
    let files = [file(1)];
    cache.keep(&key("a"), &files, &schema(), &kept).unwrap();
    cache.keep(&key("b"), &files, &schema(), &kept).unwrap();
    assert!(cache.reuse(&key("a"), &files, &schema()).unwrap().is_some());
    cache.keep(&key("c"), &files, &schema(), &kept).unwrap();
    assert_eq!(cache.len(), 2);
    assert!(cache.reuse(&key("b"), &files, &schema()).unwrap().is_none());
    assert!(cache.reuse(&key("a"), &files, &schema()).unwrap().is_some());
    assert!(cache.reuse(&key("c"), &files, &schema()).unwrap().is_some());
}
