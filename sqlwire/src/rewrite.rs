//! PostgreSQL syntax the library's parser accepts but DataFusion cannot plan, rewritten to its
//! DataFusion spelling before the statement reaches the library. A statement that needs none of
//! it reaches the library as the client wrote it.

use std::collections::HashSet;
use std::ops::ControlFlow;

use datafusion::sql::sqlparser::ast::{
    AccessExpr, Expr, Function, FunctionArg, FunctionArgExpr, FunctionArgumentList,
    FunctionArguments, Ident, ObjectName, Query, SelectItem, SetExpr, Statement, Subscript, Value,
    VisitorMut,
};
use datafusion::sql::sqlparser::dialect::PostgreSqlDialect;
use datafusion::sql::sqlparser::parser::Parser;

use rapid_actors::engine::sql::{chrono_patterns, name_as_written};

use datafusion_postgres::datafusion_pg_catalog::sql::PostgresCompatibilityParser;

use crate::{
    case_lookups, catalog_rewrites, catalogue_tables, ctid, like_escape, pg_types,
    projection_parameters, projection_subqueries, regproc_names,
};
use rapid_actors::sql_walk::{rewrite_expressions, Tree};

/// The statements of `sql` rewritten, or None when none of the rewrites applies (or the text does
/// not parse, which the library then reports).
///
/// `library` and its reading of `sql` (`by_library`): a statement it replaces whole (its
/// stand-ins for client queries it knows DataFusion cannot plan) is left to it, as written.
pub(crate) fn for_datafusion(
    sql: &str,
    library: &PostgresCompatibilityParser,
    by_library: &[Statement],
) -> Option<String> {
    let mut statements = Parser::parse_sql(&PostgreSqlDialect {}, sql).ok()?;
    let ruled: Vec<Statement> = statements
        .iter()
        .map(|s| library.rewrite(s.clone()))
        .collect();
    if ruled != by_library {
        return None;
    }
    let mut changed = composite_fields(&mut statements);
    changed |= show_timezone(&mut statements);
    changed |= crate::meta_functions::unevaluated_descriptions(&mut statements);
    changed |= catalog_rewrites::array_subqueries(&mut statements);
    changed |= catalog_rewrites::storage_options(&mut statements);
    changed |= like_escapes(&mut statements);
    changed |= regproc_names::compare_as_names(&mut statements);
    changed |= pg_types::columns_view(&mut statements);
    changed |= chrono_patterns(&mut statements);
    changed |= name_as_written(&mut statements);
    changed |= ctid::ranges(&mut statements);
    changed |= case_lookups::fold(&mut statements);
    changed |= case_lookups::filter_lookups(&mut statements);
    changed |= catalogue_tables::qualify_added(&mut statements);
    changed |= catalog_rewrites::empty_catalogue_selects(&mut statements);
    changed |= catalog_rewrites::catalogue_lookups(&mut statements);
    let mut names = UniqueNames::default();
    let _ = statements.rewrite(&mut names);
    changed |= names.changed;
    changed |= projection_subqueries::shield(&mut statements);
    changed |= projection_parameters::keep(&mut statements);
    changed.then(|| {
        statements
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .join("; ")
    })
}

/// `SHOW timezone`, PostgreSQL's one-word name of `SHOW TIME ZONE` (Metabase reads the
/// database's time zone with it), becomes the two-word form the library answers (`UTC` unless
/// the session set one); DataFusion's own `SHOW` answered its unset time zone setting, empty.
fn show_timezone(statements: &mut [Statement]) -> bool {
    let mut changed = false;
    for statement in statements.iter_mut() {
        if let Statement::ShowVariable { variable } = statement {
            if let [one] = variable.as_slice() {
                if one.value.eq_ignore_ascii_case("timezone") {
                    *variable = vec![Ident::new("TIME"), Ident::new("ZONE")];
                    changed = true;
                }
            }
        }
    }
    changed
}

