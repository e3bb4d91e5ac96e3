use serde_json::json;

use super::*;

fn columns(v: serde_json::Value) -> Vec<Column> {
    serde_json::from_value(v).unwrap()
}

/// The problems found in `v` (a JSON array of columns).
fn problems(v: serde_json::Value) -> Vec<String> {
    let mut problems = Vec::new();
    check_columns(&columns(v), &mut problems);
    problems
}

fn col(name: &str, data_type: &str) -> serde_json::Value {
    json!({"name": name, "data_type": data_type, "allow_null": true})
}

fn part(name: &str, index: i64) -> serde_json::Value {
    json!({"name": name, "data_type": "string", "allow_null": false, "partition_index": index})
}

#[test]
fn a_schema_without_columns_is_rejected() {
    assert_eq!(
        problems(json!([])),
        ["You need to define at least one column"]
    );
}

#[test]
fn valid_columns_give_typed_columns() {
    let mut found = Vec::new();
    let out = check_columns(
        &columns(json!([
            col("n", "integer"),
            {"name": "d", "data_type": "date", "allow_null": true, "format": "%d/%m/%Y"},
            part("p", 0),
        ])),
        &mut found,
    );
    assert!(found.is_empty(), "{found:?}");
    let types: Vec<DataType> = out.columns.iter().map(|c| c.data_type).collect();
    assert_eq!(types, [DataType::Int, DataType::Date, DataType::String]);
    assert_eq!(out.columns[1].format, Some(DateFormat::DmySlash));
    assert_eq!(out.columns[2].partition_index, Some(0));
    assert_eq!(out.partitions, [2]);
}

#[test]
fn an_empty_column_name_is_rejected() {
    assert_eq!(
        problems(json!([col("a", "int"), col("", "int")])),
        ["Column number 2 has an empty name; every column needs a name"]
    );
}

#[test]
fn column_names_breaking_the_style_rule_are_rejected() {
    for bad in ["Bad Name", "2020", "___", "a-b", "Year"] {
        assert_eq!(
            problems(json!([col(bad, "int")])),
            [format!(
                "Column name [{bad}] must be lower case letters, digits and underscores, \
                 not only digits or underscores"
            )]
        );
    }
}

#[test]
fn column_names_mixing_digits_and_letters_are_accepted() {
    assert!(problems(json!([col("2020_total", "int"), col("col_", "int")])).is_empty());
}

#[test]
fn a_too_long_column_name_is_rejected() {
    let long = "a".repeat(MAX_COLUMN_NAME_LEN + 1);
    assert_eq!(
        problems(json!([col(&long, "int")])),
        [format!(
            "Column name [{long}] is longer than 128 characters"
        )]
    );
}

#[test]
fn duplicated_column_names_are_rejected_once() {
    assert_eq!(
        problems(json!([
            col("a", "int"),
            col("a", "string"),
            col("a", "int")
        ])),
        ["Column name [a] is used more than once; column names must be unique"]
    );
}

#[test]
fn an_unaccepted_data_type_is_rejected() {
    assert_eq!(
        problems(json!([col("x", "array")])),
        ["Column [x] has an unaccepted data type [array]. Accepted: int, double, string, date, boolean"]
    );
}

#[test]
fn a_date_column_without_format_is_rejected() {
    for format in [json!(null), json!("")] {
        let p = problems(
            json!([{"name": "d", "data_type": "date", "allow_null": true, "format": format}]),
        );
        assert_eq!(
            p,
            [format!(
                "Column [d] has data type date and needs a format. Accepted formats: {}",
                DateFormat::accepted_list()
            )]
        );
    }
}

#[test]
fn a_date_column_with_an_unlisted_format_is_rejected() {
    let p = problems(
        json!([{"name": "d", "data_type": "date", "allow_null": true, "format": "%Y%m%d"}]),
    );
    assert_eq!(
        p,
        ["Column [d] has an invalid date format [%Y%m%d]. Accepted formats: %Y/%m/%d, %d/%m/%Y, \
          %m/%d/%Y, %Y-%m-%d, %d-%m-%Y, %m-%d-%Y, %Y/%m, %m/%Y, %Y-%m, %m-%Y"]
    );
}

