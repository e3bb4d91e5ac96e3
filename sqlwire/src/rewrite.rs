//! PostgreSQL syntax the library's parser accepts but DataFusion cannot plan, rewritten to its
//! DataFusion spelling before the statement reaches the library.

use std::ops::ControlFlow;

use datafusion::sql::sqlparser::ast::{visit_expressions_mut, AccessExpr, Expr, Subscript, Value};
use datafusion::sql::sqlparser::dialect::PostgreSqlDialect;
use datafusion::sql::sqlparser::parser::Parser;

/// `(expression).field`, PostgreSQL's access to a field of a composite value (the JDBC driver's
/// `getPrimaryKeys` writes `(information_schema._pg_expandarray(i.indkey)).n`), becomes
/// `(expression)['field']`, which DataFusion reads as the struct field. None when the statement
/// has no such access, so that every other statement reaches the library as the client wrote it.
pub(crate) fn composite_fields(sql: &str) -> Option<String> {
    let mut statements = Parser::parse_sql(&PostgreSqlDialect {}, sql).ok()?;
    let mut changed = false;
    let _ = visit_expressions_mut(&mut statements, |expr| {
        if let Expr::CompoundFieldAccess { root, access_chain } = expr {
            // `a.b` of plain names is a qualified column; only a computed root is composite.
            if !matches!(**root, Expr::Identifier(_) | Expr::CompoundIdentifier(_)) {
                for access in access_chain.iter_mut() {
                    if let AccessExpr::Dot(Expr::Identifier(field)) = access {
                        let name = Value::SingleQuotedString(field.value.clone());
                        *access = AccessExpr::Subscript(Subscript::Index {
                            index: Expr::value(name),
                        });
                        changed = true;
                    }
                }
            }
        }
        ControlFlow::<()>::Continue(())
    });
    changed.then(|| {
        statements
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .join("; ")
    })
}

#[cfg(test)]
mod tests {
    use super::composite_fields;

    #[test]
    fn a_field_of_a_computed_value_becomes_a_subscript() {
        let sql = "SELECT (f(i.indkey)).n AS k, (r.keys).x FROM t AS r";
        let out = composite_fields(sql).unwrap();
        assert!(out.contains("(f(i.indkey))['n']"), "{out}");
        assert!(out.contains("(r.keys)['x']"), "{out}");
    }

    #[test]
    fn other_statements_are_left_as_written() {
        assert_eq!(composite_fields("SELECT t.a, s.t.b FROM s.t"), None);
        assert_eq!(composite_fields("SELECT a['n'] FROM t"), None);
        assert_eq!(composite_fields("not sql at all"), None);
    }
}
