//! Profiles checked against counts made by hand: exact where the profile is exact (rows, nulls,
//! bounds, value counts), within the sketches' error where it estimates; merging two uploads
//! equals profiling them as one.

use std::sync::Arc;

use arrow::array::{ArrayRef, Date32Array, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema as ArrowSchema};
use serde_json::json;

use super::{view, Profiler, StoredProfile};
use crate::schema::{validate, Schema, SchemaContext, ValidSchema};

fn schema() -> ValidSchema {
    validated(json!([
        {"name": "id", "data_type": "int", "allow_null": false},
        {"name": "region", "data_type": "string", "allow_null": true},
        {"name": "price", "data_type": "double", "allow_null": true},
        {"name": "day", "data_type": "date", "format": "%Y-%m-%d", "allow_null": true}
    ]))
}

/// A dataset of `columns`, validated.
fn validated(columns: serde_json::Value) -> ValidSchema {
    let schema: Schema = serde_json::from_value(json!({
        "metadata": {"domain": "p", "dataset": "sales", "sensitivity": "PUBLIC",
                     "owners": [{"name": "T", "email": "t@example.com"}]},
        "columns": columns
    }))
    .unwrap();
    let layers = vec!["default".to_string()];
    let domains = Default::default();
    let ctx = SchemaContext {
        layers: &layers,
        protected_domains: &domains,
    };
    validate(&schema, &ctx).unwrap()
}

/// Rows `from..to`: ids in order, four regions (every 10th null), price = id / 10, days from
/// 2024-01-01 (19723) on.
fn batch(schema: &ValidSchema, from: i64, to: i64) -> RecordBatch {
    let ids: Vec<i64> = (from..to).collect();
    let regions = ["north", "south", "east", "west"];
    let region: StringArray = ids
        .iter()
        .map(|i| (i % 10 != 0).then(|| regions[(i % 4) as usize]))
        .collect();
    let price: Float64Array = ids.iter().map(|i| Some(*i as f64 / 10.0)).collect();
    let day: Date32Array = ids
        .iter()
        .map(|i| Some(19723 + (*i % 365) as i32))
        .collect();
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(ids.clone())),
        Arc::new(region),
        Arc::new(price),
        Arc::new(day),
    ];
    let fields = [
        ("id", DataType::Int64),
        ("region", DataType::Utf8),
        ("price", DataType::Float64),
        ("day", DataType::Date32),
    ]
    .map(|(name, t)| Field::new(name, t, true));
    assert_eq!(schema.columns().len(), fields.len());
    RecordBatch::try_new(Arc::new(ArrowSchema::new(fields.to_vec())), columns).unwrap()
}

fn profile(schema: &ValidSchema, ranges: &[(i64, i64)]) -> StoredProfile {
    let mut p = Profiler::new(schema);
    for (from, to) in ranges {
        p.observe(&batch(schema, *from, *to));
    }
    p.finish().unwrap()
}

/// Off (an engine opened with `profile_uploads: false`), a profiler sees nothing and keeps no
/// profile, whatever another engine's setting.
#[test]
fn a_profiler_switched_off_keeps_no_profile() {
    let s = schema();
    let (mut off, mut on) = (Profiler::when(false, &s), Profiler::when(true, &s));
    off.observe(&batch(&s, 0, 100));
    on.observe(&batch(&s, 0, 100));
    assert!(off.finish().is_none());
    assert_eq!(on.finish().map(|p| p.rows), Some(100));
}

#[test]
fn counts_bounds_and_estimates_match_the_rows() {
    let s = schema();
    let one = profile(&s, &[(0, 4000), (4000, 10000)]);
    let stored = StoredProfile::from_json(&one.to_json()).unwrap();
    assert_eq!(stored, one, "kept as JSON and read back whole");
    let v = view::view(1, &[one]);
    assert_eq!((v.rows, v.uploads), (10000, 1));
    let id = &v.columns[0];
    assert_eq!(
        (id.min.clone(), id.max.clone()),
        (Some(json!(0)), Some(json!(9999)))
    );
    assert_eq!(id.nulls, 0);
    let error = (id.distinct_estimate as f64 - 10000.0).abs() / 10000.0;
    assert!(error < 0.05, "distinct {} for 10000", id.distinct_estimate);
    assert!(id.top_values.is_none(), "10,000 values are not few");
    let hist = id.histogram.as_ref().unwrap();
    assert_eq!(hist.len(), 10);
    let total: u64 = hist.iter().map(|b| b.count).sum();
    assert!((total as i64 - 10000).abs() <= 10, "{total}");
    assert!(
        hist.iter().all(|b| (b.count as i64 - 1000).abs() < 100),
        "{hist:?}"
    );

    let region = &v.columns[1];
    assert_eq!(region.nulls, 1000);
    assert!((region.null_share - 0.1).abs() < 1e-9);
    let top = region.top_values.as_ref().unwrap();
    assert_eq!(top.len(), 4);
    let counted: u64 = top.iter().map(|t| t.count).sum();
    assert_eq!(
        counted, 9000,
        "the value counts add up to the non-null rows"
    );
    assert_eq!(
        (region.min.clone(), region.max.clone()),
        (Some(json!("east")), Some(json!("west")))
    );
    assert_eq!(region.distinct_estimate, 4);

    let day = &v.columns[3];
    assert_eq!(day.min, Some(json!("2024-01-01")));
    assert_eq!(day.max, Some(json!("2024-12-30")));
}

