//! The cost of column profiles per row (issue 37): `Profiler::observe` over the peers bench's
//! ten columns (benches/peers/peers.py: text of 8, 4 and a million values, ids, doubles of a
//! million and of 100,000 values, counts 0 to 100, booleans with nulls, two date columns),
//! 1M rows in 64 Ki-row batches as the CSV ingest hands them on, then `finish`. Run with
//! `cargo bench -p rapid-rows --bench profile`; each column type also alone, to see where the
//! time goes.

use std::sync::Arc;

use arrow::array::{
    ArrayRef, BooleanArray, Date32Array, Float64Array, Int64Array, RecordBatch, StringArray,
};
use arrow::datatypes::{DataType, Field, Schema as ArrowSchema};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use serde_json::json;

use rapid_rows::profile::Profiler;
use rapid_rows::schema::{validate, Schema, SchemaContext, ValidColumn};

const ROWS: usize = 1_000_000;
const BATCH: usize = 64 * 1024;
const REGIONS: [&str; 8] = [
    "north", "south", "east", "west", "centre", "islands", "coast", "hills",
];
const CATEGORIES: [&str; 4] = ["food", "tools", "books", "toys"];

/// The peers schema's columns, in its order, with their Arrow types.
fn columns() -> Vec<(&'static str, &'static str, DataType)> {
    vec![
        ("region", "string", DataType::Utf8),
        ("id", "int", DataType::Int64),
        ("day", "date", DataType::Date32),
        ("amount", "double", DataType::Float64),
        ("qty", "int", DataType::Int64),
        ("paid", "boolean", DataType::Boolean),
        ("note", "string", DataType::Utf8),
        ("category", "string", DataType::Utf8),
        ("score", "double", DataType::Float64),
        ("created", "date", DataType::Date32),
    ]
}

fn valid_columns(pick: &[usize]) -> Vec<ValidColumn> {
    let all = columns();
    let cols: Vec<_> = pick
        .iter()
        .map(|i| {
            let (name, t, _) = &all[*i];
            let mut c = json!({"name": name, "data_type": t, "allow_null": true});
            if *t == "date" {
                c["format"] = json!("%Y-%m-%d");
            }
            c
        })
        .collect();
    let schema: Schema = serde_json::from_value(json!({
        "metadata": {"domain": "b", "dataset": "profile", "sensitivity": "PUBLIC",
                     "owners": [{"name": "T", "email": "t@example.com"}]},
        "columns": cols,
    }))
    .unwrap();
    let layers = vec!["default".to_string()];
    let domains = Default::default();
    let ctx = SchemaContext {
        layers: &layers,
        protected_domains: &domains,
    };
    validate(&schema, &ctx).unwrap().columns().to_vec()
}

/// A deterministic stream of numbers (an LCG's high bits): no `rand` needed.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

/// Rows `from..to` of every column.
fn all_columns(rng: &mut Lcg, from: usize, to: usize) -> Vec<ArrayRef> {
    let ids: Vec<i64> = (from as i64..to as i64).collect();
    let mut text = |values: &[&str]| -> ArrayRef {
        let a: StringArray = ids
            .iter()
            .map(|_| Some(values[rng.below(values.len() as u64) as usize]))
            .collect();
        Arc::new(a)
    };
    let (region, category) = (text(&REGIONS), text(&CATEGORIES));
    let mut day = || -> ArrayRef {
        let a: Date32Array = ids
            .iter()
            .map(|_| Some(14_610 + rng.below(5000) as i32))
            .collect();
        Arc::new(a)
    };
    let (day, created) = (day(), day());
    let mut double = |n: u64, by: f64| -> ArrayRef {
        let a: Float64Array = ids.iter().map(|_| Some(rng.below(n) as f64 / by)).collect();
        Arc::new(a)
    };
    let (amount, score) = (double(1_000_000, 100.0), double(100_000, 7.0));
    let qty: Int64Array = ids.iter().map(|_| Some(rng.below(101) as i64)).collect();
    let paid: BooleanArray = ids
        .iter()
        .map(|_| [None, Some(true), Some(false)][rng.below(3) as usize])
        .collect();
    let note: StringArray = ids
        .iter()
        .map(|i| Some(format!("item {i}, batch {}", i / 1000)))
        .collect();
    vec![
        region,
        Arc::new(Int64Array::from(ids.clone())),
        day,
        amount,
        Arc::new(qty),
        Arc::new(paid),
        Arc::new(note),
        category,
        score,
        created,
    ]
}

/// The 1M rows' batches, holding only the columns `pick`.
fn batches(pick: &[usize]) -> Vec<RecordBatch> {
    let all = columns();
    let fields: Vec<Field> = pick
        .iter()
        .map(|i| Field::new(all[*i].0, all[*i].2.clone(), true))
        .collect();
    let schema = Arc::new(ArrowSchema::new(fields));
    let mut rng = Lcg(7);
    (0..ROWS)
        .step_by(BATCH)
        .map(|from| {
            let arrays = all_columns(&mut rng, from, (from + BATCH).min(ROWS));
            let kept = pick.iter().map(|i| arrays[*i].clone()).collect();
            RecordBatch::try_new(schema.clone(), kept).unwrap()
        })
        .collect()
}

fn profile(c: &mut Criterion) {
    let cases: [(&str, Vec<usize>); 6] = [
        ("all ten columns", (0..10).collect()),
        ("text of few values (region, category)", vec![0, 7]),
        ("text of 1M values (note)", vec![6]),
        ("ints (id, qty)", vec![1, 4]),
        ("doubles (amount, score)", vec![3, 8]),
        ("dates and booleans (day, created, paid)", vec![2, 9, 5]),
    ];
    let mut group = c.benchmark_group("profile 1M rows");
    group.sample_size(10);
    group.throughput(Throughput::Elements(ROWS as u64));
    for (name, pick) in cases {
        let (cols, data) = (valid_columns(&pick), batches(&pick));
        group.bench_function(name, |b| {
            b.iter(|| {
                let mut p = Profiler::for_columns(&cols);
                data.iter().for_each(|batch| p.observe(batch));
                p.finish()
            })
        });
    }
    group.finish();
}

criterion_group!(benches, profile);
criterion_main!(benches);
