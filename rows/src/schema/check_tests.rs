use serde_json::json;

use super::*;

/// Parses `spec` as check `c` of column `col`; the check, or every message.
fn parse(t: DataType, spec: serde_json::Value) -> Result<Check, Vec<String>> {
    let spec: CheckSpec = serde_json::from_value(spec).unwrap();
    let mut problems = Vec::new();
    match parse_check("col", Some(t), "c", &spec, &mut problems) {
        Some(check) if problems.is_empty() => Ok(check),
        _ => Err(problems),
    }
}

fn one_problem(t: DataType, spec: serde_json::Value) -> String {
    let problems = parse(t, spec).unwrap_err();
    assert_eq!(problems.len(), 1, "{problems:?}");
    problems.into_iter().next().unwrap()
}

#[test]
fn in_range_with_numbers_is_accepted() {
    let c = parse(
        DataType::Int,
        json!({"check_type": "in_range", "parameters": {"min_value": 2000, "max_value": 2030.5}}),
    )
    .unwrap();
    assert!(matches!(c, Check::InRange { min, max } if min == 2000.0 && max == 2030.5));
    assert_eq!(c.to_string(), "in_range(2000, 2030.5)");
}

#[test]
fn unknown_check_type_is_rejected() {
    assert_eq!(
        one_problem(
            DataType::Int,
            json!({"check_type": "between", "parameters": {}})
        ),
        "Column [col] check [c] has an unknown check_type [between]. \
         Accepted: in_range, isin, str_length, greater_than, less_than, str_matches"
    );
}

#[test]
fn missing_parameters_are_each_reported() {
    let problems = parse(DataType::Int, json!({"check_type": "in_range"})).unwrap_err();
    assert_eq!(
        problems,
        [
            "Column [col] check [c] (in_range) needs parameter [min_value]",
            "Column [col] check [c] (in_range) needs parameter [max_value]",
        ]
    );
}

#[test]
fn a_non_numeric_bound_is_rejected() {
    assert_eq!(
        one_problem(
            DataType::Double,
            json!({"check_type": "greater_than", "parameters": {"min_value": "5"}})
        ),
        "Column [col] check [c] (greater_than) parameter [min_value] must be a number, not \"5\""
    );
}

#[test]
fn a_range_with_min_above_max_is_rejected() {
    assert_eq!(
        one_problem(
            DataType::Int,
            json!({"check_type": "in_range", "parameters": {"min_value": 10, "max_value": 1}})
        ),
        "Column [col] check [c] (in_range) has min_value [10] greater than max_value [1]"
    );
}

#[test]
fn unknown_parameters_are_rejected() {
    assert_eq!(
        one_problem(
            DataType::Int,
            json!({"check_type": "less_than", "parameters": {"max_value": 3, "max": 3}})
        ),
        "Column [col] check [c] (less_than) has unknown parameters [max]. Accepted: max_value"
    );
}

#[test]
fn str_length_needs_non_negative_integers() {
    let p = one_problem(
        DataType::String,
        json!({"check_type": "str_length", "parameters": {"min_value": -1, "max_value": 5}}),
    );
    assert_eq!(
        p,
        "Column [col] check [c] (str_length) parameter [min_value] must be a non-negative integer, not -1"
    );
    assert!(parse(
        DataType::String,
        json!({"check_type": "str_length", "parameters": {"min_value": 1.5, "max_value": 5}})
    )
    .is_err());
    let ok = parse(
        DataType::String,
        json!({"check_type": "str_length", "parameters": {"min_value": 5, "max_value": 20}}),
    )
    .unwrap();
    assert_eq!(ok.to_string(), "str_length(5, 20)");
}

#[test]
fn isin_takes_a_non_empty_list() {
    for bad in [json!("a"), json!([]), json!({"a": 1})] {
        assert_eq!(
            one_problem(
                DataType::String,
                json!({"check_type": "isin", "parameters": {"allowed_values": bad}})
            ),
            "Column [col] check [c] (isin) parameter [allowed_values] must be a non-empty list"
        );
    }
}

