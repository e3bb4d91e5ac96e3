//! Unit tests of the expression checker.

use super::*;

fn cols() -> HashSet<String> {
    ["year", "region", "price"]
        .iter()
        .map(|s| s.to_string())
        .collect()
}

fn filter(text: &str) -> Result<String> {
    check_expr(
        "filter",
        text,
        &Scope {
            columns: &cols(),
            aggregates: false,
        },
    )
}

#[test]
fn ordinary_filters_pass() {
    for ok in [
        "year >= 2018 AND region = 'north'",
        "region IN ('a', 'b') OR price BETWEEN 1 AND 2",
        "region LIKE 'n%' AND price IS NOT NULL",
        "NOT (year = 2020) AND lower(region) = 'x'",
        "\"year\" > 1",
    ] {
        assert!(filter(ok).is_ok(), "{ok}: {:?}", filter(ok));
    }
}

#[test]
fn injection_attempts_are_refused_with_the_reason() {
    let cases = [
        ("1=1; DROP TABLE x", "contains `;`"),
        (
            "year IN (SELECT year FROM other)",
            "subqueries are not allowed",
        ),
        ("EXISTS (SELECT 1)", "subqueries are not allowed"),
        ("(SELECT 1) = 1", "subqueries are not allowed"),
        ("secret = 1", "unknown column [secret]"),
        (
            "pg_sleep(10) = 1",
            "unknown or disallowed function [pg_sleep]",
        ),
        ("avg(price) > 1", "aggregate [avg] is not allowed here"),
        ("year = 1 UNION SELECT 1", "unexpected"),
        ("' OR '1'='1", "unexpected `1` after the expression"),
        ("t.year = 1", "not an allowed expression"),
    ];
    for (text, fragment) in cases {
        let err = filter(text).unwrap_err().to_string();
        assert!(err.contains(fragment), "{text}: {err}");
    }
}

#[test]
fn deep_nesting_is_refused_not_a_crash() {
    let deep = format!("{}year = 1{}", "(".repeat(5000), ")".repeat(5000));
    assert!(filter(&deep).is_err());
}

#[test]
fn select_items_take_aggregates_and_aliases() {
    let scope = Scope {
        columns: &cols(),
        aggregates: true,
    };
    assert_eq!(
        check_select_item("avg(price) AS mean", &scope).unwrap(),
        "avg(price) AS mean"
    );
    assert!(check_select_item("count(*)", &scope).is_ok());
    assert!(check_select_item("count(DISTINCT region)", &scope).is_ok());
    assert!(check_select_item("*", &scope).is_err());
    assert!(check_select_item("price AS \"x; drop\"", &scope).is_err());
    assert!(check_select_item("price, year", &scope).is_err());
}

#[test]
fn every_listed_scalar_function_passes_in_its_usual_forms() {
    for ok in [
        "trim(region) = 'x'",
        "ltrim(region) = 'x' AND rtrim(region) = 'x'",
        "substr(region, 1, 2) = 'no' AND substring(region, 2) = 'o'",
        "SUBSTRING(region FROM 1 FOR 2) = 'no'",
        "floor(price) = 1 AND ceil(price) = 2 AND round(price, 1) > 0 AND abs(price) > 0",
        "lower(region) = upper(region) OR length(region) = char_length(region)",
        "coalesce(region, 'x') || concat(region, year) = 'a'",
        "date_part('year', year) = 1 OR date_trunc('month', year) IS NULL",
        "starts_with(region, 'n') AND ends_with(region, 'h')",
    ] {
        assert!(filter(ok).is_ok(), "{ok}: {:?}", filter(ok));
    }
}

#[test]
fn the_trim_family_removes_spaces_only_so_takes_one_argument() {
    for bad in [
        "trim(region, 'n') = 'x'",
        "ltrim(region, 'n') = 'x'",
        "TRIM(BOTH 'n' FROM region) = 'x'",
        "floor(price TO DAY) = 1",
    ] {
        assert!(filter(bad).is_err(), "{bad}");
    }
}

#[test]
fn unaliased_expressions_are_named_as_written() {
    let scope = Scope {
        columns: &cols(),
        aggregates: true,
    };
    assert_eq!(check_select_item("price", &scope).unwrap(), "price");
    assert_eq!(
        check_select_item("price+1", &scope).unwrap(),
        "price + 1 AS \"price + 1\""
    );
    assert_eq!(
        check_select_item("COUNT(*)", &scope).unwrap(),
        "COUNT(*) AS \"count(*)\""
    );
}

#[test]
fn a_call_stands_for_a_column_only_when_it_is_one_call() {
    assert_eq!(
        check_call("filter", "lower(region)").unwrap(),
        "lower(region)"
    );
    assert_eq!(check_call("filter", "count(*)").unwrap(), "count(*)");
    for bad in ["region", "a) OR (b", "lower(region) = 'x'", "f(1); DROP"] {
        assert!(check_call("filter", bad).is_err(), "{bad}");
    }
}