#[test]
fn merged_uploads_equal_one_upload_of_the_same_rows() {
    let s = schema();
    let whole = view::view(1, &[profile(&s, &[(0, 6000)])]);
    let parts = view::view(
        1,
        &[profile(&s, &[(0, 2500)]), profile(&s, &[(2500, 6000)])],
    );
    assert_eq!(parts.rows, whole.rows);
    for (a, b) in parts.columns.iter().zip(&whole.columns) {
        assert_eq!(
            (a.nulls, &a.min, &a.max),
            (b.nulls, &b.min, &b.max),
            "{}",
            a.name
        );
        assert_eq!(a.top_values, b.top_values, "{}", a.name);
        let gap = (a.distinct_estimate as f64 - b.distinct_estimate as f64).abs();
        assert!(
            gap <= b.distinct_estimate as f64 * 0.03,
            "{}: {gap}",
            a.name
        );
    }
}

#[test]
fn changes_between_the_last_two_uploads_are_flagged() {
    let s = schema();
    let before = profile(&s, &[(0, 1000)]);
    // The next rows: ids and prices move on a little, nothing else changes.
    let next = profile(&s, &[(1000, 1100)]);
    assert_eq!(view::view(1, &[before.clone(), next]).changes, vec![]);
    // Ids far past the last ones, a new region, and far more nulls in it.
    let mut last = profile(&s, &[(5000, 5100)]);
    let region = &mut last.columns[1];
    region.nulls = 80;
    region
        .frequent
        .as_mut()
        .unwrap()
        .push((json!("Atlantis"), 1));
    let moved = view::view(1, &[before, last]);
    let kinds: Vec<_> = moved
        .changes
        .iter()
        .map(|c| (c.column.as_str(), c.kind))
        .collect();
    assert!(kinds.contains(&("region", "null_share")), "{kinds:?}");
    assert!(kinds.contains(&("region", "new_values")), "{kinds:?}");
    assert!(kinds.contains(&("id", "range")), "{kinds:?}");
    assert!(
        !kinds.iter().any(|(c, _)| *c == "day"),
        "days stay in their range: {kinds:?}"
    );
    let message = &moved
        .changes
        .iter()
        .find(|c| c.kind == "new_values")
        .unwrap()
        .message;
    assert!(message.contains("\"Atlantis\""), "{message}");
}

#[test]
fn batches_profiled_apart_and_merged_equal_one_profiler() {
    let s = schema();
    let whole = profile(&s, &[(0, 3000), (3000, 7000)]);
    let mut merged = Profiler::new(&s);
    for (from, to) in [(0, 20), (20, 3000), (3000, 7000)] {
        let mut part = Profiler::new(&s);
        part.observe(&batch(&s, from, to));
        merged.merge(part);
    }
    let (a, b) = (
        view::view(1, &[merged.finish().unwrap()]),
        view::view(1, &[whole]),
    );
    assert_eq!(a.rows, b.rows);
    for (x, y) in a.columns.iter().zip(&b.columns) {
        assert_eq!(
            (x.nulls, &x.min, &x.max, &x.top_values),
            (y.nulls, &y.min, &y.max, &y.top_values)
        );
        let gap = (x.distinct_estimate as f64 - y.distinct_estimate as f64).abs();
        assert!(
            gap <= y.distinct_estimate as f64 * 0.02,
            "{}: {gap}",
            x.name
        );
        let total = |v: &super::ColumnView| {
            v.histogram
                .as_ref()
                .map(|h| h.iter().map(|b| b.count).sum::<u64>())
        };
        assert_eq!(total(x), total(y), "{}", x.name);
    }
}

/// One batch of a text and a boolean column.
type TextBatch = (Vec<Option<String>>, Vec<Option<bool>>);

