//! A select-list subquery over datasets is planned, never answered NULL. The library's
//! `RemoveSubqueryFromProjection` replaces a select-list subquery with NULL when it holds a
//! parameter or a qualified column that is not one of its own aliases: meant for the catalogue
//! queries of clients (correlated lookups DataFusion cannot plan), it also answered NULL, with no
//! error, to `SELECT (SELECT max(t.year) FROM travel.trips t WHERE t.region = o.region) FROM
//! travel.trips o` or to a subquery bound to a parameter. Such a subquery that reads no catalogue
//! table is put in parentheses once more: no longer the select item the rule rewrites, it reaches
//! DataFusion as written, which answers it or refuses it with an error.

use std::collections::HashSet;
use std::ops::ControlFlow;

use datafusion::sql::sqlparser::ast::{
    Expr, ObjectNamePart, Query, SelectItem, SetExpr, Statement, TableFactor, Value, Visitor,
    VisitorMut,
};
use rapid_actors::sql_walk::Tree;

/// Shields the subqueries the rule would answer NULL in each select of `statements`; whether any.
pub(crate) fn shield(statements: &mut Vec<Statement>) -> bool {
    struct Shield(bool);
    impl VisitorMut for Shield {
        type Break = ();
        fn pre_visit_query(&mut self, query: &mut Query) -> ControlFlow<()> {
            if let SetExpr::Select(select) = query.body.as_mut() {
                for item in &mut select.projection {
                    if let SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } =
                        item
                    {
                        if let Expr::Subquery(sub) = e {
                            if nulled_by_the_rule(sub) && reads_only_datasets(sub) {
                                *e = Expr::Nested(Box::new(e.clone()));
                                self.0 = true;
                            }
                        }
                    }
                }
            }
            ControlFlow::Continue(())
        }
    }
    let mut shield = Shield(false);
    let _ = statements.rewrite(&mut shield);
    shield.0
}

/// The library's test: a parameter anywhere in the subquery, or a qualified column whose
/// qualifier is not an alias given in its FROM.
fn nulled_by_the_rule(query: &Query) -> bool {
    let SetExpr::Select(select) = query.body.as_ref() else {
        return false;
    };
    let mut aliases = HashSet::new();
    for from in &select.from {
        for factor in std::iter::once(&from.relation).chain(from.joins.iter().map(|j| &j.relation))
        {
            if let TableFactor::Table {
                alias: Some(alias), ..
            } = factor
            {
                aliases.insert(alias.name.value.clone());
            }
        }
    }
    struct Correlated<'a>(&'a HashSet<String>, bool);
    impl Visitor for Correlated<'_> {
        type Break = ();
        fn pre_visit_expr(&mut self, expr: &Expr) -> ControlFlow<()> {
            match expr {
                Expr::Value(v) if matches!(v.value, Value::Placeholder(_)) => self.1 = true,
                Expr::CompoundIdentifier(parts) if !parts.is_empty() => {
                    self.1 |= !self.0.contains(&parts[0].value);
                }
                _ => {}
            }
            ControlFlow::Continue(())
        }
    }
    let mut check = Correlated(&aliases, false);
    let _ = query.walk(&mut check);
    check.1
}

/// Whether every table `query` names is outside the catalogue (`pg_catalog`,
/// `information_schema`, an unqualified `pg_*` name), and it names at least one.
fn reads_only_datasets(query: &Query) -> bool {
    struct Tables {
        any: bool,
        catalogue: bool,
    }
    impl Visitor for Tables {
        type Break = ();
        fn pre_visit_relation(
            &mut self,
            name: &datafusion::sql::sqlparser::ast::ObjectName,
        ) -> ControlFlow<()> {
            let parts: Vec<String> = name
                .0
                .iter()
                .map(|p| match p {
                    ObjectNamePart::Identifier(i) => i.value.to_ascii_lowercase(),
                    other => other.to_string().to_ascii_lowercase(),
                })
                .collect();
            self.any = true;
            self.catalogue |= parts
                .iter()
                .any(|p| p == "pg_catalog" || p == "information_schema")
                || (parts.len() == 1 && parts[0].starts_with("pg_"));
            ControlFlow::Continue(())
        }
    }
    let mut tables = Tables {
        any: false,
        catalogue: false,
    };
    let _ = query.walk(&mut tables);
    tables.any && !tables.catalogue
}

#[cfg(test)]
mod tests {
    use datafusion::sql::sqlparser::dialect::PostgreSqlDialect;
    use datafusion::sql::sqlparser::parser::Parser;

    fn shielded(sql: &str) -> Option<String> {
        let mut statements = Parser::parse_sql(&PostgreSqlDialect {}, sql).unwrap();
        super::shield(&mut statements).then(|| statements[0].to_string())
    }

    #[test]
    fn dataset_subqueries_the_rule_would_null_are_shielded() {
        assert_eq!(
            shielded(
                "SELECT (SELECT max(t.year) FROM travel.trips AS t WHERE t.region = o.region) AS m \
                 FROM travel.trips AS o"
            )
            .as_deref(),
            Some(
                "SELECT ((SELECT max(t.year) FROM travel.trips AS t WHERE t.region = o.region)) \
                 AS m FROM travel.trips AS o"
            )
        );
        assert_eq!(
            shielded("SELECT (SELECT max(year) FROM travel.trips WHERE year <> $1)").as_deref(),
            Some("SELECT ((SELECT max(year) FROM travel.trips WHERE year <> $1))")
        );
        // Not correlated: left to the rule (it bounds it to one row).
        assert_eq!(
            shielded("SELECT (SELECT max(year) FROM travel.trips)"),
            None
        );
        // The catalogue's lookups stay the rule's to answer.
        assert_eq!(
            shielded(
                "SELECT (SELECT d.description FROM pg_catalog.pg_description d \
                 WHERE d.objoid = c.oid) FROM pg_catalog.pg_class c"
            ),
            None
        );
        assert_eq!(
            shielded("SELECT (SELECT typname FROM pg_type WHERE oid = $1)"),
            None
        );
    }
}