#[test]
fn a_format_on_a_non_date_column_is_rejected() {
    let p = problems(
        json!([{"name": "s", "data_type": "string", "allow_null": true, "format": "%Y-%m-%d"}]),
    );
    assert_eq!(
        p,
        ["Column [s] has data type string and cannot have a format [%Y-%m-%d]; only date columns take a format"]
    );
    let empty = json!([{"name": "s", "data_type": "int", "allow_null": true, "format": ""}]);
    assert!(problems(empty).is_empty());
}

#[test]
fn partition_columns_come_in_index_order() {
    let mut found = Vec::new();
    let out = check_columns(
        &columns(json!([part("b", 1), col("x", "int"), part("a", 0)])),
        &mut found,
    );
    assert!(found.is_empty(), "{found:?}");
    assert_eq!(out.partitions, [2, 0]);
}

#[test]
fn partition_indexes_with_a_gap_are_rejected() {
    assert_eq!(
        problems(json!([part("a", 0), part("b", 2), col("x", "int")])),
        ["Column [b] has partition index [2], but with 2 partition columns the indexes must run \
          from 0 to 1 without gaps"]
    );
}

#[test]
fn partition_indexes_not_starting_at_zero_are_rejected() {
    assert_eq!(
        problems(json!([part("a", 1), col("x", "int")])),
        [
            "Column [a] has partition index [1], but with 1 partition column the indexes must run \
          from 0 to 0 without gaps"
        ]
    );
}

#[test]
fn duplicated_partition_indexes_are_rejected() {
    assert_eq!(
        problems(json!([part("a", 0), part("b", 0), col("x", "int")])),
        ["Partition index [0] is used by more than one column: [a], [b]"]
    );
}

#[test]
fn a_negative_partition_index_is_rejected() {
    assert_eq!(
        problems(json!([part("a", -1), col("x", "int")])),
        ["Column [a] has a negative partition index [-1]; partition indexes start at 0"]
    );
}

#[test]
fn a_partition_column_allowing_nulls_is_rejected() {
    let p = problems(json!([
        {"name": "a", "data_type": "int", "allow_null": true, "partition_index": 0},
        col("x", "int"),
    ]));
    assert_eq!(p, ["Partition column [a] cannot allow null values"]);
}

#[test]
fn a_schema_made_only_of_partitions_is_rejected() {
    assert_eq!(
        problems(json!([part("a", 0), part("b", 1)])),
        ["At least one column must not be a partition"]
    );
}

#[test]
fn every_problem_of_every_column_is_reported() {
    let p = problems(json!([
        col("Bad Name", "array"),
        {"name": "d", "data_type": "date", "allow_null": true, "partition_index": 3,
         "checks": {"c": {"check_type": "nope", "parameters": {}}}},
    ]));
    assert_eq!(p.len(), 6, "{p:#?}");
}

#[test]
fn unique_is_allowed_whatever_the_update_behaviour() {
    let p =
        problems(json!([{"name": "id", "data_type": "int", "allow_null": false, "unique": true}]));
    assert!(p.is_empty(), "{p:?}");
}

#[test]
fn checks_are_typed_and_named() {
    let mut found = Vec::new();
    let out = check_columns(
        &columns(
            json!([{"name": "year", "data_type": "int", "allow_null": false, "checks": {
                "range": {"check_type": "in_range", "parameters": {"min_value": 2000, "max_value": 2030}},
            }}]),
        ),
        &mut found,
    );
    assert!(found.is_empty(), "{found:?}");
    let check = &out.columns[0].checks[0];
    assert_eq!(
        (check.name.as_str(), check.check.check_type()),
        ("range", "in_range")
    );
}
