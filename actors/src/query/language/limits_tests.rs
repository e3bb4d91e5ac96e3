//! Unit tests of the query limits: each limit in each field, and queries just under them.

use super::*;
use crate::query::language::request::{FilterCondition, OrderBy};

fn limits() -> QueryLimits {
    QueryLimits {
        max_expression_bytes: 200,
        max_nodes: 40,
        max_depth: 8,
    }
}

fn refused(request: &QueryRequest) -> String {
    check_request(request, &limits())
        .expect_err("past a limit")
        .to_string()
}

fn select(items: &[&str]) -> QueryRequest {
    QueryRequest {
        select_columns: Some(items.iter().map(|s| s.to_string()).collect()),
        ..Default::default()
    }
}

fn filter(text: &str) -> QueryRequest {
    QueryRequest {
        filter: Some(Condition::Sql(text.into())),
        ..Default::default()
    }
}

fn chain(n: usize) -> String {
    vec!["a"; n].join(" + ")
}

#[test]
fn ordinary_queries_pass() {
    let ok = QueryRequest {
        select_columns: Some(vec!["a".into(), "avg(b) AS m".into()]),
        filter: Some(Condition::Sql("a > 1 AND b IN (1, 2, 3)".into())),
        group_by_columns: Some(vec!["a".into()]),
        aggregation_conditions: Some(Condition::Sql("count(*) > 1".into())),
        order_by_columns: Some(vec![OrderBy {
            column: "m".into(),
            direction: Some("DESC".into()),
        }]),
        limit: None,
    };
    check_request(&ok, &limits()).unwrap();
}

#[test]
fn long_strings_are_refused_in_every_field() {
    let long = format!("a = '{}'", "x".repeat(300));
    for (part, request) in [
        ("select_columns", select(&[&long])),
        ("filter", filter(&long)),
        (
            "group_by_columns",
            QueryRequest {
                group_by_columns: Some(vec![long.clone()]),
                ..Default::default()
            },
        ),
        (
            "aggregation_conditions",
            QueryRequest {
                aggregation_conditions: Some(Condition::Sql(long.clone())),
                ..Default::default()
            },
        ),
        (
            "order_by_columns",
            QueryRequest {
                order_by_columns: Some(vec![OrderBy {
                    column: long.clone(),
                    direction: None,
                }]),
                ..Default::default()
            },
        ),
    ] {
        let err = refused(&request);
        assert!(
            err.contains(&format!("Invalid {part}"))
                && err.contains("the limit is 200 (RAPID_QUERY_MAX_EXPRESSION_BYTES)"),
            "{err}"
        );
    }
}

#[test]
fn parentheses_past_the_depth_are_refused_before_parsing() {
    let deep = format!("{}a{}", "(".repeat(5000), ")".repeat(5000));
    let err = refused(&filter(&deep.replace('a', "a = 1")[..]));
    assert!(err.contains("bytes"), "length first: {err}");
    let mut l = limits();
    l.max_expression_bytes = 100_000;
    let err = check_request(&filter(&deep), &l).unwrap_err().to_string();
    assert!(
        err.contains("nested 5000 deep; the limit is 8 (RAPID_QUERY_MAX_DEPTH)"),
        "{err}"
    );
}

#[test]
fn operator_chains_count_as_depth() {
    assert!(check_request(&select(&[&chain(6)]), &limits()).is_ok());
    let err = refused(&select(&[&chain(12)]));
    assert!(
        err.contains("Invalid select_columns") && err.contains("nested 12 deep"),
        "{err}"
    );
    let err = refused(&filter(&format!("{} = 1", chain(10))));
    assert!(err.contains("RAPID_QUERY_MAX_DEPTH"), "{err}");
}

