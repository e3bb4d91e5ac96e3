//! Parameters inside a subquery of a select list. The library's `RemoveSubqueryFromProjection`
//! replaces such a subquery with NULL when it deems it correlated, and it deems any parameter a
//! correlation; the parameters it bound then vanish from the statement, and those after them
//! no longer line up with the client's (SQLAlchemy's column reflection binds 21, ten of them in
//! such subqueries: the eleventh value was read as the first's type). So each select keeps every
//! parameter of its select list's subqueries in its own filter, as a condition that is always
//! true: `WHERE (...) AND ($2::VARCHAR IS NULL OR true)`.

use std::ops::ControlFlow;

use datafusion::sql::sqlparser::ast::{
    BinaryOperator, Expr, Query, SelectItem, SetExpr, Statement, VisitorMut,
};
use datafusion::sql::sqlparser::dialect::PostgreSqlDialect;
use datafusion::sql::sqlparser::parser::Parser;

use crate::catalog_rewrites::placeholders;
use rapid_actors::sql_walk::Tree;

/// Keeps the parameters of select-list subqueries in each select of `statements`; whether any.
pub(crate) fn keep(statements: &mut Vec<Statement>) -> bool {
    struct Keep(bool);
    impl VisitorMut for Keep {
        type Break = ();
        fn post_visit_query(&mut self, query: &mut Query) -> ControlFlow<()> {
            if let SetExpr::Select(select) = query.body.as_mut() {
                let mut bound = Vec::new();
                for item in &select.projection {
                    // Only a subquery that is the item itself is nulled by the rule (one shielded
                    // by `projection_subqueries` keeps its parameters where they are).
                    if let SelectItem::UnnamedExpr(e @ Expr::Subquery(_))
                    | SelectItem::ExprWithAlias {
                        expr: e @ Expr::Subquery(_),
                        ..
                    } = item
                    {
                        in_subqueries(e, &mut bound);
                    }
                }
                if let Some(kept) = always_true(&bound) {
                    select.selection = Some(match select.selection.take() {
                        Some(p) => Expr::BinaryOp {
                            left: Box::new(Expr::Nested(Box::new(p))),
                            op: BinaryOperator::And,
                            right: Box::new(kept),
                        },
                        None => kept,
                    });
                    self.0 = true;
                }
            }
            ControlFlow::Continue(())
        }
    }
    let mut keep = Keep(false);
    let _ = statements.rewrite(&mut keep);
    keep.0
}

/// The parameters bound inside the subqueries of `expr`, added to `bound`.
fn in_subqueries(expr: &Expr, bound: &mut Vec<String>) {
    use datafusion::sql::sqlparser::ast::Visitor;
    struct Subqueries<'a>(&'a mut Vec<String>);
    impl Visitor for Subqueries<'_> {
        type Break = ();
        fn pre_visit_expr(&mut self, expr: &Expr) -> ControlFlow<()> {
            if let Expr::Subquery(query) = expr {
                for p in placeholders(query.as_ref()) {
                    if !self.0.contains(&p) {
                        self.0.push(p);
                    }
                }
            }
            ControlFlow::Continue(())
        }
    }
    let _ = expr.walk(&mut Subqueries(bound));
}

/// `(p1 IS NULL OR true) AND ...`, or None for no parameter.
fn always_true(bound: &[String]) -> Option<Expr> {
    if bound.is_empty() {
        return None;
    }
    let text: Vec<String> = bound
        .iter()
        .map(|p| format!("({p} IS NULL OR true)"))
        .collect();
    Parser::new(&PostgreSqlDialect {})
        .try_with_sql(&text.join(" AND "))
        .and_then(|mut p| p.parse_expr())
        .ok()
}

#[cfg(test)]
mod tests {
    use datafusion::sql::sqlparser::dialect::PostgreSqlDialect;
    use datafusion::sql::sqlparser::parser::Parser;

    fn kept(sql: &str) -> Option<String> {
        let mut statements = Parser::parse_sql(&PostgreSqlDialect {}, sql).unwrap();
        super::keep(&mut statements).then(|| statements[0].to_string())
    }

    #[test]
    fn parameters_of_select_list_subqueries_stay_in_the_filter() {
        assert_eq!(
            kept(
                "SELECT a, (SELECT max(x) FROM t WHERE y <> $1::VARCHAR) AS m FROM s WHERE b = $2"
            )
            .as_deref(),
            Some(
                "SELECT a, (SELECT max(x) FROM t WHERE y <> $1::VARCHAR) AS m FROM s \
                 WHERE (b = $2) AND ($1::VARCHAR IS NULL OR true)"
            )
        );
        assert_eq!(
            kept("SELECT (SELECT $3) AS m").as_deref(),
            Some("SELECT (SELECT $3) AS m WHERE ($3 IS NULL OR true)")
        );
        // No parameter in a select-list subquery: left as written.
        assert_eq!(
            kept("SELECT a FROM s WHERE a IN (SELECT x FROM t WHERE y = $1)"),
            None
        );
        assert_eq!(kept("SELECT (SELECT max(x) FROM t) AS m, $1 AS p"), None);
    }
}
