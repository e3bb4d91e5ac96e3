//! The query body, from bytes to a [`QueryRequest`]. Its JSON nesting is measured by a loop
//! over the bytes before any parser recurses into it, so a body nested thousands deep gets a
//! message naming the limit rather than a parser's generic refusal. The expressions in it are
//! bounded next, where every query starts ([`super::PreparedQuery::new`]).

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
    let depth = json_depth(body);
    if depth > allowed {
        return Err(Error::invalid(format!(
            "Invalid query: the body is nested {depth} levels deep, deeper than filter groups \
             nested {} deep need; the limit is {} (RAPID_QUERY_MAX_DEPTH)",
            limits.max_depth, limits.max_depth
        )));
    }
    serde_json::from_slice(body).map_err(|e| Error::invalid(format!("Invalid query: {e}")))
}

/// The deepest nesting of objects and arrays, skipping strings (with their escapes). Malformed
/// JSON is measured as far as it goes; the parser reports it afterwards.
pub fn json_depth(body: &[u8]) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let (mut in_string, mut escaped) = (false, false);
    for &b in body {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::limits::check_request;

    fn parse_and_check(body: &[u8], limits: &QueryLimits) -> Result<QueryRequest> {
        let request = parse_request(body, limits)?;
        check_request(&request, limits)?;
        Ok(request)
    }

    #[test]
    fn json_depth_skips_strings_and_escapes() {
        assert_eq!(json_depth(br#"{}"#), 1);
        assert_eq!(json_depth(br#"{"a": [[1], {"b": "[[[["}]}"#), 3);
        assert_eq!(json_depth(br#"{"a": "x\"[[[", "b": [1]}"#), 2);
        assert_eq!(json_depth(br#"[[[[[[["#), 7);
    }

    #[test]
    fn a_body_nested_thousands_deep_is_refused_naming_the_limit() {
        let body = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
        let err = parse_request(body.as_bytes(), &QueryLimits::default()).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("nested 5000 levels deep") && text.contains("RAPID_QUERY_MAX_DEPTH"),
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
