//! The query body, from bytes to a [`QueryRequest`]. Its JSON nesting is measured by a loop
//! over the bytes before any parser recurses into it, so a body nested thousands deep gets a
//! message naming the limit rather than a parser's generic refusal. The expressions in it are
//! bounded next, where every query starts ([`crate::query::PreparedQuery::new`]).

use super::limits::QueryLimits;
use super::request::QueryRequest;
use crate::error::{Error, Result};

/// JSON levels a query needs above its filter groups' own: the body, a condition and its list.
const JSON_LEVELS_AROUND_GROUPS: usize = 4;

/// Parses a query body within the depth limit; an empty (or all-whitespace) body means "everything".
pub fn parse_request(body: &[u8], limits: &QueryLimits) -> Result<QueryRequest> {
    if body.iter().all(|b| b.is_ascii_whitespace()) {
        return Ok(QueryRequest::default());
    }
    // Each filter-group level is an object inside an array: two JSON levels.
    let allowed = 2 * limits.max_depth + JSON_LEVELS_AROUND_GROUPS;
    let (depth, part) = json_depth(body);
    if depth > allowed {
        let part = part.unwrap_or_else(|| "query".into());
        return Err(Error::invalid(format!(
            "Invalid {part}: its JSON is nested {depth} levels deep, deeper than filter groups \
             nested {} deep need; the limit is {} (RAPID_QUERY_MAX_DEPTH)",
            limits.max_depth, limits.max_depth
        )));
    }
    // serde would also read a struct from a JSON array (by position): only an object is a query.
    if !body.trim_ascii_start().starts_with(b"{") {
        return Err(Error::invalid(
            "Invalid query: the body must be a JSON object",
        ));
    }
    serde_json::from_slice(body).map_err(|e| Error::invalid(format!("Invalid query: {e}")))
}

/// The deepest nesting of objects and arrays, skipping strings (with their escapes), and the
/// top-level key it is under (for messages; a known field name only). Malformed JSON is measured
/// as far as it goes; the parser reports it afterwards.
pub(crate) fn json_depth(body: &[u8]) -> (usize, Option<String>) {
    let (mut depth, mut deepest, mut deepest_key) = (0usize, 0usize, None);
    let (mut in_string, mut escaped) = (false, false);
    // The last string that started at the top level: the key of the value that follows it.
    let (mut string_start, mut key) = (0usize, None);
    for (i, &b) in body.iter().enumerate() {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => {
                    in_string = false;
                    if depth == 1 {
                        key = Some(&body[string_start..i]);
                    }
                }
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => {
                in_string = true;
                string_start = i + 1;
            }
            b'{' | b'[' => {
                depth += 1;
                if depth > deepest {
                    deepest = depth;
                    deepest_key = key;
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    let known = |k: &&[u8]| FIELDS.iter().any(|f| f.as_bytes() == *k);
    let part = deepest_key
        .filter(known)
        .map(|k| String::from_utf8_lossy(k).into_owned());
    (deepest, part)
}

/// The fields of a query object, the only keys a message repeats.
const FIELDS: &[&str] = &[
    "select_columns",
    "filter",
    "group_by_columns",
    "aggregation_conditions",
    "order_by_columns",
    "limit",
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::language::limits::check_request;

    fn parse_and_check(body: &[u8], limits: &QueryLimits) -> Result<QueryRequest> {
        let request = parse_request(body, limits)?;
        check_request(&request, limits)?;
        Ok(request)
    }

    #[test]
    fn json_depth_skips_strings_and_escapes() {
        assert_eq!(json_depth(br#"{}"#), (1, None));
        assert_eq!(json_depth(br#"{"a": [[1], {"b": "[[[["}]}"#).0, 3);
        assert_eq!(json_depth(br#"{"a": "x\"[[[", "b": [1]}"#).0, 2);
        assert_eq!(json_depth(br#"[[[[[[["#), (7, None));
        let body = br#"{"select_columns": ["a"], "filter": {"groups": [{"x": "}"}]}, "limit": 1}"#;
        assert_eq!(json_depth(body), (4, Some("filter".to_string())));
    }

    #[test]
    fn a_body_nested_thousands_deep_is_refused_naming_the_limit() {
        let body = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
        let err = parse_request(body.as_bytes(), &QueryLimits::default()).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("Invalid query: its JSON is nested 5000 levels deep")
                && text.contains("RAPID_QUERY_MAX_DEPTH"),
            "{text}"
        );
    }

    #[test]
    fn groups_nested_near_the_limit_parse_and_past_it_are_refused() {
        let limits = QueryLimits::default();
        let leaf = r#"{"conditions": [{"column": "a", "operator": "IN", "value": [1, 2]}]}"#;
        let mut group = leaf.to_string();
        // The rendered condition adds two levels (IN, then its column) below the groups' own.
        for _ in 1..limits.max_depth - 2 {
            group =
                format!(r#"{{"logic_operator": "AND", "conditions": [], "groups": [{group}]}}"#);
        }
        let body = format!(r#"{{"filter": {group}}}"#);
        parse_and_check(body.as_bytes(), &limits).unwrap();
        let mut deeper = group;
        for _ in 0..3 {
            deeper = format!(r#"{{"groups": [{deeper}]}}"#);
        }
        let deeper = format!(r#"{{"filter": {deeper}}}"#);
        let err = parse_and_check(deeper.as_bytes(), &limits).unwrap_err();
        assert!(err.to_string().contains("RAPID_QUERY_MAX_DEPTH"), "{err}");
    }

    #[test]
    fn empty_bodies_mean_everything() {
        let request = parse_request(b"  \n", &QueryLimits::default()).unwrap();
        assert!(request.filter.is_none() && request.select_columns.is_none());
    }
}
