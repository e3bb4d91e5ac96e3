//! Rewrites of clients' catalogue queries (psql's meta-commands above all) that DataFusion cannot
//! plan as written, each to a query it plans with the same answer here:
//! - [`array_subqueries`]: PostgreSQL's `ARRAY(SELECT x ...)` constructor becomes the scalar
//!   subquery `(SELECT array_agg(x ...) ...)` (psql's `\du`).
//! - [`empty_catalogue_selects`]: a select that inner-joins a catalogue table without rows
//!   (publications, policies, triggers, indexes...: [`crate::catalogue_tables::EMPTY`]) has no
//!   rows, so it becomes a select of NULLs under its column names with no rows; its expressions
//!   (a `generate_series` bounded by a column in psql's `\d` publication footer, SQLAlchemy's
//!   `unnest` of an index's `int2vector` keys) are then never planned.
//! - [`storage_options`]: the storage options of a table, which datasets do not have.
//! - [`catalogue_lookups`]: a correlated lookup of one catalogue row, aggregated.

use std::ops::ControlFlow;

use datafusion::sql::sqlparser::ast::{
    Expr, FunctionArguments, GroupByExpr, Ident, OrderByKind, Query, Select, SelectItem, SetExpr,
    Statement, TableFactor, Value, Visitor, VisitorMut,
};
use datafusion::sql::sqlparser::dialect::PostgreSqlDialect;
use datafusion::sql::sqlparser::parser::Parser;
use rapid_actors::sql_walk::{rewrite_expressions, Tree};

/// Aggregates, which answer a row even over no rows (then the select is left as it is).
const AGGREGATES: &[&str] = &[
    "count",
    "sum",
    "min",
    "max",
    "avg",
    "array_agg",
    "string_agg",
    "bool_and",
    "bool_or",
    "every",
    "json_agg",
    "jsonb_agg",
    "json_object_agg",
];

pub(crate) fn array_subqueries(statements: &mut Vec<Statement>) -> bool {
    let mut changed = false;
    let _ = rewrite_expressions(statements, &mut |expr| {
        let Expr::Function(f) = expr else {
            return ControlFlow::<()>::Continue(());
        };
        if !f.name.to_string().eq_ignore_ascii_case("array") {
            return ControlFlow::Continue(());
        }
        let FunctionArguments::Subquery(query) = &f.args else {
            return ControlFlow::Continue(());
        };
        if let Some(aggregated) = aggregated(query) {
            *expr = Expr::Subquery(Box::new(aggregated));
            changed = true;
        }
        ControlFlow::Continue(())
    });
    changed
}

/// `SELECT x FROM ... ORDER BY o` as `SELECT array_agg(x ORDER BY o) FROM ...`; None for any
/// other shape (several columns, a set operation, grouping, a limit).
fn aggregated(query: &Query) -> Option<Query> {
    let mut query = query.clone();
    if query.limit_clause.is_some() || query.fetch.is_some() || query.with.is_some() {
        return None;
    }
    let order = query.order_by.take();
    let SetExpr::Select(select) = query.body.as_mut() else {
        return None;
    };
    let no_groups = matches!(&select.group_by, GroupByExpr::Expressions(g, _) if g.is_empty());
    if select.projection.len() != 1 || !no_groups || select.having.is_some() {
        return None;
    }
    let item = match &select.projection[0] {
        SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => e.to_string(),
        _ => return None,
    };
    let mut orders = Vec::new();
    if let Some(order) = order {
        let OrderByKind::Expressions(exprs) = order.kind else {
            return None;
        };
        for o in exprs {
            // `ORDER BY 1`: the one column.
            let positional =
                matches!(&o.expr, Expr::Value(v) if v.value == Value::Number("1".into(), false));
            let text = o.to_string();
            orders.push(match positional {
                true => text.replacen('1', &format!("({item})"), 1),
                false => text,
            });
        }
    }
    let order = match orders.is_empty() {
        true => String::new(),
        false => format!(" ORDER BY {}", orders.join(", ")),
    };
    let agg = Parser::new(&PostgreSqlDialect {})
        .try_with_sql(&format!("array_agg({item}{order})"))
        .ok()?
        .parse_expr()
        .ok()?;
    select.projection = vec![SelectItem::UnnamedExpr(agg)];
    Some(query)
}

