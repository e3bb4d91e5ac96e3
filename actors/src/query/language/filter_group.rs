//! rAPId's JSON filter groups, rendered as an expression text that then goes through the same
//! parse-and-check as a filter string. Literals are quoted here (quotes doubled), so a value can
//! never become syntax; the check that follows refuses anything a value could still smuggle in.

use serde::Deserialize;
use serde_json::Value;

use super::check::check_call;
use crate::error::{Error, Result};

/// rAPId's JSON filter group: conditions and nested groups joined by one logic operator.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FilterGroup {
    #[serde(default)]
    pub logic_operator: Option<String>,
    #[serde(default)]
    pub conditions: Vec<FilterCondition>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(no_recursion))]
    pub groups: Vec<FilterGroup>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FilterCondition {
    pub column: String,
    pub operator: String,
    #[serde(default)]
    pub value: Option<Value>,
}

const OPERATORS: &[&str] = &[
    "=",
    "!=",
    ">",
    ">=",
    "<",
    "<=",
    "LIKE",
    "NOT LIKE",
    "IN",
    "NOT IN",
    "IS NULL",
    "IS NOT NULL",
];

pub(crate) fn render(part: &str, group: &FilterGroup) -> Result<String> {
    let bad = |why: String| Error::invalid(format!("Invalid {part}: {why}"));
    let mut pieces = Vec::new();
    for c in &group.conditions {
        let op = c.operator.trim().to_ascii_uppercase();
        if !OPERATORS.contains(&op.as_str()) {
            return Err(bad(format!(
                "operator [{}] is not one of {}",
                c.operator,
                OPERATORS.join(", ")
            )));
        }
        if c.column.trim().is_empty() {
            return Err(bad("Column name cannot be empty".into()));
        }
        let column = column(part, c.column.trim())?;
        let value = c.value.as_ref().filter(|v| !v.is_null());
        let piece = match (op.as_str(), value) {
            ("IS NULL" | "IS NOT NULL", None) => format!("{column} {op}"),
            ("IS NULL" | "IS NOT NULL", Some(_)) => {
                return Err(bad(format!("Operator {op} should not have a value")))
            }
            (_, None) => return Err(bad(format!("Operator {op} requires a value"))),
            ("IN" | "NOT IN", Some(Value::Array(items))) if !items.is_empty() => {
                let list: Vec<String> = items
                    .iter()
                    .map(|v| literal(part, v))
                    .collect::<Result<_>>()?;
                format!("{column} {op} ({})", list.join(", "))
            }
            ("IN" | "NOT IN", Some(_)) => {
                return Err(bad(format!(
                    "Operator {op} requires a non-empty list value"
                )))
            }
            (_, Some(v)) => format!("{column} {op} {}", literal(part, v)?),
        };
        pieces.push(piece);
    }
    for g in &group.groups {
        let inner = render(part, g)?;
        if !inner.is_empty() {
            pieces.push(format!("({inner})"));
        }
    }
    let joiner = match group
        .logic_operator
        .as_deref()
        .map(str::to_ascii_uppercase)
        .as_deref()
    {
        Some("AND") => " AND ",
        Some("OR") => " OR ",
        None if pieces.len() <= 1 => " AND ",
        None => {
            return Err(bad(
                "logic_operator is required when you have multiple conditions or groups".into(),
            ))
        }
        Some(other) => return Err(bad(format!("logic_operator [{other}] must be AND or OR"))),
    };
    Ok(pieces.join(joiner))
}

/// A condition's `column`: a column name (quoted, so it stays one identifier), or, as rAPId
/// allows, a function call (`count(*)`, `avg(qty)`, `lower(cat)`), parenthesised so that it
/// stays one operand; the checker then decides whether that call is allowed where it stands.
fn column(part: &str, text: &str) -> Result<String> {
    if text.contains('(') {
        Ok(format!("({})", check_call(part, text)?))
    } else {
        Ok(format!("\"{}\"", text.replace('"', "\"\"")))
    }
}

fn literal(part: &str, v: &Value) -> Result<String> {
    match v {
        Value::String(s) => Ok(format!("'{}'", s.replace('\'', "''"))),
        Value::Number(n) => Ok(n.to_string()),
        Value::Bool(b) => Ok(if *b { "TRUE" } else { "FALSE" }.to_string()),
        other => Err(Error::invalid(format!(
            "Invalid {part}: value [{other}] must be a string, number or boolean"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(json: serde_json::Value) -> FilterGroup {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn groups_render_with_quoted_values() {
        let g = group(serde_json::json!({
            "logic_operator": "AND",
            "conditions": [
                {"column": "region", "operator": "=", "value": "O'Brien"},
                {"column": "year", "operator": "IN", "value": [2020, 2021]},
                {"column": "note", "operator": "IS NULL"}
            ],
            "groups": [{"logic_operator": "OR", "conditions": [
                {"column": "a", "operator": ">", "value": 1}, {"column": "b", "operator": "=", "value": true}]}]
        }));
        assert_eq!(
            render("filter", &g).unwrap(),
            "\"region\" = 'O''Brien' AND \"year\" IN (2020, 2021) AND \"note\" IS NULL AND (\"a\" > 1 OR \"b\" = TRUE)"
        );
    }

    #[test]
    fn a_column_may_be_a_function_call_as_in_rapid() {
        let g = group(serde_json::json!({
            "logic_operator": "OR",
            "conditions": [
                {"column": "count(*)", "operator": ">", "value": 1000},
                {"column": "avg(qty)", "operator": "<=", "value": 2.5},
                {"column": "lower(cat)", "operator": "IN", "value": ["a", "b"]}
            ]
        }));
        assert_eq!(
            render("filter", &g).unwrap(),
            "(count(*)) > 1000 OR (avg(qty)) <= 2.5 OR (lower(cat)) IN ('a', 'b')"
        );
        let g = group(serde_json::json!({"conditions": [
            {"column": "lower(cat)) OR (1 = 1", "operator": "=", "value": "x"}]}));
        assert!(render("filter", &g).is_err());
    }

    #[test]
    fn rapid_mistakes_are_400s_not_500s() {
        let cases = [
            (
                serde_json::json!({"conditions": [{"column": "a", "operator": "="}]}),
                "requires a value",
            ),
            (
                serde_json::json!({"conditions": [{"column": "a", "operator": "IS NULL", "value": 1}]}),
                "should not have a value",
            ),
            (
                serde_json::json!({"conditions": [{"column": "a", "operator": "IN", "value": 1}]}),
                "non-empty list",
            ),
            (
                serde_json::json!({"conditions": [{"column": "a", "operator": "=", "value": 1}, {"column": "b", "operator": "=", "value": 1}]}),
                "logic_operator is required",
            ),
            (
                serde_json::json!({"conditions": [{"column": "a", "operator": "; DROP", "value": 1}]}),
                "is not one of",
            ),
        ];
        for (json, fragment) in cases {
            let err = render("filter", &group(json)).unwrap_err().to_string();
            assert!(err.contains(fragment), "{err}");
        }
    }
}
