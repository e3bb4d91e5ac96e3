//! Query answers as docs/API.md's "Query semantics" fixes them: partition values that need
//! encoding (and the empty string) round-trip and match, three-valued logic in both filter forms,
//! int64 overflow refused rather than wrapped, NULLs last, integer division and statistics.
//! The fixture is uploaded as Parquet, the only way to store `''` in a (non-null) partition column.

use std::process::Command;
use std::sync::Arc;

use arrow::array::{ArrayRef, Date32Array, Float64Array, Int64Array, RecordBatch, StringArray};
use parquet::arrow::ArrowWriter;
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::support::{schema_json, TestServer};

pub(crate) const QUERY: &str = "/api/datasets/default/sem/facts/query";

/// The partition values of the fixture, one row each, in row order.
pub(crate) const REGIONS: [&str; 7] = ["São Paulo", "a/b", "x y", "100%", "O'Brien", "", "north"];

fn days(d: &str) -> i32 {
    let date = chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d").unwrap();
    (date - chrono::NaiveDate::from_ymd_opt(1970, 1, 1).unwrap()).num_days() as i32
}

fn fixture_parquet() -> Vec<u8> {
    let day = |d: Option<&str>| d.map(days);
    let columns: Vec<(&str, ArrayRef)> = vec![
        ("region", Arc::new(StringArray::from(REGIONS.to_vec()))),
        (
            "qty",
            Arc::new(Int64Array::from(vec![
                Some(1),
                Some(2),
                Some(3),
                Some(10),
                Some(-7),
                None,
                None,
            ])),
        ),
        (
            "big",
            Arc::new(Int64Array::from(vec![
                Some(i64::MAX),
                Some(1),
                None,
                Some(-5),
                None,
                None,
                Some(i64::MIN),
            ])),
        ),
        (
            "price",
            Arc::new(Float64Array::from(vec![
                Some(1.5),
                Some(-2.5),
                None,
                Some(0.125),
                Some(4.0),
                Some(2.0),
                None,
            ])),
        ),
        (
            "cat",
            Arc::new(StringArray::from(vec![
                Some(" a b "),
                Some("\tx\t"),
                Some("Hello"),
                None,
                Some("  lead"),
                Some("trail  "),
                Some("MiXeD"),
            ])),
        ),
        (
            "day",
            Arc::new(Date32Array::from(vec![
                day(Some("2020-02-29")),
                day(Some("1970-01-01")),
                day(None),
                day(Some("2021-06-30")),
                day(None),
                day(Some("1999-12-31")),
                day(Some("2020-02-29")),
            ])),
        ),
    ];
    let batch = RecordBatch::try_from_iter(columns).unwrap();
    let mut out = Vec::new();
    let mut w = ArrowWriter::try_new(&mut out, batch.schema(), None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    out
}

/// A server holding the fixture in `default/sem/facts`, partitioned by `region`.
pub(crate) fn server_with_facts() -> (TestServer, String) {
    let s = TestServer::start();
    s.create_schema(&schema_json(
        "sem",
        "facts",
        "PUBLIC",
        "APPEND",
        json!([
            {"name": "region", "data_type": "string", "allow_null": false, "partition_index": 0},
            {"name": "qty", "data_type": "int", "allow_null": true},
            {"name": "big", "data_type": "int", "allow_null": true},
            {"name": "price", "data_type": "double", "allow_null": true},
            {"name": "cat", "data_type": "string", "allow_null": true},
            {"name": "day", "data_type": "date", "format": "%Y-%m-%d", "allow_null": true}
        ]),
    ));
    let t = s.admin_token();
    let (_, job) = s.upload_and_wait(
        &t,
        "/api/datasets/default/sem/facts",
        "facts.parquet",
        fixture_parquet(),
    );
    assert_eq!(job["status"], "SUCCESS", "{job}");
    (s, t)
}

pub(crate) fn query(s: &TestServer, t: &str, body: Value) -> (StatusCode, Value) {
    s.call("POST", QUERY, Some(t), Some(&body))
}

/// The rows of a JSON answer, in index order; panics unless 200.
pub(crate) fn rows(s: &TestServer, t: &str, body: Value) -> Vec<Value> {
    let (status, answer) = query(s, t, body.clone());
    assert_eq!(status, StatusCode::OK, "{body}: {answer}");
    let map = answer.as_object().unwrap();
    (0..map.len())
        .map(|i| map[&i.to_string()].clone())
        .collect()
}

/// The one value of a one-row, one-column answer.
pub(crate) fn scalar(s: &TestServer, t: &str, body: Value) -> Value {
    let all = rows(s, t, body.clone());
    assert_eq!(all.len(), 1, "{body}: {all:?}");
    all[0].as_object().unwrap().values().next().unwrap().clone()
}

fn count(s: &TestServer, t: &str, filter: Value) -> i64 {
    scalar(
        s,
        t,
        json!({"select_columns": ["count(*) AS n"], "filter": filter}),
    )
    .as_i64()
    .unwrap()
}

fn eq(column: &str, value: Value) -> Value {
    json!({"conditions": [{"column": column, "operator": "=", "value": value}]})
}

#[test]
fn partition_values_needing_encoding_and_the_empty_string_round_trip_and_match() {
    let (s, t) = server_with_facts();
    assert_eq!(
        scalar(&s, &t, json!({"select_columns": ["count(*) AS n"]})),
        7
    );
    let stored: Vec<Value> = rows(
        &s,
        &t,
        json!({"select_columns": ["region"], "order_by_columns": [{"column": "region"}]}),
    )
    .into_iter()
    .map(|r| r["region"].clone())
    .collect();
    let mut expected: Vec<&str> = REGIONS.to_vec();
    expected.sort();
    assert_eq!(
        stored,
        expected.iter().map(|r| json!(r)).collect::<Vec<_>>()
    );
    for region in REGIONS {
        let sql = format!("region = '{}'", region.replace('\'', "''"));
        assert_eq!(count(&s, &t, json!(sql)), 1, "{sql}");
        assert_eq!(count(&s, &t, eq("region", json!(region))), 1, "{region}");
    }
    assert_eq!(count(&s, &t, json!("region LIKE '%/%'")), 1);
    // Encoded once on disk: the empty string is the empty segment, `%` is `%25`.
    let version = s.data_dir().join("data/default/sem/facts/1");
    for folder in [
        "region=",
        "region=100%25",
        "region=S%C3%A3o%20Paulo",
        "region=a%2Fb",
    ] {
        assert!(version.join(folder).is_dir(), "{folder} missing");
    }
}

#[test]
fn pyarrow_and_duckdb_read_the_stored_partition_values_back() {
    let (s, _) = server_with_facts();
    let script = r#"
import json, sys, duckdb, pyarrow.dataset as ds
root = sys.argv[1]
arrow = ds.dataset(root, format="parquet", partitioning="hive").to_table().column("region").to_pylist()
duck = [r[0] for r in duckdb.sql(f"SELECT region FROM read_parquet('{root}/**/*.parquet', hive_partitioning=true, hive_types={{'region': 'VARCHAR'}})").fetchall()]
print(json.dumps({"pyarrow": sorted(arrow), "duckdb": sorted(duck)}))
"#;
    let out = Command::new(crate::pyarrow_readback::python())
        .args(["-c", script])
        .arg(s.data_dir().join("data/default/sem/facts/1"))
        .output()
        .expect("run python");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let read: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut expected: Vec<&str> = REGIONS.to_vec();
    expected.sort();
    assert_eq!(read["pyarrow"], json!(expected));
    assert_eq!(read["duckdb"], json!(expected));
}

#[test]
fn a_row_whose_filter_is_null_is_not_returned_in_either_form() {
    let (s, t) = server_with_facts();
    // 5 rows have a day; none is both dates, so NOT (...) is TRUE for them and NULL for the 2 others.
    let not_both = "NOT (day IN ('2020-02-29') AND day IN ('1970-01-01'))";
    assert_eq!(count(&s, &t, json!(not_both)), 5);
    assert_eq!(count(&s, &t, json!(format!("({not_both}) IS NULL"))), 2);
    // 5 rows have a qty; `qty NOT IN (1) OR qty NOT IN (2)` is NULL for the 2 without.
    assert_eq!(count(&s, &t, json!("qty NOT IN (1) OR qty NOT IN (2)")), 5);
    let group = json!({"logic_operator": "OR", "conditions": [
        {"column": "qty", "operator": "NOT IN", "value": [1]},
        {"column": "qty", "operator": "NOT IN", "value": [2]}]});
    assert_eq!(count(&s, &t, group), 5);
    assert_eq!(count(&s, &t, json!("NOT (qty = 1 AND qty = 2)")), 5);
    // The same in aggregation conditions: max(qty) is NULL for the regions without a qty.
    let having = |conditions: Value| {
        rows(
            &s,
            &t,
            json!({"select_columns": ["region"], "group_by_columns": ["region"],
                   "aggregation_conditions": conditions}),
        )
        .len()
    };
    assert_eq!(
        having(json!("NOT (max(qty) IN (1) AND max(qty) IN (2))")),
        5
    );
    assert_eq!(
        having(json!({"logic_operator": "OR", "conditions": [
            {"column": "max(qty)", "operator": "NOT IN", "value": [1]},
            {"column": "max(qty)", "operator": "NOT IN", "value": [2]}]})),
        5
    );
}

#[test]
fn int64_overflow_is_a_400_naming_it_never_a_wrapped_number() {
    let (s, t) = server_with_facts();
    let refused = |body: Value| {
        let (status, answer) = query(&s, &t, body.clone());
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {answer}");
        let text = answer["details"].as_str().unwrap().to_string();
        assert!(text.contains("overflow"), "{body}: {text}");
        text
    };
    let text = refused(json!({"select_columns": ["sum(big)"], "filter": "big > 0"}));
    assert!(text.contains("sum(big)"), "{text}");
    refused(json!({"select_columns": ["sum(big)"], "filter": "big < 2"}));
    refused(json!({"select_columns": ["big + 1"]}));
    let text = refused(
        json!({"select_columns": ["(big + 0) * 2 AS twice"], "filter": "big = 1 OR big > 2"}),
    );
    assert!(text.contains("[(big + 0) * 2]"), "{text}");
    refused(json!({"select_columns": ["-big"]}));
    refused(json!({"select_columns": ["count(*)"], "filter": "big - 1 > 0"}));
    refused(
        json!({"select_columns": ["count(*) AS n"], "filter": "big > 0",
        "aggregation_conditions": {"conditions": [{"column": "sum(big)", "operator": ">", "value": 0}]}}),
    );
    // In range, the answer is exact even when a running total would have left the range.
    assert_eq!(scalar(&s, &t, json!({"select_columns": ["sum(big)"]})), -5);
    assert_eq!(
        scalar(
            &s,
            &t,
            json!({"select_columns": ["sum(big) AS s"], "filter": "big > -10"})
        ),
        json!(i64::MAX - 4)
    );
    assert_eq!(
        scalar(
            &s,
            &t,
            json!({"select_columns": ["big - 1 AS b"], "filter": "big = 1"})
        ),
        0
    );
}

#[test]
fn nulls_sort_last_both_ways_unless_asked() {
    let (s, t) = server_with_facts();
    let order = |direction: &str| -> Vec<Value> {
        rows(
            &s,
            &t,
            json!({"select_columns": ["qty"],
                   "order_by_columns": [{"column": "qty", "direction": direction}]}),
        )
        .into_iter()
        .map(|r| r["qty"].clone())
        .collect()
    };
    let n = Value::Null;
    assert_eq!(
        order("ASC"),
        [
            json!(-7),
            json!(1),
            json!(2),
            json!(3),
            json!(10),
            n.clone(),
            n.clone()
        ]
    );
    assert_eq!(
        order("DESC"),
        [
            json!(10),
            json!(3),
            json!(2),
            json!(1),
            json!(-7),
            n.clone(),
            n.clone()
        ]
    );
    assert_eq!(
        order("desc nulls first")[..3],
        [n.clone(), n.clone(), json!(10)]
    );
    let (status, _) = query(
        &s,
        &t,
        json!({"order_by_columns": [{"column": "qty", "direction": "DESC NULLS SOMEWHERE"}]}),
    );
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[test]
fn integer_division_truncates_and_statistics_are_the_sample_ones() {
    let (s, t) = server_with_facts();
    assert_eq!(
        scalar(
            &s,
            &t,
            json!({"select_columns": ["qty / 2 AS half"], "filter": "qty = -7"})
        ),
        -3
    );
    assert_eq!(
        scalar(
            &s,
            &t,
            json!({"select_columns": ["qty % 2 AS r"], "filter": "qty = -7"})
        ),
        -1
    );
    let stats = rows(
        &s,
        &t,
        json!({"select_columns": ["median(qty) AS m", "var(qty) AS v", "stddev(qty) AS sd"],
               "filter": "qty IN (1, 2, 3, 10)"}),
    );
    assert_eq!(stats[0]["m"], 2.5);
    let v = stats[0]["v"].as_f64().unwrap();
    assert!((v - 50.0 / 3.0).abs() < 1e-9, "{v}");
    let sd = stats[0]["sd"].as_f64().unwrap();
    assert!((sd - (50.0f64 / 3.0).sqrt()).abs() < 1e-9, "{sd}");
}
