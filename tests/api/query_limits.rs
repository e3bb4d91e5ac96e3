//! Query expressions past each size and nesting limit, in every field and both filter forms:
//! 400 naming the limit, and the server keeps serving. Expressions just under the limits answer
//! (a debug build's larger frames included) instead of crashing the process.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::support::{schema_json, TestServer};

const QUERY: &str = "/api/datasets/default/hostile/numbers/query";

fn server() -> (TestServer, String) {
    let s = TestServer::start();
    s.create_schema(&schema_json(
        "hostile",
        "numbers",
        "PUBLIC",
        "APPEND",
        json!([
            {"name": "a", "data_type": "int", "allow_null": false},
            {"name": "s", "data_type": "string", "allow_null": true}
        ]),
    ));
    let t = s.admin_token();
    let mut csv = String::from("a,s\n");
    for i in 0..50 {
        csv.push_str(&format!("{i},x{i}\n"));
    }
    let path = "/api/datasets/default/hostile/numbers";
    let (_, job) = s.upload_and_wait(&t, path, "n.csv", csv.into());
    assert_eq!(job["status"], "SUCCESS", "{job}");
    (s, t)
}

/// `value` placed in each value field and `condition` (as text and as `group`) in both
/// condition fields.
fn in_every_field(value: &str, condition: &str, group: &Value) -> Vec<(&'static str, Value)> {
    let grouped = |c: &Value| {
        json!({"select_columns": ["a", "count(*) AS n"], "group_by_columns": ["a"],
               "aggregation_conditions": c})
    };
    vec![
        ("select_columns", json!({"select_columns": [value]})),
        ("filter", json!({"filter": condition})),
        ("filter", json!({"filter": group})),
        (
            "group_by_columns",
            json!({"select_columns": ["a"], "group_by_columns": [value]}),
        ),
        ("aggregation_conditions", grouped(&json!(condition))),
        ("aggregation_conditions", grouped(group)),
        (
            "order_by_columns",
            json!({"order_by_columns": [{"column": value}]}),
        ),
    ]
}

/// Checks every field past a limit: refused, naming `setting`.
fn refused_everywhere(s: &TestServer, t: &str, expr: &str, group: &Value, setting: &str) {
    for (part, body) in in_every_field(expr, expr, group) {
        assert_refused(s, t, &body, part, setting);
    }
}

/// A JSON filter group of `conditions` (OR-ed), nested `depth` groups deep.
fn group(depth: usize, conditions: usize) -> Value {
    let leaf: Vec<Value> = (0..conditions)
        .map(|i| json!({"column": "a", "operator": "=", "value": i}))
        .collect();
    let mut g = json!({"logic_operator": "OR", "conditions": leaf});
    for _ in 1..depth {
        g = json!({"logic_operator": "AND", "conditions": [], "groups": [g]});
    }
    g
}

fn assert_alive(s: &TestServer, t: &str) {
    let (status, _) = s.call("GET", "/api/status", None, None);
    assert_eq!(status, StatusCode::OK);
    let (status, answer) = s.call("POST", QUERY, Some(t), Some(&json!({"filter": "a < 2"})));
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer.as_object().unwrap().len(), 2);
}

fn assert_refused(s: &TestServer, t: &str, body: &Value, part: &str, setting: &str) {
    let (status, answer) = s.call("POST", QUERY, Some(t), Some(body));
    let details = answer["details"].as_str().unwrap_or_default();
    assert_eq!(status, StatusCode::BAD_REQUEST, "{part}: {answer}");
    assert!(
        details.contains(setting) && (part.is_empty() || details.contains(part)),
        "{part} should name {setting}: {details}"
    );
}

