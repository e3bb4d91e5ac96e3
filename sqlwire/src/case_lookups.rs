//! `CASE WHEN c THEN (SELECT v FROM <catalogue tables> WHERE p) END`: a lookup in catalogue
//! tables taken only when a condition holds (SQLAlchemy's column reflection asks so for each
//! column's default, identity and collation). DataFusion plans a correlated scalar subquery at
//! the top of a select item only, never inside CASE ("Physical plan does not support logical
//! expression ScalarSubquery"), so the condition moves into the lookup:
//! `(SELECT v FROM ... WHERE (p) AND (c))`. The answer is the same: when `c` holds the lookup
//! finds what it found, otherwise no row, which is NULL, the CASE's ELSE.
//!
//! A lookup of a truth value in a filter (`WHERE t.typrelid = 0 OR (SELECT c.relkind = 'c' FROM
//! pg_class c WHERE c.oid = t.typrelid)`, the JDBC driver's `getTypeInfo`) is no more planned
//! under OR; there it becomes `EXISTS (SELECT 1 FROM ... WHERE (p) AND (v))`: a filter keeps a row
//! when the value is true, and drops it alike when it is false, NULL or not found.

use std::ops::ControlFlow;

use datafusion::sql::sqlparser::ast::{
    BinaryOperator, CaseWhen, Expr, Query, SelectItem, SetExpr, Statement, Value, VisitorMut,
};

use crate::catalog_rewrites::is_catalogue_table;
use rapid_actors::sql_walk::{rewrite_expressions, Tree};

/// Folds each such CASE of `statements` into its lookup; whether any.
pub(crate) fn fold(statements: &mut Vec<Statement>) -> bool {
    let mut changed = false;
    let _ = rewrite_expressions(statements, &mut |expr| {
        if let Some(folded) = folded(expr) {
            *expr = folded;
            changed = true;
        }
        ControlFlow::<()>::Continue(())
    });
    changed
}

/// Turns each truth-value lookup in a filter of `statements` into EXISTS; whether any.
pub(crate) fn filter_lookups(statements: &mut Vec<Statement>) -> bool {
    struct Filters(bool);
    impl VisitorMut for Filters {
        type Break = ();
        fn pre_visit_query(&mut self, query: &mut Query) -> ControlFlow<()> {
            if let SetExpr::Select(select) = query.body.as_mut() {
                if let Some(filter) = select.selection.as_mut() {
                    self.0 |= in_predicate(filter);
                }
            }
            ControlFlow::Continue(())
        }
    }
    let mut filters = Filters(false);
    let _ = statements.rewrite(&mut filters);
    filters.0
}

/// Rewrites the lookups of `expr`, a predicate, where its truth is the filter's: itself, and the
/// operands of its AND and OR (never under NOT, where false and NULL differ).
fn in_predicate(expr: &mut Expr) -> bool {
    match expr {
        Expr::BinaryOp {
            left,
            op: BinaryOperator::And | BinaryOperator::Or,
            right,
        } => in_predicate(left) | in_predicate(right),
        Expr::Nested(inner) => in_predicate(inner),
        Expr::Subquery(query) if is_lookup(query) => {
            let mut query = query.clone();
            let SetExpr::Select(select) = query.body.as_mut() else {
                return false;
            };
            let (SelectItem::UnnamedExpr(value) | SelectItem::ExprWithAlias { expr: value, .. }) =
                select.projection.remove(0)
            else {
                return false;
            };
            select.projection = vec![SelectItem::UnnamedExpr(Expr::value(Value::Number(
                "1".into(),
                false,
            )))];
            and_into(select, value);
            *expr = Expr::Exists {
                subquery: query,
                negated: false,
            };
            true
        }
        _ => false,
    }
}

/// `select`'s filter and `condition`, both.
fn and_into(select: &mut datafusion::sql::sqlparser::ast::Select, condition: Expr) {
    let condition = Expr::Nested(Box::new(condition));
    select.selection = Some(match select.selection.take() {
        Some(p) => Expr::BinaryOp {
            left: Box::new(Expr::Nested(Box::new(p))),
            op: BinaryOperator::And,
            right: Box::new(condition),
        },
        None => condition,
    });
}

