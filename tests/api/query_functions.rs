//! The functions docs/guide.md lists (including those the SQL parser gives node kinds of their own),
//! rAPId's JSON conditions whose `column` is a function call, and the names of unaliased result
//! columns in every answer format. Fixture: [`crate::query_semantics`].

use std::io::Cursor;

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::query_semantics::{query, rows, scalar, server_with_facts, QUERY};

#[test]
fn trim_substr_substring_floor_and_ceil_work_and_trim_removes_spaces_only() {
    let (s, t) = server_with_facts();
    let answer = rows(
        &s,
        &t,
        json!({"select_columns": ["trim(cat) AS b", "ltrim(cat) AS l", "rtrim(cat) AS r",
                                  "substr(cat, 2, 3) AS s1", "substring(cat, 2) AS s2",
                                  "SUBSTRING(cat FROM 1 FOR 2) AS s3",
                                  "floor(price) AS f", "ceil(price) AS c"],
               "filter": "qty = 1"}),
    );
    assert_eq!(
        answer,
        [
            json!({"b": "a b", "l": "a b ", "r": " a b", "s1": "a b", "s2": "a b ", "s3": " a",
                "f": 1.0, "c": 2.0})
        ]
    );
    // A tab is not a space: trim leaves it.
    assert_eq!(
        scalar(
            &s,
            &t,
            json!({"select_columns": ["trim(cat) AS b"], "filter": "qty = 2"})
        ),
        "\tx\t"
    );
    // In filters too, in both forms.
    let count = |filter: Value| {
        scalar(
            &s,
            &t,
            json!({"select_columns": ["count(*) AS n"], "filter": filter}),
        )
    };
    assert_eq!(
        count(json!("trim(cat) = 'lead' OR rtrim(cat) = 'trail'")),
        2
    );
    assert_eq!(count(json!("floor(price) = -3 AND ceil(price) = -2")), 1);
    assert_eq!(
        count(json!({"logic_operator": "OR", "conditions": [
            {"column": "trim(cat)", "operator": "=", "value": "lead"},
            {"column": "substr(cat, 1, 2)", "operator": "=", "value": "He"}]})),
        2
    );
    let (status, answer) = query(&s, &t, json!({"select_columns": ["trim(cat, 'x') AS b"]}));
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
}

#[test]
fn json_conditions_take_calls_as_rapid_does() {
    let (s, t) = server_with_facts();
    let day_groups = |having: Value| -> Vec<Value> {
        rows(
            &s,
            &t,
            json!({"select_columns": ["day", "count(*) AS n"], "group_by_columns": ["day"],
                   "aggregation_conditions": having,
                   "order_by_columns": [{"column": "day"}]}),
        )
    };
    assert_eq!(
        day_groups(json!({"conditions": [{"column": "count(*)", "operator": ">", "value": 1}]})),
        [
            json!({"day": "2020-02-29", "n": 2}),
            json!({"day": null, "n": 2})
        ]
    );
    assert_eq!(
        day_groups(json!({"logic_operator": "AND", "conditions": [
            {"column": "avg(qty)", "operator": ">=", "value": 2},
            {"column": "day", "operator": "IS NOT NULL"}]})),
        [
            json!({"day": "1970-01-01", "n": 1}),
            json!({"day": "2021-06-30", "n": 1})
        ]
    );
    let lowered = rows(
        &s,
        &t,
        json!({"select_columns": ["cat"], "filter": {"conditions": [
            {"column": "lower(cat)", "operator": "IN", "value": ["mixed", "hello"]}]},
            "order_by_columns": [{"column": "cat"}]}),
    );
    assert_eq!(lowered, [json!({"cat": "Hello"}), json!({"cat": "MiXeD"})]);
    // An aggregate is not a row filter; a call cannot smuggle in more than one operand.
    for column in ["count(*)", "lower(cat)) OR (1 = 1", "lower(secret)"] {
        let (status, answer) = query(
            &s,
            &t,
            json!({"filter": {"conditions": [{"column": column, "operator": "=", "value": 1}]}}),
        );
        assert_eq!(status, StatusCode::BAD_REQUEST, "{column}: {answer}");
    }
}

const NAMED: [&str; 5] = [
    "qty + 1",
    "upper(cat)",
    "coalesce(price, -4.62) / 3",
    "trim(cat)",
    "floor(price)",
];

fn naming_body() -> Value {
    json!({"select_columns": ["qty+1", "UPPER(cat)", "coalesce(price, -4.62) / 3", "TRIM(cat)",
                              "FLOOR(price)"],
           "filter": "qty = 1"})
}

#[test]
fn unaliased_expressions_are_named_as_written_in_json_and_csv() {
    let (s, t) = server_with_facts();
    let answer = rows(&s, &t, naming_body());
    let keys: Vec<&String> = answer[0].as_object().unwrap().keys().collect();
    assert_eq!(keys, NAMED);
    assert_eq!(answer[0]["qty + 1"], 2);
    let aggregates = rows(
        &s,
        &t,
        json!({"select_columns": ["count(*)", "sum(qty)", "avg(price)", "count(DISTINCT day)"]}),
    );
    let keys: Vec<&String> = aggregates[0].as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        ["count(*)", "sum(qty)", "avg(price)", "count(DISTINCT day)"]
    );
    // Ordering by the expression as written still finds it.
    let ordered = rows(
        &s,
        &t,
        json!({"select_columns": ["day", "count(*)"], "group_by_columns": ["day"],
               "order_by_columns": [{"column": "count(*)", "direction": "DESC"}, {"column": "day"}]}),
    );
    assert_eq!(ordered[0], json!({"day": "2020-02-29", "count(*)": 2}));

    let csv = s
        .request("POST", QUERY)
        .bearer_auth(&t)
        .header("Accept", "text/csv")
        .json(&naming_body())
        .send()
        .unwrap()
        .text()
        .unwrap();
    let header = csv.lines().next().unwrap();
    assert_eq!(
        header,
        ",qty + 1,upper(cat),\"coalesce(price, -4.62) / 3\",trim(cat),floor(price)"
    );
}

fn names_of(schema: &arrow::datatypes::Schema) -> Vec<String> {
    schema.fields().iter().map(|f| f.name().clone()).collect()
}

#[test]
fn unaliased_expressions_are_named_as_written_in_arrow_and_parquet() {
    let (s, t) = server_with_facts();
    let fetch = |accept: &str| {
        let res = s
            .request("POST", QUERY)
            .bearer_auth(&t)
            .header("Accept", accept)
            .json(&naming_body())
            .send()
            .unwrap();
        assert_eq!(res.status(), StatusCode::OK);
        res.bytes().unwrap()
    };
    let arrow_bytes = fetch("application/vnd.apache.arrow.stream");
    let reader =
        arrow_ipc::reader::StreamReader::try_new(Cursor::new(arrow_bytes.to_vec()), None).unwrap();
    assert_eq!(names_of(&reader.schema()), NAMED);
    let parquet_bytes = fetch("application/vnd.apache.parquet");
    let builder =
        parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(parquet_bytes)
            .unwrap();
    assert_eq!(names_of(builder.schema()), NAMED);
}
