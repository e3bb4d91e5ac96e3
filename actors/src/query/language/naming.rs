//! The name of an unaliased result column: the expression as written, normalised the way
//! DuckDB and PostgreSQL show it (`qty + 1`, `upper(cat)`, `count(*)`, `substr(cat, 1, 2)`),
//! never the engine's internal form (`dataset.qty + Int64(1)`). Function names are lower case,
//! identifiers unquoted, and the SQL-syntax functions (`TRIM(x)`, `SUBSTRING(x FROM 1 FOR 2)`,
//! `FLOOR(x)`, `CEIL(x)`) read as ordinary calls.

use std::ops::ControlFlow;

use datafusion::sql::sqlparser::ast::{
    Expr, FunctionArg, FunctionArgExpr, FunctionArgumentList, FunctionArguments, Ident, ObjectName,
};

use crate::sql_walk::rewrite_expressions;

/// The normalised text of `expr` (already checked: only allowed node kinds).
pub(crate) fn normalised_name(expr: &Expr) -> String {
    let mut expr = expr.clone();
    let _ = rewrite_expressions(&mut expr, &mut |e| {
        normalise(e);
        ControlFlow::<()>::Continue(())
    });
    expr.to_string()
}

fn normalise(expr: &mut Expr) {
    let call = match expr {
        Expr::Identifier(ident) => {
            ident.value = ident.value.to_ascii_lowercase();
            ident.quote_style = None;
            return;
        }
        Expr::Function(f) => {
            f.name = ObjectName::from(vec![Ident::new(f.name.to_string().to_ascii_lowercase())]);
            return;
        }
        Expr::Trim { expr, .. } => ("trim", vec![(**expr).clone()]),
        Expr::Floor { expr, .. } => ("floor", vec![(**expr).clone()]),
        Expr::Ceil { expr, .. } => ("ceil", vec![(**expr).clone()]),
        Expr::Substring {
            expr,
            substring_from,
            substring_for,
            shorthand,
            ..
        } => {
            let mut args = vec![(**expr).clone()];
            args.extend(substring_from.iter().map(|e| (**e).clone()));
            args.extend(substring_for.iter().map(|e| (**e).clone()));
            (if *shorthand { "substr" } else { "substring" }, args)
        }
        _ => return,
    };
    *expr = function(call.0, call.1);
}

fn function(name: &str, args: Vec<Expr>) -> Expr {
    Expr::Function(datafusion::sql::sqlparser::ast::Function {
        name: ObjectName::from(vec![Ident::new(name)]),
        uses_odbc_syntax: false,
        parameters: FunctionArguments::None,
        args: FunctionArguments::List(FunctionArgumentList {
            duplicate_treatment: None,
            args: args
                .into_iter()
                .map(|e| FunctionArg::Unnamed(FunctionArgExpr::Expr(e)))
                .collect(),
            clauses: Vec::new(),
        }),
        filter: None,
        null_treatment: None,
        over: None,
        within_group: Vec::new(),
    })
}

/// `name` as a double-quoted SQL identifier.
pub(crate) fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::sql::sqlparser::dialect::GenericDialect;
    use datafusion::sql::sqlparser::parser::Parser;

    fn name(text: &str) -> String {
        let expr = Parser::new(&GenericDialect {})
            .try_with_sql(text)
            .unwrap()
            .parse_expr()
            .unwrap();
        normalised_name(&expr)
    }

    #[test]
    fn expressions_are_named_as_written_normalised() {
        for (written, named) in [
            ("qty+1", "qty + 1"),
            ("UPPER(\"cat\")", "upper(cat)"),
            ("COUNT(*)", "count(*)"),
            ("count(DISTINCT cat)", "count(DISTINCT cat)"),
            ("coalesce(d, -4.62) / 3", "coalesce(d, -4.62) / 3"),
            ("TRIM(cat)", "trim(cat)"),
            ("SUBSTRING(cat FROM 2 FOR 3)", "substring(cat, 2, 3)"),
            ("substr(cat, 2)", "substr(cat, 2)"),
            ("FLOOR(price) + CEIL(price)", "floor(price) + ceil(price)"),
            ("date_part('year', day)", "date_part('year', day)"),
        ] {
            assert_eq!(name(written), named, "{written}");
        }
    }
}
