//! PostgreSQL syntax the library's parser accepts but DataFusion cannot plan, rewritten to its
//! DataFusion spelling before the statement reaches the library. A statement that needs none of
//! it reaches the library as the client wrote it.

use std::collections::HashSet;
use std::ops::ControlFlow;

use datafusion::sql::sqlparser::ast::{
    visit_expressions_mut, AccessExpr, Expr, Ident, Query, SelectItem, SetExpr, Statement,
    Subscript, Value, VisitMut, VisitorMut,
};
use datafusion::sql::sqlparser::dialect::PostgreSqlDialect;
use datafusion::sql::sqlparser::parser::Parser;

/// The statements of `sql` rewritten, or None when none of the rewrites applies (or the text does
/// not parse, which the library then reports).
pub(crate) fn for_datafusion(sql: &str) -> Option<String> {
    let mut statements = Parser::parse_sql(&PostgreSqlDialect {}, sql).ok()?;
    let mut changed = composite_fields(&mut statements);
    let mut names = UniqueNames::default();
    let _ = statements.visit(&mut names);
    changed |= names.changed;
    changed.then(|| {
        statements
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .join("; ")
    })
}

/// `(expression).field`, PostgreSQL's access to a field of a composite value (the JDBC driver's
/// `getPrimaryKeys` writes `(information_schema._pg_expandarray(i.indkey)).n`), becomes
/// `(expression)['field']`, which DataFusion reads as the struct field.
fn composite_fields(statements: &mut Vec<Statement>) -> bool {
    let mut changed = false;
    let _ = visit_expressions_mut(statements, |expr| {
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
    changed
}

/// PostgreSQL lets a select list repeat an output name (`SELECT NULL, NULL LIMIT 0`, which
/// DuckDB's `postgres` extension sends); DataFusion refuses it. A repeated unaliased expression
/// gets an alias of its own (`NULL_2`); aliased and named columns keep their names.
#[derive(Default)]
struct UniqueNames {
    changed: bool,
}

impl VisitorMut for UniqueNames {
    type Break = ();

    fn pre_visit_query(&mut self, query: &mut Query) -> ControlFlow<()> {
        self.changed |= unique_names(&mut query.body);
        ControlFlow::Continue(())
    }
}

fn unique_names(body: &mut SetExpr) -> bool {
    match body {
        SetExpr::Select(select) => {
            let named = |item: &SelectItem| match item {
                SelectItem::ExprWithAlias { alias, .. } => Some(alias.value.to_lowercase()),
                SelectItem::UnnamedExpr(Expr::Identifier(i)) => Some(i.value.to_lowercase()),
                SelectItem::UnnamedExpr(Expr::CompoundIdentifier(parts)) => {
                    parts.last().map(|i| i.value.to_lowercase())
                }
                _ => None,
            };
            let mut taken: HashSet<String> = select.projection.iter().filter_map(named).collect();
            let mut seen = HashSet::new();
            let mut changed = false;
            for item in select.projection.iter_mut() {
                let SelectItem::UnnamedExpr(expr) = item else {
                    continue;
                };
                if matches!(expr, Expr::Identifier(_) | Expr::CompoundIdentifier(_)) {
                    continue;
                }
                let text = expr.to_string();
                if seen.insert(text.to_lowercase()) {
                    continue;
                }
                let alias = (2..)
                    .map(|n| format!("{text}_{n}"))
                    .find(|a| {
                        !taken.contains(&a.to_lowercase()) && !seen.contains(&a.to_lowercase())
                    })
                    .unwrap_or_default();
                taken.insert(alias.to_lowercase());
                let expr = std::mem::replace(expr, Expr::value(Value::Null));
                *item = SelectItem::ExprWithAlias {
                    expr,
                    alias: Ident::with_quote('"', alias),
                };
                changed = true;
            }
            changed
        }
        SetExpr::SetOperation { left, right, .. } => unique_names(left) | unique_names(right),
        SetExpr::Query(q) => unique_names(&mut q.body),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::for_datafusion;

    #[test]
    fn a_field_of_a_computed_value_becomes_a_subscript() {
        let sql = "SELECT (f(i.indkey)).n AS k, (r.keys).x FROM t AS r";
        let out = for_datafusion(sql).unwrap();
        assert!(out.contains("(f(i.indkey))['n']"), "{out}");
        assert!(out.contains("(r.keys)['x']"), "{out}");
    }

    #[test]
    fn a_repeated_output_name_gets_an_alias_of_its_own() {
        let out = for_datafusion("SELECT NULL, NULL, NULL LIMIT 0; SELECT 1").unwrap();
        assert_eq!(
            out,
            "SELECT NULL, NULL AS \"NULL_2\", NULL AS \"NULL_3\" LIMIT 0; SELECT 1"
        );
    }

    #[test]
    fn other_statements_are_left_as_written() {
        assert_eq!(for_datafusion("SELECT t.a, s.t.b FROM s.t"), None);
        assert_eq!(for_datafusion("SELECT a['n'] FROM t"), None);
        assert_eq!(for_datafusion("SELECT a, a, 1 AS x, 2 FROM t"), None);
        assert_eq!(for_datafusion("not sql at all"), None);
    }
}
