//! `pg_type`'s function columns compared with 0. In PostgreSQL `typreceive` and its siblings are
//! `regproc`, and `typreceive != 0` asks "has a binary input function" (the ADBC PostgreSQL
//! driver's first query on connect). The emulated catalogue keeps them as text, the function's
//! name or `-` for none, as PostgreSQL prints them, so the comparison with 0 failed to cast a name
//! to a number. Here it becomes the comparison with `-`; and one with `'schema.name'::regproc`
//! (the JDBC driver's `typinput = 'pg_catalog.array_in'::regproc`, which the library turns into
//! an oid) the comparison with the bare name.

use std::ops::ControlFlow;

use datafusion::sql::sqlparser::ast::{BinaryOperator, Expr, Statement, Value};
use rapid_actors::sql_walk::rewrite_expressions;

/// `pg_type`'s columns of type `regproc`.
const REGPROC: [&str; 7] = [
    "typinput",
    "typoutput",
    "typreceive",
    "typsend",
    "typmodin",
    "typmodout",
    "typanalyze",
];

/// Rewrites `col = 0`, `col <> 0` and `col = 'name'::regproc` (either side) for the columns
/// above; whether any.
pub(crate) fn compare_as_names(statements: &mut Vec<Statement>) -> bool {
    let mut changed = false;
    let _ = rewrite_expressions(statements, &mut |expr| {
        if let Expr::BinaryOp { left, op, right } = expr {
            if matches!(op, BinaryOperator::Eq | BinaryOperator::NotEq) {
                if is_regproc(left) {
                    changed |= as_name(right);
                } else if is_regproc(right) {
                    changed |= as_name(left);
                }
            }
        }
        ControlFlow::<()>::Continue(())
    });
    changed
}

fn is_regproc(expr: &Expr) -> bool {
    let name = match expr {
        Expr::Identifier(i) => &i.value,
        Expr::CompoundIdentifier(parts) => match parts.last() {
            Some(i) => &i.value,
            None => return false,
        },
        _ => return false,
    };
    REGPROC.contains(&name.to_ascii_lowercase().as_str())
}

/// `0` as `'-'`, `'schema.name'::regproc` as `'name'`; whether `expr` was either.
fn as_name(expr: &mut Expr) -> bool {
    let name = match expr {
        Expr::Value(v) if matches!(&v.value, Value::Number(n, _) if n == "0") => "-".to_string(),
        Expr::Cast {
            expr: inner,
            data_type,
            ..
        } if data_type.to_string().eq_ignore_ascii_case("regproc") => match inner.as_ref() {
            Expr::Value(v) => match &v.value {
                Value::SingleQuotedString(text) => {
                    text.rsplit('.').next().unwrap_or(text).to_string()
                }
                _ => return false,
            },
            _ => return false,
        },
        _ => return false,
    };
    *expr = Expr::value(Value::SingleQuotedString(name));
    true
}

#[cfg(test)]
mod tests {
    use datafusion::sql::sqlparser::dialect::PostgreSqlDialect;
    use datafusion::sql::sqlparser::parser::Parser;

    fn rewritten(sql: &str) -> Option<String> {
        let mut statements = Parser::parse_sql(&PostgreSqlDialect {}, sql).unwrap();
        super::compare_as_names(&mut statements).then(|| statements[0].to_string())
    }

    #[test]
    fn function_columns_compared_with_zero_compare_with_a_dash() {
        assert_eq!(
            rewritten(
                "SELECT oid FROM pg_catalog.pg_type WHERE (typreceive != 0 OR 0 <> t.typsend) \
                 AND typtype != 'r'"
            )
            .as_deref(),
            Some(
                "SELECT oid FROM pg_catalog.pg_type WHERE (typreceive <> '-' OR '-' <> t.typsend) \
                 AND typtype <> 'r'"
            )
        );
        assert_eq!(
            rewritten("SELECT typinput = 'pg_catalog.array_in'::regproc AS is_array FROM pg_type")
                .as_deref(),
            Some("SELECT typinput = 'array_in' AS is_array FROM pg_type")
        );
        assert_eq!(rewritten("SELECT 1 FROM t WHERE typlen <> 0"), None);
        assert_eq!(rewritten("SELECT 1 FROM t WHERE typreceive <> 1"), None);
    }
}