/// `pg_class.reloptions`, which the emulation lacks (psql's `\d+` lists a table's storage
/// options from it): datasets have none, so `array_to_string(<options>, sep)` is `''`.
pub(crate) fn storage_options(statements: &mut Vec<Statement>) -> bool {
    let mut changed = false;
    let _ = rewrite_expressions(statements, &mut |expr| {
        let Expr::Function(f) = expr else {
            return ControlFlow::<()>::Continue(());
        };
        let name = f.name.0.last().and_then(|p| p.as_ident());
        let joined = name.is_some_and(|n| n.value.eq_ignore_ascii_case("array_to_string"));
        if joined && f.args.to_string().to_lowercase().contains("reloptions") {
            *expr = Expr::value(Value::SingleQuotedString(String::new()));
            changed = true;
        }
        ControlFlow::Continue(())
    });
    changed
}

/// A scalar subquery that looks one row up in catalogue tables (`(SELECT typcollation FROM
/// pg_type WHERE oid = a.atttypid)`): DataFusion plans a correlated one only when aggregated, so
/// its value becomes `max(value)`, the same over the one row (or none) such a lookup finds.
pub(crate) fn catalogue_lookups(statements: &mut Vec<Statement>) -> bool {
    let mut changed = false;
    let _ = rewrite_expressions(statements, &mut |expr| {
        if let Expr::Subquery(query) = expr {
            changed |= aggregate_lookup(query);
        }
        ControlFlow::<()>::Continue(())
    });
    changed
}

fn aggregate_lookup(query: &mut Query) -> bool {
    if query.limit_clause.is_some() || query.fetch.is_some() || query.with.is_some() {
        return false;
    }
    let SetExpr::Select(select) = query.body.as_mut() else {
        return false;
    };
    let no_groups = matches!(&select.group_by, GroupByExpr::Expressions(g, _) if g.is_empty());
    let catalogue = !select.from.is_empty()
        && select.from.iter().all(|t| {
            is_catalogue_table(&t.relation)
                && t.joins.iter().all(|j| is_catalogue_table(&j.relation))
        });
    if select.projection.len() != 1 || !no_groups || !catalogue || aggregates(&select.projection) {
        return false;
    }
    let (SelectItem::UnnamedExpr(value) | SelectItem::ExprWithAlias { expr: value, .. }) =
        &mut select.projection[0]
    else {
        return false;
    };
    let Ok(max) = Parser::new(&PostgreSqlDialect {})
        .try_with_sql(&format!("max({value})"))
        .and_then(|mut p| p.parse_expr())
    else {
        return false;
    };
    *value = max;
    true
}

pub(crate) fn is_catalogue_table(factor: &TableFactor) -> bool {
    plain_table_parts(factor).is_some_and(|parts| {
        (1..=3).contains(&parts.len())
            && in_pg_catalog(&parts)
            && parts.last().is_some_and(|t| t.starts_with("pg_"))
    })
}

/// The lowercased parts of a plain table's name (no table function arguments).
fn plain_table_parts(factor: &TableFactor) -> Option<Vec<String>> {
    let TableFactor::Table {
        name, args: None, ..
    } = factor
    else {
        return None;
    };
    Some(
        name.0
            .iter()
            .filter_map(|p| p.as_ident().map(|i| i.value.to_lowercase()))
            .collect(),
    )
}

/// Unqualified, or qualified by `pg_catalog` (with or without a database before it).
fn in_pg_catalog(parts: &[String]) -> bool {
    parts.len() < 2 || parts[parts.len() - 2] == "pg_catalog"
}

pub(crate) fn empty_catalogue_selects(statements: &mut Vec<Statement>) -> bool {
    let mut stubs = Stubs { changed: false };
    let _ = statements.rewrite(&mut stubs);
    stubs.changed
}

struct Stubs {
    changed: bool,
}

impl VisitorMut for Stubs {
    type Break = ();

    fn pre_visit_query(&mut self, query: &mut Query) -> ControlFlow<()> {
        let stubbed = stub_body(&mut query.body);
        // A lone select without rows needs no order (its order may name the columns dropped).
        if stubbed && matches!(*query.body, SetExpr::Select(_)) {
            query.order_by = None;
        }
        self.changed |= stubbed;
        ControlFlow::Continue(())
    }
}

fn stub_body(body: &mut SetExpr) -> bool {
    match body {
        SetExpr::Select(select) if always_empty(select) => stub(select),
        SetExpr::SetOperation { left, right, .. } => stub_body(left) | stub_body(right),
        _ => false,
    }
}

fn is_empty_table(factor: &TableFactor) -> bool {
    plain_table_parts(factor).is_some_and(|parts| {
        in_pg_catalog(&parts)
            && parts
                .last()
                .is_some_and(|t| crate::catalogue_tables::EMPTY.contains(&t.as_str()))
    })
}

