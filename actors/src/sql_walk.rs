//! Walks over sqlparser's syntax trees, compiled once.
//!
//! sqlparser derives its traversal (`Visit`, `VisitMut`) generically over the visitor, so each
//! visitor type compiled its own copy of the walk over every node type the root reaches: a
//! statement or an expression reaches nearly all of the syntax (subqueries), several hundred
//! functions. Twenty-seven visitor types (rewrites in rapid-sqlwire, checks here) made those
//! copies most of rapid-sqlwire's code and build time (docs/DESIGN.md, "Build timings").
//!
//! Here every walk goes through one reading and one rewriting wrapper around a trait object, so
//! the traversal is compiled once each, in this crate; a visitor is an ordinary
//! `Visitor<Break = ()>` or `VisitorMut<Break = ()>` reached by dynamic calls (a few per node,
//! on trees of at most a few thousand nodes). A visitor that stops with a value keeps it in a
//! field and breaks with `()`.

use std::ops::ControlFlow;

use datafusion::sql::sqlparser::ast::{
    Expr, ObjectName, Query, Select, SelectItem, Statement, TableFactor, ValueWithSpan, Visit,
    VisitMut, Visitor, VisitorMut,
};

/// Where a walk can start. The methods are not generic, so callers in other crates use this
/// crate's one copy of the traversal.
pub trait Tree {
    /// Visits the tree with `visitor` (sqlparser's order: `pre_` before a node's children,
    /// `post_` after), stopping at the first `Break`.
    fn walk(&self, visitor: &mut dyn Visitor<Break = ()>) -> ControlFlow<()>;
    /// The same over a tree the visitor may change in place.
    fn rewrite(&mut self, visitor: &mut dyn VisitorMut<Break = ()>) -> ControlFlow<()>;
}

macro_rules! tree {
    ($($node:ty),*) => {$(
        impl Tree for $node {
            #[inline(never)]
            fn walk(&self, visitor: &mut dyn Visitor<Break = ()>) -> ControlFlow<()> {
                self.visit(&mut Reading(visitor))
            }
            #[inline(never)]
            fn rewrite(&mut self, visitor: &mut dyn VisitorMut<Break = ()>) -> ControlFlow<()> {
                self.visit(&mut Rewriting(visitor))
            }
        }
    )*};
}

tree!(Statement, Query, Select, SelectItem, Expr);

impl Tree for [Statement] {
    fn walk(&self, visitor: &mut dyn Visitor<Break = ()>) -> ControlFlow<()> {
        self.iter().try_for_each(|s| s.walk(visitor))
    }
    fn rewrite(&mut self, visitor: &mut dyn VisitorMut<Break = ()>) -> ControlFlow<()> {
        self.iter_mut().try_for_each(|s| s.rewrite(visitor))
    }
}

impl Tree for Vec<Statement> {
    fn walk(&self, visitor: &mut dyn Visitor<Break = ()>) -> ControlFlow<()> {
        self[..].walk(visitor)
    }
    fn rewrite(&mut self, visitor: &mut dyn VisitorMut<Break = ()>) -> ControlFlow<()> {
        self[..].rewrite(visitor)
    }
}

/// Calls `f` on every expression of `tree`, children before their parent (as sqlparser's
/// `visit_expressions_mut`), so `f` may replace the expression it is given.
pub fn rewrite_expressions(
    tree: &mut (impl Tree + ?Sized),
    f: &mut dyn FnMut(&mut Expr) -> ControlFlow<()>,
) -> ControlFlow<()> {
    tree.rewrite(&mut EachExpr(f))
}

struct EachExpr<'a>(&'a mut dyn FnMut(&mut Expr) -> ControlFlow<()>);

impl VisitorMut for EachExpr<'_> {
    type Break = ();
    fn post_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<()> {
        (self.0)(expr)
    }
}

/// The one reading visitor type the traversal is compiled for.
struct Reading<'a>(&'a mut dyn Visitor<Break = ()>);

/// The one rewriting visitor type the traversal is compiled for.
struct Rewriting<'a>(&'a mut dyn VisitorMut<Break = ()>);

/// Forwards every method of sqlparser's visitor traits to the trait object.
macro_rules! forward {
    ($($method:ident($node:ty)),*) => {$(
        fn $method(&mut self, node: $node) -> ControlFlow<()> {
            self.0.$method(node)
        }
    )*};
}