#[test]
fn terms_are_counted_across_the_whole_query() {
    // 4 items of 7 terms pass (28); 6 items (42) are past the limit of 40.
    let item = "a + b + c + d";
    assert!(check_request(&select(&[item; 4]), &limits()).is_ok());
    let err = refused(&select(&[item; 6]));
    assert!(
        err.contains("the limit is 40 (RAPID_QUERY_MAX_NODES)"),
        "{err}"
    );
    let many_columns = QueryRequest {
        group_by_columns: Some(vec!["a".to_string(); 41]),
        ..Default::default()
    };
    assert!(refused(&many_columns).contains("RAPID_QUERY_MAX_NODES"));
    let long_list = filter(&format!(
        "a IN ({})",
        (0..40).map(|i| i.to_string()).collect::<Vec<_>>().join(",")
    ));
    assert!(refused(&long_list).contains("RAPID_QUERY_MAX_NODES"));
}

fn condition(column: &str, value: i64) -> FilterCondition {
    FilterCondition {
        column: column.into(),
        operator: "=".into(),
        value: Some(value.into()),
    }
}

#[test]
fn json_groups_are_bounded_in_depth_terms_and_chain_length() {
    let mut deep = FilterGroup {
        conditions: vec![condition("a", 1)],
        ..Default::default()
    };
    for _ in 0..20 {
        deep = FilterGroup {
            groups: vec![deep],
            ..Default::default()
        };
    }
    let request = QueryRequest {
        filter: Some(Condition::Group(deep)),
        ..Default::default()
    };
    let err = refused(&request);
    assert!(err.contains("groups are nested 9 deep"), "{err}");

    let wide = FilterGroup {
        logic_operator: Some("OR".into()),
        conditions: (0..20).map(|i| condition("a", i)).collect(),
        groups: vec![],
    };
    let request = QueryRequest {
        aggregation_conditions: Some(Condition::Group(wide)),
        ..Default::default()
    };
    let err = refused(&request);
    assert!(
        err.contains("Invalid aggregation_conditions") && err.contains("RAPID_QUERY_MAX_NODES"),
        "{err}"
    );

    let chain = FilterGroup {
        logic_operator: Some("OR".into()),
        conditions: (0..10).map(|i| condition("a", i)).collect(),
        groups: vec![],
    };
    let request = QueryRequest {
        filter: Some(Condition::Group(chain)),
        ..Default::default()
    };
    assert!(refused(&request).contains("`a OR b OR c`"));
}

#[test]
fn trees_too_deep_for_the_parser_name_the_limit() {
    // Two parser levels per bracket level: the parser's ceiling comes before the bracket count.
    let text = format!("{}a = 1{}", "a = 1 AND (".repeat(40), ")".repeat(40));
    let mut l = limits();
    l.max_depth = 45;
    l.max_nodes = 1_000;
    l.max_expression_bytes = 10_000;
    let err = check_request(&filter(&text), &l).unwrap_err().to_string();
    assert!(
        err.contains("nested more than 60 deep; the limit is 45 (RAPID_QUERY_MAX_DEPTH)"),
        "{err}"
    );
}

#[test]
fn strings_the_parser_refuses_are_left_to_the_checker() {
    assert!(check_request(&filter("a = 'unterminated"), &limits()).is_ok());
    assert!(check_request(&filter("a = = 1"), &limits()).is_ok());
}

/// Found by fuzzing: compound names and subscripts made sqlparser backtrack exponentially (the
/// first of these parsed for over a minute). They are refused from the tokens, in every field.
#[test]
fn qualifiers_subscripts_and_braces_are_refused_before_parsing() {
    for text in [
        "Z.y.Z.".repeat(18),
        "Z.y[".repeat(22),
        "a[1]".into(),
        "{a}".into(),
    ] {
        for request in [filter(&text), select(&[text.as_str()])] {
            let err = refused(&request);
            assert!(err.contains("has no place in a query expression"), "{err}");
        }
    }
    // With the service's default limits too, where the term budget would let them through.
    let err = check_request(&filter(&"Z.y.Z.".repeat(18)), &QueryLimits::default())
        .expect_err("refused")
        .to_string();
    assert!(err.contains("`.` has no place"), "{err}");
}