/// `(expression).field`, PostgreSQL's access to a field of a composite value (the JDBC driver's
/// `getPrimaryKeys` writes `(information_schema._pg_expandarray(i.indkey)).n`), becomes
/// `(expression)['field']`, which DataFusion reads as the struct field.
fn composite_fields(statements: &mut Vec<Statement>) -> bool {
    let mut changed = false;
    let _ = rewrite_expressions(statements, &mut |expr| {
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

/// `LIKE p ESCAPE 'c'` with `c` other than the backslash (which DataFusion refuses) becomes the
/// same pattern with the backslash as its escape (see [`like_escape`]).
fn like_escapes(statements: &mut Vec<Statement>) -> bool {
    let mut changed = false;
    let _ = rewrite_expressions(statements, &mut |expr| {
        let (Expr::Like {
            pattern,
            escape_char,
            ..
        }
        | Expr::ILike {
            pattern,
            escape_char,
            ..
        }) = expr
        else {
            return ControlFlow::<()>::Continue(());
        };
        let Some(Value::SingleQuotedString(text)) = escape_char.as_ref().map(|v| v.value.clone())
        else {
            return ControlFlow::Continue(());
        };
        if text == "\\" {
            return ControlFlow::Continue(());
        }
        let escape = like_escape::escape_char(&text);
        let written = match &**pattern {
            Expr::Value(v) => match &v.value {
                Value::SingleQuotedString(p) => Some(p.clone()),
                _ => None,
            },
            _ => None,
        };
        **pattern = match written {
            Some(p) => Expr::value(Value::SingleQuotedString(like_escape::to_backslash(
                &p, escape,
            ))),
            None => call(
                like_escape::NAME,
                vec![
                    std::mem::replace(&mut **pattern, Expr::value(Value::Null)),
                    Expr::value(Value::SingleQuotedString(text.clone())),
                ],
            ),
        };
        *escape_char = Some(Value::SingleQuotedString("\\".into()).into());
        changed = true;
        ControlFlow::Continue(())
    });
    changed
}

/// `name(args)`.
fn call(name: &str, args: Vec<Expr>) -> Expr {
    Expr::Function(Function {
        name: ObjectName::from(vec![Ident::new(name)]),
        uses_odbc_syntax: false,
        parameters: FunctionArguments::None,
        args: FunctionArguments::List(FunctionArgumentList {
            duplicate_treatment: None,
            args: args
                .into_iter()
                .map(|a| FunctionArg::Unnamed(FunctionArgExpr::Expr(a)))
                .collect(),
            clauses: vec![],
        }),
        filter: None,
        null_treatment: None,
        over: None,
        within_group: vec![],
    })
}

/// PostgreSQL lets a select list repeat an output name (`SELECT NULL, NULL LIMIT 0`, which
/// DuckDB's `postgres` extension sends); DataFusion refuses it. The answer's own names come from
/// [`name_as_written`]; in a subquery a repeated unaliased expression gets an alias of its own
/// (`NULL_2`); aliased and named columns keep their names.
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
    use datafusion_postgres::datafusion_pg_catalog::sql::PostgresCompatibilityParser;

    fn for_datafusion(sql: &str) -> Option<String> {
        let library = PostgresCompatibilityParser::new();
        let by_library = library.parse(sql).unwrap_or_default();
        super::for_datafusion(sql, &library, &by_library)
    }

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
            "SELECT NULL AS \"NULL\", NULL AS \"NULL_2\", NULL AS \"NULL_3\" LIMIT 0; \
             SELECT 1 AS \"1\""
        );
        // In a subquery too, where the answer's names are not decided.
        let out = for_datafusion("SELECT * FROM (SELECT NULL, NULL) AS s").unwrap();
        assert_eq!(out, "SELECT * FROM (SELECT NULL, NULL AS \"NULL_2\") AS s");
    }

    #[test]
    fn a_like_escape_other_than_the_backslash_becomes_the_backslash() {
        let sql = "SELECT n FROM t WHERE n NOT LIKE 'pg/_%' ESCAPE '/' AND n LIKE $1 ESCAPE '/'";
        let out = for_datafusion(sql).unwrap();
        assert_eq!(
            out,
            "SELECT n FROM t WHERE n NOT LIKE 'pg\\_%' ESCAPE '\\' \
             AND n LIKE rapid_like_backslash($1, '/') ESCAPE '\\'"
        );
        assert_eq!(
            for_datafusion("SELECT 1 AS one WHERE 'a' LIKE 'a' ESCAPE '\\'"),
            None
        );
    }

    #[test]
    fn other_statements_are_left_as_written() {
        assert_eq!(for_datafusion("SELECT t.a, s.t.b FROM s.t"), None);
        assert_eq!(for_datafusion("SELECT a['n'] AS n FROM t"), None);
        assert_eq!(for_datafusion("SELECT a, a, 1 AS x FROM t"), None);
        assert_eq!(for_datafusion("not sql at all"), None);
        // psql's \d footer of row policies, which the library replaces whole.
        let policies = "SELECT pol.polname, pol.polpermissive,
  CASE WHEN pol.polroles = '{0}' THEN NULL ELSE pg_catalog.array_to_string(array(select rolname \
            from pg_catalog.pg_roles where oid = any (pol.polroles) order by 1),',') END,
  pg_catalog.pg_get_expr(pol.polqual, pol.polrelid),
  pg_catalog.pg_get_expr(pol.polwithcheck, pol.polrelid),
  CASE pol.polcmd
    WHEN 'r' THEN 'SELECT'
    WHEN 'a' THEN 'INSERT'
    WHEN 'w' THEN 'UPDATE'
    WHEN 'd' THEN 'DELETE'
    END AS cmd
FROM pg_catalog.pg_policy pol
WHERE pol.polrelid = '16386' ORDER BY 1;";
        assert_eq!(for_datafusion(policies), None);
    }
}