impl Visitor for Reading<'_> {
    type Break = ();
    forward!(
        pre_visit_query(&Query),
        post_visit_query(&Query),
        pre_visit_select(&Select),
        post_visit_select(&Select),
        pre_visit_relation(&ObjectName),
        post_visit_relation(&ObjectName),
        pre_visit_table_factor(&TableFactor),
        post_visit_table_factor(&TableFactor),
        pre_visit_expr(&Expr),
        post_visit_expr(&Expr),
        pre_visit_statement(&Statement),
        post_visit_statement(&Statement),
        pre_visit_value(&ValueWithSpan),
        post_visit_value(&ValueWithSpan)
    );
}

impl VisitorMut for Rewriting<'_> {
    type Break = ();
    forward!(
        pre_visit_query(&mut Query),
        post_visit_query(&mut Query),
        pre_visit_select(&mut Select),
        post_visit_select(&mut Select),
        pre_visit_relation(&mut ObjectName),
        post_visit_relation(&mut ObjectName),
        pre_visit_table_factor(&mut TableFactor),
        post_visit_table_factor(&mut TableFactor),
        pre_visit_expr(&mut Expr),
        post_visit_expr(&mut Expr),
        pre_visit_statement(&mut Statement),
        post_visit_statement(&mut Statement),
        pre_visit_value(&mut ValueWithSpan),
        post_visit_value(&mut ValueWithSpan)
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::sql::sqlparser::ast::Value;
    use datafusion::sql::sqlparser::dialect::GenericDialect;
    use datafusion::sql::sqlparser::parser::Parser;

    fn parse(sql: &str) -> Vec<Statement> {
        Parser::parse_sql(&GenericDialect {}, sql).unwrap()
    }

    /// Records the order of the calls it gets, to compare with sqlparser's own walk.
    #[derive(Default)]
    struct Order(Vec<String>);

    impl Visitor for Order {
        type Break = ();
        fn pre_visit_query(&mut self, q: &Query) -> ControlFlow<()> {
            self.0.push(format!("query {q}"));
            ControlFlow::Continue(())
        }
        fn pre_visit_relation(&mut self, r: &ObjectName) -> ControlFlow<()> {
            self.0.push(format!("relation {r}"));
            ControlFlow::Continue(())
        }
        fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
            self.0.push(format!("pre {e}"));
            ControlFlow::Continue(())
        }
        fn post_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
            self.0.push(format!("post {e}"));
            if e.to_string() == "stop" {
                return ControlFlow::Break(());
            }
            ControlFlow::Continue(())
        }
    }

    #[test]
    fn the_erased_walk_calls_the_visitor_as_sqlparsers_own_walk() {
        let sql = "SELECT a + 1, (SELECT max(b) FROM t2 WHERE c = stop) FROM t1 WHERE d IN (1, 2)";
        let statements = parse(sql);
        let mut direct = Order::default();
        let direct_flow = statements.visit(&mut direct);
        let mut erased = Order::default();
        let erased_flow = statements[..].walk(&mut erased);
        assert!(direct.0.len() > 10, "{:?}", direct.0);
        assert_eq!(erased.0, direct.0);
        assert_eq!(erased_flow, direct_flow);
        assert!(erased_flow.is_break(), "the visitor stopped at `stop`");
    }

    #[test]
    fn expressions_are_rewritten_children_first() {
        let mut statements = parse("SELECT f(x + 1) FROM t WHERE y = 2");
        let mut seen = Vec::new();
        let _ = rewrite_expressions(&mut statements[..], &mut |e| {
            seen.push(e.to_string());
            if let Expr::Value(v) = e {
                if v.value == Value::Number("1".into(), false) {
                    *e = Expr::value(Value::Number("10".into(), false));
                }
            }
            ControlFlow::Continue(())
        });
        assert_eq!(
            statements[0].to_string(),
            "SELECT f(x + 10) FROM t WHERE y = 2"
        );
        let x = seen.iter().position(|s| s == "x").unwrap();
        let sum = seen.iter().position(|s| s == "x + 10").unwrap();
        assert!(x < sum, "a child comes before its parent: {seen:?}");
    }
}