#[test]
fn expressions_far_past_each_limit_are_400_naming_it_in_every_field() {
    let (s, t) = server();
    // 20,000 bytes long; 4,000 brackets deep (in 8,001 bytes); groups 200 deep.
    let long = format!("s = '{}'", "x".repeat(20_000));
    let long_group =
        json!({"conditions": [{"column": "s", "operator": "=", "value": "x".repeat(20_000)}]});
    refused_everywhere(
        &s,
        &t,
        &long,
        &long_group,
        "RAPID_QUERY_MAX_EXPRESSION_BYTES",
    );
    let deep = format!("{}a{}", "(".repeat(4000), ")".repeat(4000));
    refused_everywhere(&s, &t, &deep, &group(200, 1), "RAPID_QUERY_MAX_DEPTH");
    // 3,000 terms in 6,000 bytes; 2,000 OR-ed conditions in a group.
    let many = vec!["a"; 3000].join("+");
    refused_everywhere(&s, &t, &many, &group(1, 2000), "RAPID_QUERY_MAX_NODES");
    // Operator chains are depth: 400 terms in a row make a tree 400 deep.
    let chain = vec!["a"; 400].join(" + ");
    refused_everywhere(&s, &t, &chain, &group(1, 300), "RAPID_QUERY_MAX_DEPTH");
    // Many small items count together.
    let columns: Vec<String> = (0..5000).map(|_| "a".to_string()).collect();
    for body in [
        json!({"select_columns": columns}),
        json!({"group_by_columns": columns}),
        json!({"order_by_columns": columns.iter().map(|c| json!({"column": c})).collect::<Vec<_>>()}),
    ] {
        assert_refused(&s, &t, &body, "", "RAPID_QUERY_MAX_NODES");
    }
    assert_alive(&s, &t);
}

#[test]
fn a_body_nested_past_what_json_parsers_allow_is_400_naming_the_depth_limit() {
    let (s, t) = server();
    let body = format!(
        r#"{{"filter": {}{{}}{}}}"#,
        r#"{"groups": ["#.repeat(5000),
        "]}".repeat(5000)
    );
    let res = s
        .request("POST", QUERY)
        .bearer_auth(&t)
        .header("Content-Type", "application/json")
        .body(body)
        .send()
        .unwrap();
    let (status, answer) = crate::support::into_parts(res);
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert!(
        answer["details"]
            .as_str()
            .unwrap()
            .contains("the limit is 50 (RAPID_QUERY_MAX_DEPTH)"),
        "{answer}"
    );
    assert_alive(&s, &t);
}

#[test]
fn a_body_past_its_size_limit_is_413_naming_the_limit() {
    let (s, t) = server();
    let huge = json!({"select_columns": vec!["a"; 100_000]});
    let (status, answer) = s.call("POST", QUERY, Some(&t), Some(&huge));
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{answer}");
    assert!(
        answer["details"]
            .as_str()
            .unwrap()
            .contains("RAPID_QUERY_MAX_BODY_BYTES"),
        "{answer}"
    );
    assert_alive(&s, &t);
}

#[test]
fn expressions_just_under_the_limits_answer_in_every_field() {
    let (s, t) = server();
    let checks = |value: &str, condition: &str, group: &Value| {
        for (part, body) in in_every_field(value, condition, group) {
            let (status, answer) = s.call("POST", QUERY, Some(&t), Some(&body));
            // group_by_columns takes bare columns, so an expression there is a clear 400.
            let expected = if part == "group_by_columns" && value != "a" {
                StatusCode::BAD_REQUEST
            } else {
                StatusCode::OK
            };
            assert_eq!(status, expected, "{part}: {answer}");
        }
    };
    // Brackets and calls 46 deep: trees of 47 and 48 levels, under the limit of 50.
    let brackets = format!("{}a{}", "(".repeat(46), ")".repeat(46));
    let calls = format!("{}a{}", "abs(".repeat(46), ")".repeat(46));
    checks(&brackets, &format!("{brackets} > 1"), &group(44, 1));
    checks(&calls, &format!("{calls} > 1"), &group(44, 1));
    // An operator chain 48 deep; a group of 47 OR-ed conditions.
    let chain = vec!["a"; 48].join(" + ");
    checks(&chain, &format!("{chain} > 1"), &group(1, 47));
    // Nearly the term limit (1,000): lists of 980 values.
    let list = (0..980)
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let in_group = json!({"conditions": [{"column": "a", "operator": "IN",
                                          "value": (0..980).collect::<Vec<_>>()}]});
    let in_list = format!("a IN ({list})");
    checks(&in_list, &in_list, &in_group);
    checks("a", "a > 1", &group(1, 1));
    // Every field near its depth at once.
    let everything = json!({
        "select_columns": [format!("{} AS x", vec!["a"; 40].join(" + ")), "count(*) AS n"],
        "filter": vec!["a > 1"; 20].join(" AND "),
        "group_by_columns": ["a"],
        "aggregation_conditions": format!("{} > 0", vec!["count(*)"; 40].join(" + ")),
        "order_by_columns": [{"column": vec!["a"; 45].join(" - "), "direction": "DESC"}],
    });
    let (status, answer) = s.call("POST", QUERY, Some(&t), Some(&everything));
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer.as_object().unwrap().len(), 48);
    assert_alive(&s, &t);
}