/// Whether `select` has no rows: it inner-joins an empty catalogue table and neither groups nor
/// aggregates at its own level.
fn always_empty(select: &Select) -> bool {
    use datafusion::sql::sqlparser::ast::JoinOperator as J;
    let empty_source = select.from.iter().any(|t| {
        is_empty_table(&t.relation)
            || t.joins.iter().any(|j| {
                matches!(j.join_operator, J::Join(_) | J::Inner(_) | J::CrossJoin(_))
                    && is_empty_table(&j.relation)
            })
    });
    let no_groups = matches!(&select.group_by, GroupByExpr::Expressions(g, _) if g.is_empty());
    empty_source && no_groups && select.having.is_none() && !aggregates(&select.projection)
}

/// Whether the select list calls an aggregate at its own level (not inside a subquery).
fn aggregates(items: &[SelectItem]) -> bool {
    struct Finder {
        depth: usize,
        found: bool,
    }
    impl Visitor for Finder {
        type Break = ();
        fn pre_visit_query(&mut self, _: &Query) -> ControlFlow<()> {
            self.depth += 1;
            ControlFlow::Continue(())
        }
        fn post_visit_query(&mut self, _: &Query) -> ControlFlow<()> {
            self.depth -= 1;
            ControlFlow::Continue(())
        }
        fn pre_visit_expr(&mut self, expr: &Expr) -> ControlFlow<()> {
            if let (0, Expr::Function(f)) = (self.depth, expr) {
                let name = f
                    .name
                    .0
                    .last()
                    .and_then(|p| p.as_ident())
                    .map(|i| i.value.to_lowercase());
                self.found |=
                    f.over.is_some() || name.is_some_and(|n| AGGREGATES.contains(&n.as_str()));
            }
            ControlFlow::Continue(())
        }
    }
    let mut finder = Finder {
        depth: 0,
        found: false,
    };
    for item in items {
        let _ = item.walk(&mut finder);
    }
    finder.found
}

/// `select` as `SELECT NULL AS name, ... WHERE false`, its names kept (a wildcard: left as is).
fn stub(select: &mut Select) -> bool {
    let mut items = Vec::with_capacity(select.projection.len());
    for item in &select.projection {
        let name = match item {
            SelectItem::ExprWithAlias { alias, .. } => alias.clone(),
            SelectItem::UnnamedExpr(Expr::Identifier(i)) => i.clone(),
            SelectItem::UnnamedExpr(Expr::CompoundIdentifier(parts)) => match parts.last() {
                Some(i) => i.clone(),
                None => return false,
            },
            SelectItem::UnnamedExpr(e) => Ident::with_quote('"', e.to_string()),
            _ => return false,
        };
        items.push(SelectItem::ExprWithAlias {
            expr: Expr::value(Value::Null),
            alias: name,
        });
    }
    // The parameters the dropped parts bound stay in the statement (with their casts), so the
    // client's parameters still line up with the statement's.
    let mut kept = vec!["false".to_string()];
    kept.extend(
        placeholders(select)
            .iter()
            .map(|p| format!("({p} IS NULL OR true)")),
    );
    let Ok(selection) = Parser::new(&PostgreSqlDialect {})
        .try_with_sql(&kept.join(" AND "))
        .and_then(|mut p| p.parse_expr())
    else {
        return false;
    };
    select.projection = items;
    select.from.clear();
    select.selection = Some(selection);
    true
}

/// The parameters `node` binds, each as written (`$2::VARCHAR`, or `$2` when never cast).
pub(crate) fn placeholders(node: &(impl Tree + ?Sized)) -> Vec<String> {
    #[derive(Default)]
    struct Finder {
        cast: Vec<(String, String)>,
        bare: Vec<String>,
    }
    impl Visitor for Finder {
        type Break = ();
        fn pre_visit_expr(&mut self, expr: &Expr) -> ControlFlow<()> {
            let name = |e: &Expr| match e {
                Expr::Value(v) => match &v.value {
                    Value::Placeholder(p) => Some(p.clone()),
                    _ => None,
                },
                _ => None,
            };
            match expr {
                Expr::Cast { expr: inner, .. } => {
                    if let Some(p) = name(inner) {
                        self.cast.push((p, expr.to_string()));
                    }
                }
                e => self.bare.extend(name(e)),
            }
            ControlFlow::Continue(())
        }
    }
    let mut finder = Finder::default();
    let _ = node.walk(&mut finder);
    let mut out: Vec<String> = finder.cast.iter().map(|(_, text)| text.clone()).collect();
    for p in finder.bare {
        if !finder.cast.iter().any(|(c, _)| *c == p) && !out.contains(&p) {
            out.push(p);
        }
    }
    out
}

#[cfg(test)]
#[path = "catalog_rewrites_tests.rs"]
mod tests;