/// A profiler of each batch.
fn text_profilers(batches: &[TextBatch]) -> Vec<Profiler> {
    use arrow::array::BooleanArray;
    let s = validated(json!([
        {"name": "name", "data_type": "string", "allow_null": true},
        {"name": "flag", "data_type": "boolean", "allow_null": true}
    ]));
    let fields = [("name", DataType::Utf8), ("flag", DataType::Boolean)]
        .map(|(n, t)| Field::new(n, t, true));
    let arrow_schema = Arc::new(ArrowSchema::new(fields.to_vec()));
    batches
        .iter()
        .map(|(texts, bools)| {
            let columns: Vec<ArrayRef> = vec![
                Arc::new(StringArray::from(texts.clone())),
                Arc::new(BooleanArray::from(bools.clone())),
            ];
            let mut p = Profiler::new(&s);
            p.observe(&RecordBatch::try_new(arrow_schema.clone(), columns).unwrap());
            p
        })
        .collect()
}

/// Text bounds come from the counts while a column has few values and from each batch after:
/// either way, and across merged uploads, they are the values' own smallest and largest.
#[test]
fn text_bounds_are_exact_whether_counted_or_not() {
    let few: Vec<Option<String>> = ["m", "b", "zz", "b"].map(|v| Some(v.into())).to_vec();
    // 60 values: past the counted ones within the batch, with the extremes among the first.
    let many: Vec<Option<String>> = (0..60)
        .map(|i| Some(format!("k{:02}", (i * 7) % 60)))
        .chain([None, Some("a".into()), Some("zzz".into())])
        .collect();
    let flags = |n: usize| {
        (0..n)
            .map(|i| [Some(true), None, Some(false)][i % 3])
            .collect()
    };
    let batches = [(few, flags(4)), (many, flags(63))];
    let finish = |p: Profiler| p.finish().unwrap();
    let uploads: Vec<_> = text_profilers(&batches).into_iter().map(finish).collect();
    let v = view::view(1, &uploads);
    let (name, flag) = (&v.columns[0], &v.columns[1]);
    assert_eq!(
        (&name.min, &name.max),
        (&Some(json!("a")), &Some(json!("zzz")))
    );
    assert_eq!(name.nulls, 1);
    let one = view::view(1, &uploads[..1]);
    assert_eq!(one.columns[0].min, Some(json!("b")));
    assert_eq!(one.columns[0].max, Some(json!("zz")));
    let top = one.columns[0].top_values.as_ref().unwrap();
    assert_eq!((top[0].value.clone(), top[0].count), (json!("b"), 2));
    // Booleans by bit counts: 67 rows, every third null.
    assert_eq!(flag.nulls, 22);
    let counts = flag.top_values.as_ref().unwrap();
    let total: u64 = counts.iter().map(|c| c.count).sum();
    assert_eq!(total, 45, "{counts:?}");
    assert_eq!(
        (&flag.min, &flag.max),
        (&Some(json!(false)), &Some(json!(true)))
    );
    assert_eq!(flag.distinct_estimate, 2);
    // Merged as parts of one upload, a counted side's values give their bounds too.
    for swap in [false, true] {
        let mut parts = text_profilers(&batches);
        let (counted, too_many) = (parts.remove(0), parts.remove(0));
        let (mut first, second) = if swap {
            (too_many, counted)
        } else {
            (counted, too_many)
        };
        first.merge(second);
        let merged = view::view(1, &[finish(first)]);
        let name = &merged.columns[0];
        assert_eq!(
            (&name.min, &name.max),
            (&Some(json!("a")), &Some(json!("zzz")))
        );
        assert!(name.top_values.is_none(), "63 values are not few");
    }
}

/// Profiles kept before `distinct.rs` hold DataSketches' sketch (`distinct`, no `hll`): still
/// read, alone and beside later ones (their counts added, capped at the column's values).
#[test]
fn profiles_kept_with_datasketches_sketches_still_count() {
    use base64::Engine as _;
    use datasketches::hll::{HllSketch, HllType};
    let s = schema();
    let mut older = profile(&s, &[(0, 5000)]);
    let id = &mut older.columns[0];
    let mut sketch = HllSketch::new(12, HllType::Hll8).unwrap();
    (0..5000i64).for_each(|v| sketch.update(v)); // as that release fed ints
    id.distinct = super::column::B64.encode(sketch.serialize());
    id.hll = String::new();
    let newer = profile(&s, &[(5000, 10000)]);
    let estimate = |uploads: &[StoredProfile]| view::view(1, uploads).columns[0].distinct_estimate;
    let near = |got: u64, want: f64| (got as f64 - want).abs() <= want * 0.05;
    assert!(near(estimate(std::slice::from_ref(&older)), 5000.0));
    let both = estimate(&[older.clone(), newer]);
    assert!(near(both, 10000.0), "{both}");
    // Counted twice, the same rows are capped at the rows there are.
    assert!(estimate(&[older.clone(), older]) <= 10000);
}