/// The lookup with the condition in it, when `expr` is a CASE of one condition whose result is a
/// lookup in catalogue tables and whose ELSE is NULL or absent.
fn folded(expr: &Expr) -> Option<Expr> {
    let Expr::Case {
        operand: None,
        conditions,
        else_result,
        ..
    } = expr
    else {
        return None;
    };
    let null_else = match else_result.as_deref() {
        None => true,
        Some(Expr::Value(v)) => v.value == Value::Null,
        Some(_) => false,
    };
    let [CaseWhen { condition, result }] = conditions.as_slice() else {
        return None;
    };
    let Expr::Subquery(query) = result else {
        return None;
    };
    if !null_else || !is_lookup(query) {
        return None;
    }
    let mut query = query.clone();
    let SetExpr::Select(select) = query.body.as_mut() else {
        return None;
    };
    and_into(select, condition.clone());
    Some(Expr::Subquery(query))
}

/// A plain select of one value from catalogue tables only.
fn is_lookup(query: &Query) -> bool {
    let plain = query.with.is_none()
        && query.limit_clause.is_none()
        && query.fetch.is_none()
        && query.order_by.is_none();
    let SetExpr::Select(select) = query.body.as_ref() else {
        return false;
    };
    plain
        && select.projection.len() == 1
        && select.having.is_none()
        && !select.from.is_empty()
        && select.from.iter().all(|t| {
            is_catalogue_table(&t.relation)
                && t.joins.iter().all(|j| is_catalogue_table(&j.relation))
        })
}

#[cfg(test)]
mod tests {
    use datafusion::sql::sqlparser::dialect::PostgreSqlDialect;
    use datafusion::sql::sqlparser::parser::Parser;

    fn folded(sql: &str) -> Option<String> {
        let mut statements = Parser::parse_sql(&PostgreSqlDialect {}, sql).unwrap();
        super::fold(&mut statements).then(|| statements[0].to_string())
    }

    #[test]
    fn a_conditional_lookup_takes_its_condition_in() {
        let out = folded(
            "SELECT CASE WHEN a.atthasdef THEN (SELECT d.adbin FROM pg_catalog.pg_attrdef AS d \
             WHERE d.adrelid = a.attrelid) ELSE NULL END AS dflt FROM pg_attribute AS a",
        );
        assert_eq!(
            out.as_deref(),
            Some(
                "SELECT (SELECT d.adbin FROM pg_catalog.pg_attrdef AS d \
                 WHERE (d.adrelid = a.attrelid) AND (a.atthasdef)) AS dflt \
                 FROM pg_attribute AS a"
            )
        );
        let out = folded("SELECT CASE WHEN x THEN (SELECT typname FROM pg_type) END FROM t");
        assert_eq!(
            out.as_deref(),
            Some("SELECT (SELECT typname FROM pg_type WHERE (x)) FROM t")
        );
    }

    #[test]
    fn a_truth_value_lookup_in_a_filter_becomes_exists() {
        let mut statements = Parser::parse_sql(
            &PostgreSqlDialect {},
            "SELECT t.typname FROM pg_type AS t WHERE t.typrelid = 0 OR \
             (SELECT c.relkind = 'c' FROM pg_catalog.pg_class AS c WHERE c.oid = t.typrelid)",
        )
        .unwrap();
        assert!(super::filter_lookups(&mut statements));
        assert_eq!(
            statements[0].to_string(),
            "SELECT t.typname FROM pg_type AS t WHERE t.typrelid = 0 OR EXISTS (SELECT 1 \
             FROM pg_catalog.pg_class AS c WHERE (c.oid = t.typrelid) AND (c.relkind = 'c'))"
        );
        // Under NOT, false and NULL differ: left as written.
        let mut statements = Parser::parse_sql(
            &PostgreSqlDialect {},
            "SELECT 1 FROM t WHERE NOT (SELECT c.x FROM pg_class AS c WHERE c.oid = t.r)",
        )
        .unwrap();
        assert!(!super::filter_lookups(&mut statements));
    }

    #[test]
    fn other_cases_are_left_as_written() {
        // An ELSE of its own, two conditions, a dataset's table, a value that is no lookup.
        for sql in [
            "SELECT CASE WHEN x THEN (SELECT typname FROM pg_type) ELSE 'none' END FROM t",
            "SELECT CASE WHEN x THEN (SELECT typname FROM pg_type) WHEN y THEN NULL END FROM t",
            "SELECT CASE WHEN x THEN (SELECT max(n) FROM travel.trips) END FROM t",
            "SELECT CASE WHEN x THEN 1 END FROM t",
        ] {
            assert_eq!(folded(sql), None, "{sql}");
        }
    }
}
