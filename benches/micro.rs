//! Micro-benchmarks of the hot paths, in-process (no HTTP): CSV parsing and validation per column
//! type, staging Parquet (unpartitioned and partitioned), and the query checker.
//!
//! cargo bench --bench micro

use std::sync::Arc;

use arrow::array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use rapid_actors::ingest::{ingest_csv, stage_batches, IngestPlan};
use rapid_actors::query::QueryRequest;
use rapid_actors::schema::{validate, Schema, SchemaContext, ValidSchema};
use serde_json::json;

const ROWS: usize = 100_000;

fn schema(columns: serde_json::Value) -> ValidSchema {
    let schema: Schema = serde_json::from_value(json!({
        "metadata": {"domain": "bench", "dataset": "micro", "sensitivity": "PUBLIC",
                     "owners": [{"name": "Bench", "email": "bench@example.com"}]},
        "columns": columns
    }))
    .unwrap();
    let layers = vec!["default".to_string()];
    let domains = Default::default();
    validate(
        &schema,
        &SchemaContext {
            layers: &layers,
            protected_domains: &domains,
        },
    )
    .unwrap()
}

/// One column of `ROWS` values of a type, as CSV.
fn column_csv(kind: &str) -> Vec<u8> {
    let mut csv = String::from("v\n");
    for i in 0..ROWS {
        match kind {
            "int" => csv.push_str(&format!("{}\n", i * 7919 % 1_000_003)),
            "double" => csv.push_str(&format!("{}.{:03}\n", i % 10_000, i % 1000)),
            "string" => csv.push_str(&format!("\"name {i}, the {}th\"\n", i % 97)),
            "date" => csv.push_str(&format!(
                "20{:02}-{:02}-{:02}\n",
                10 + i % 15,
                1 + i % 12,
                1 + i % 28
            )),
            _ => csv.push_str(if i % 3 == 0 { "TRUE\n" } else { "false\n" }),
        }
    }
    csv.into_bytes()
}

fn csv_validation(c: &mut Criterion) {
    let mut group = c.benchmark_group("csv_validation");
    for kind in ["int", "double", "string", "date", "boolean"] {
        let mut col = json!({"name": "v", "data_type": kind, "allow_null": true});
        if kind == "date" {
            col["format"] = json!("%Y-%m-%d");
        }
        let schema = schema(json!([col]));
        let csv = column_csv(kind);
        group.throughput(Throughput::Bytes(csv.len() as u64));
        group.bench_with_input(BenchmarkId::from_parameter(kind), &csv, |b, csv| {
            b.iter(|| {
                let dir = tempfile::tempdir().unwrap();
                let progress = |_: u64| {};
                let plan = IngestPlan {
                    schema: &schema,
                    staging: dir.path(),
                    progress: &progress,
                    max_value_bytes: rapid_actors::ingest::DEFAULT_MAX_VALUE_BYTES,
                    on_error: Default::default(),
                    profile: true,
                };
                ingest_csv(csv.as_slice(), &plan).unwrap()
            })
        });
    }
    group.finish();
}

fn parquet_staging(c: &mut Criterion) {
    let mut group = c.benchmark_group("parquet_staging");
    let columns = |partitioned: bool| {
        json!([
            {"name": "region", "data_type": "string", "allow_null": false, "partition_index": if partitioned { json!(0) } else { json!(null) }},
            {"name": "id", "data_type": "int", "allow_null": false},
            {"name": "price", "data_type": "double", "allow_null": true},
            {"name": "note", "data_type": "string", "allow_null": true}
        ])
    };
    let batch = RecordBatch::try_new(
        rapid_actors::ingest::arrow_schema(&schema(columns(false))),
        vec![
            Arc::new(StringArray::from_iter_values(
                (0..ROWS).map(|i| format!("r{}", i % 8)),
            )) as ArrayRef,
            Arc::new(Int64Array::from_iter_values(0..ROWS as i64)),
            Arc::new(Float64Array::from_iter_values(
                (0..ROWS).map(|i| i as f64 / 7.0),
            )),
            Arc::new(StringArray::from_iter_values(
                (0..ROWS).map(|i| format!("note {i}")),
            )),
        ],
    )
    .unwrap();
    group.throughput(Throughput::Elements(ROWS as u64));
    for (label, partitioned) in [("unpartitioned", false), ("8_partitions", true)] {
        let schema = schema(columns(partitioned));
        group.bench_function(label, |b| {
            b.iter(|| {
                let dir = tempfile::tempdir().unwrap();
                stage_batches(&schema, std::slice::from_ref(&batch), dir.path()).unwrap()
            })
        });
    }
    group.finish();
}

fn filter_parser(c: &mut Criterion) {
    let columns: Vec<String> = ["region", "year", "price", "destination", "paid"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let cases = [
        ("simple", json!({"filter": "year >= 2018"})),
        (
            "sdk_style",
            json!({
            "select_columns": ["region", "avg(price) AS mean", "count(*) AS n"],
            "filter": "year >= 2018 AND region IN ('north', 'south') AND destination LIKE 'B%' AND price IS NOT NULL",
            "group_by_columns": ["region"], "aggregation_conditions": "count(*) > 1",
            "order_by_columns": [{"column": "mean", "direction": "DESC"}], "limit": 10}),
        ),
        (
            "json_group",
            json!({"filter": {"logic_operator": "AND", "conditions": [
            {"column": "region", "operator": "=", "value": "north"},
            {"column": "year", "operator": "IN", "value": [2017, 2018, 2019]}],
            "groups": [{"logic_operator": "OR", "conditions": [
                {"column": "price", "operator": ">", "value": 20},
                {"column": "destination", "operator": "LIKE", "value": "L%"}]}]}}),
        ),
    ];
    let mut group = c.benchmark_group("filter_parser");
    for (label, body) in cases {
        let request: QueryRequest = serde_json::from_value(body).unwrap();
        group.bench_function(label, |b| b.iter(|| request.check(&columns).unwrap()));
    }
    group.finish();
}

criterion_group!(benches, csv_validation, parquet_staging, filter_parser);
criterion_main!(benches);