#[test]
fn isin_values_must_have_the_column_type() {
    assert_eq!(
        one_problem(
            DataType::Int,
            json!({"check_type": "isin", "parameters": {"allowed_values": [1, 2.5]}})
        ),
        "Column [col] check [c] (isin) parameter [allowed_values] must hold only int values; 2.5 is not one"
    );
    assert!(parse(
        DataType::String,
        json!({"check_type": "isin", "parameters": {"allowed_values": ["a", null]}})
    )
    .is_err());
    assert!(parse(
        DataType::Double,
        json!({"check_type": "isin", "parameters": {"allowed_values": [1, 2.5]}})
    )
    .is_ok());
    let c = parse(
        DataType::Boolean,
        json!({"check_type": "isin", "parameters": {"allowed_values": [true]}}),
    )
    .unwrap();
    assert_eq!(c.to_string(), "isin([true])");
}

#[test]
fn str_matches_compiles_its_pattern_anchored_at_the_start() {
    let c = parse(
        DataType::String,
        json!({"check_type": "str_matches", "parameters": {"pattern": "[a-z]+\\d+"}}),
    )
    .unwrap();
    let Check::StrMatches { pattern, .. } = &c else {
        panic!("{c:?}")
    };
    assert!(pattern.is_match("abc12"));
    assert!(pattern.is_match("abc12!"));
    assert!(!pattern.is_match("!abc12"));
    assert_eq!(c.to_string(), "str_matches('[a-z]+\\d+')");
}

#[test]
fn str_matches_with_an_invalid_regex_is_rejected() {
    let p = one_problem(
        DataType::String,
        json!({"check_type": "str_matches", "parameters": {"pattern": "([a-z"}}),
    );
    assert!(
        p.starts_with("Column [col] check [c] (str_matches) has an invalid pattern [([a-z]: "),
        "{p}"
    );
    assert!(!p.contains('\n'));
}

#[test]
fn str_matches_needs_a_string_pattern() {
    assert_eq!(
        one_problem(
            DataType::String,
            json!({"check_type": "str_matches", "parameters": {"pattern": 5}})
        ),
        "Column [col] check [c] (str_matches) parameter [pattern] must be a string, not 5"
    );
}

#[test]
fn string_checks_on_a_numeric_column_are_rejected() {
    assert_eq!(
        one_problem(
            DataType::Int,
            json!({"check_type": "str_length", "parameters": {"min_value": 1, "max_value": 2}})
        ),
        "Column [col] check [c]: check_type [str_length] does not apply to int columns, \
         only to string columns"
    );
}

#[test]
fn numeric_checks_on_a_string_column_are_rejected() {
    for t in [DataType::String, DataType::Date, DataType::Boolean] {
        assert!(parse(
            t,
            json!({"check_type": "greater_than", "parameters": {"min_value": 1}})
        )
        .is_err());
    }
}

#[test]
fn isin_on_a_date_column_is_rejected() {
    assert_eq!(
        one_problem(
            DataType::Date,
            json!({"check_type": "isin", "parameters": {"allowed_values": ["2024-01-01"]}})
        ),
        "Column [col] check [c]: check_type [isin] does not apply to date columns, \
         only to int, double, string and boolean columns"
    );
}

#[test]
fn a_check_with_an_empty_name_is_rejected() {
    let spec: CheckSpec =
        serde_json::from_value(json!({"check_type": "less_than", "parameters": {"max_value": 3}}))
            .unwrap();
    let mut problems = Vec::new();
    assert!(parse_check("col", Some(DataType::Int), " ", &spec, &mut problems).is_none());
    assert_eq!(problems, ["Column [col] has a check with an empty name"]);
}

#[test]
fn a_column_with_an_invalid_type_still_gets_its_checks_judged() {
    let spec: CheckSpec =
        serde_json::from_value(json!({"check_type": "in_range", "parameters": {}})).unwrap();
    let mut problems = Vec::new();
    assert!(parse_check("col", None, "c", &spec, &mut problems).is_none());
    assert_eq!(problems.len(), 2, "{problems:?}");
}
