//! `LIKE ... ESCAPE 'c'` with an escape character other than the backslash, which DataFusion
//! refuses and SQLAlchemy's PostgreSQL dialect sends in its inspector's catalog queries
//! (`nspname NOT LIKE 'pg/_%' ESCAPE '/'`). The pattern is rewritten to the backslash's escapes:
//! at once when it is written in the statement, through [`udf`] when it is a bound parameter.

use std::sync::Arc;

use datafusion::arrow::array::{AsArray, StringArray};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{exec_err, ScalarValue};
use datafusion::logical_expr::{create_udf, ColumnarValue, ScalarUDF, Volatility};

/// The function a bound pattern passes through: `NAME(pattern, escape)`.
pub(crate) const NAME: &str = "rapid_like_backslash";

/// `pattern` with escape character `escape` (None: `ESCAPE ''`, no escape at all), spelt with
/// the backslash as its escape, as PostgreSQL reads it: an escaped character stands for itself,
/// a backslash that is not the escape is an ordinary character.
pub(crate) fn to_backslash(pattern: &str, escape: Option<char>) -> String {
    let mut out = String::with_capacity(pattern.len() + 4);
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        let literal = if Some(c) == escape {
            // A trailing escape character: PostgreSQL refuses the pattern; read it as itself.
            chars.next().unwrap_or(c)
        } else if c == '%' || c == '_' {
            out.push(c);
            continue;
        } else {
            c
        };
        if matches!(literal, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(literal);
    }
    out
}

/// The escape character of an `ESCAPE` clause's text: None for `''`.
pub(crate) fn escape_char(text: &str) -> Option<char> {
    text.chars().next()
}

/// `rapid_like_backslash(pattern, escape)`: [`to_backslash`] over a column of patterns.
pub(crate) fn udf() -> ScalarUDF {
    create_udf(
        NAME,
        vec![DataType::Utf8, DataType::Utf8],
        DataType::Utf8,
        Volatility::Immutable,
        Arc::new(|args: &[ColumnarValue]| {
            let ColumnarValue::Scalar(ScalarValue::Utf8(escape)) = &args[1] else {
                return exec_err!("the escape of a LIKE pattern is written in the statement");
            };
            let escape = escape.as_deref().and_then(escape_char);
            let patterns = match &args[0] {
                ColumnarValue::Array(a) => a.clone(),
                ColumnarValue::Scalar(s) => s.to_array()?,
            };
            let Some(patterns) = patterns.as_string_opt::<i32>() else {
                return exec_err!("a LIKE pattern is text");
            };
            let out: StringArray = patterns
                .iter()
                .map(|p| p.map(|p| to_backslash(p, escape)))
                .collect();
            Ok(ColumnarValue::Array(Arc::new(out)))
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::to_backslash;

    #[test]
    fn an_escaped_wildcard_stays_literal_and_a_backslash_is_ordinary() {
        assert_eq!(to_backslash("pg/_%", Some('/')), "pg\\_%");
        assert_eq!(to_backslash("a//b", Some('/')), "a/b");
        assert_eq!(to_backslash("a\\b_", Some('/')), "a\\\\b_");
        assert_eq!(to_backslash("x#%y", Some('#')), "x\\%y");
        assert_eq!(to_backslash("a\\_", None), "a\\\\_");
    }
}
