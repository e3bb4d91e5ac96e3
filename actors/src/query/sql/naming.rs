//! One naming rule for the unaliased expressions of a statement's answer, on `POST /api/sql` and
//! the PostgreSQL wire alike: named as written, as `/query` names them and DuckDB does
//! (`qty + -37`, `count(*)`), never with DataFusion's internal form
//! (`default.qdiff.kinds.qty + Int64(-37)`). Each gets that name as its alias before planning; a
//! name the answer already has gets `_2`, `_3`... (PostgreSQL lets a select list repeat a name,
//! DataFusion does not).

use std::collections::HashSet;

use datafusion::sql::sqlparser::ast::{Expr, Ident, Query, SelectItem, SetExpr, Statement, Value};

use crate::query::language::naming::normalised_name;

/// Names the unaliased expressions of each query in `statements` (their outermost select lists:
/// only those name the answer's columns). Whether any was named.
pub fn name_as_written(statements: &mut [Statement]) -> bool {
    let mut changed = false;
    for statement in statements {
        if let Statement::Query(query) = statement {
            changed |= name_query(query);
        }
    }
    changed
}

fn name_query(query: &mut Query) -> bool {
    name_body(&mut query.body)
}

fn name_body(body: &mut SetExpr) -> bool {
    match body {
        SetExpr::Select(select) => name_items(&mut select.projection),
        SetExpr::SetOperation { left, right, .. } => name_body(left) | name_body(right),
        SetExpr::Query(q) => name_query(q),
        _ => false,
    }
}

/// A column reference, which DataFusion already names by the column alone.
fn is_column(expr: &Expr) -> bool {
    match expr {
        Expr::Identifier(_) | Expr::CompoundIdentifier(_) => true,
        Expr::Nested(inner) => is_column(inner),
        _ => false,
    }
}

fn name_items(items: &mut [SelectItem]) -> bool {
    let named = |item: &SelectItem| match item {
        SelectItem::ExprWithAlias { alias, .. } => Some(alias.value.to_lowercase()),
        SelectItem::UnnamedExpr(Expr::Identifier(i)) => Some(i.value.to_lowercase()),
        SelectItem::UnnamedExpr(Expr::CompoundIdentifier(parts)) => {
            parts.last().map(|i| i.value.to_lowercase())
        }
        _ => None,
    };
    let mut taken: HashSet<String> = items.iter().filter_map(named).collect();
    let mut changed = false;
    for item in items.iter_mut() {
        let SelectItem::UnnamedExpr(expr) = item else {
            continue;
        };
        if is_column(expr) {
            continue;
        }
        let written = normalised_name(expr);
        let name = std::iter::once(written.clone())
            .chain((2..).map(|n| format!("{written}_{n}")))
            .find(|n| !taken.contains(&n.to_lowercase()))
            .unwrap_or_default();
        taken.insert(name.to_lowercase());
        let expr = std::mem::replace(expr, Expr::value(Value::Null));
        *item = SelectItem::ExprWithAlias {
            expr,
            alias: Ident::with_quote('"', name),
        };
        changed = true;
    }
    changed
}

#[cfg(test)]
mod tests {
    use datafusion::sql::sqlparser::dialect::PostgreSqlDialect;
    use datafusion::sql::sqlparser::parser::Parser;

    use super::name_as_written;

    fn named(sql: &str) -> Option<String> {
        let mut statements = Parser::parse_sql(&PostgreSqlDialect {}, sql).unwrap();
        name_as_written(&mut statements).then(|| statements[0].to_string())
    }

    #[test]
    fn an_unaliased_expression_is_named_as_written() {
        assert_eq!(
            named("SELECT nothing, (qty + (-37)), COUNT(*) FROM t").unwrap(),
            "SELECT nothing, (qty + (-37)) AS \"(qty + (-37))\", COUNT(*) AS \"count(*)\" FROM t"
        );
    }

    #[test]
    fn a_repeated_name_gets_a_number_and_columns_keep_theirs() {
        assert_eq!(
            named("SELECT NULL, NULL, 1 AS \"NULL_2\" LIMIT 0").unwrap(),
            "SELECT NULL AS \"NULL\", NULL AS \"NULL_3\", 1 AS \"NULL_2\" LIMIT 0"
        );
        assert_eq!(named("SELECT t.a, b AS c, (d) FROM t"), None);
        assert_eq!(named("EXPLAIN SELECT a + 1 FROM t"), None);
    }
}
