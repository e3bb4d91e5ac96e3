//! A policy's row filter: an expression of the `/query` filter language, in which
//! `subject_attr('k')` reads the reading subject's attribute `k`. Each call is replaced by a
//! literal (the attribute's text, or NULL when the subject has none, so `region =
//! subject_attr('region')` hides every row from a subject without a region) before the usual
//! checks, so what reaches the engine is an ordinary checked filter.

use std::collections::HashSet;
use std::ops::ControlFlow;

use datafusion::sql::sqlparser::ast::{
    Expr, FunctionArg, FunctionArgExpr, FunctionArguments, Value, ValueWithSpan, VisitorMut,
};
use datafusion::sql::sqlparser::dialect::GenericDialect;

use super::check::{check_tree, expect_end, parser, refuse, Scope};
use crate::error::{Error, Result};
use crate::sql_walk::Tree;

/// The function that reads a subject attribute.
pub const SUBJECT_ATTR: &str = "subject_attr";

/// Checks the row filter `text` over `columns` (lower-case names) with each `subject_attr('k')`
/// replaced by `attr(k)` (`None`: NULL); its checked rendering, with the literals in place.
pub fn policy_filter_sql(
    text: &str,
    columns: &HashSet<String>,
    attr: &dyn Fn(&str) -> Option<String>,
) -> Result<String> {
    let part = "filter";
    let dialect = GenericDialect {};
    let mut p = parser(&dialect, part, text)?;
    let mut expr = p
        .parse_expr()
        .map_err(|e| refuse(part, format!("[{text}] is not a valid expression ({e})")))?;
    expect_end(&mut p, part, text)?;
    let mut substitute = Substitute {
        attr,
        refused: None,
    };
    let _ = expr.rewrite(&mut substitute);
    if let Some(e) = substitute.refused {
        return Err(e);
    }
    let scope = Scope {
        columns,
        aggregates: false,
    };
    check_tree(part, &expr, &scope)?;
    Ok(expr.to_string())
}

/// Whether a filter reads subject attributes (their values are then read for it).
pub fn reads_attributes(text: &str) -> bool {
    text.to_ascii_lowercase().contains(SUBJECT_ATTR)
}

struct Substitute<'a> {
    attr: &'a dyn Fn(&str) -> Option<String>,
    /// Why the walk stopped.
    refused: Option<Error>,
}

impl VisitorMut for Substitute<'_> {
    type Break = ();

    fn post_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<()> {
        let Expr::Function(f) = expr else {
            return ControlFlow::Continue(());
        };
        if !f.name.to_string().eq_ignore_ascii_case(SUBJECT_ATTR) {
            return ControlFlow::Continue(());
        }
        let key = match &f.args {
            FunctionArguments::List(list) if list.args.len() == 1 => match &list.args[0] {
                FunctionArg::Unnamed(FunctionArgExpr::Expr(Expr::Value(ValueWithSpan {
                    value: Value::SingleQuotedString(k),
                    ..
                }))) => Some(k.clone()),
                _ => None,
            },
            _ => None,
        };
        let Some(key) = key else {
            self.refused = Some(refuse(
                "filter",
                format!("[{f}]: subject_attr takes one quoted attribute name, as subject_attr('region')"),
            ));
            return ControlFlow::Break(());
        };
        let value = match (self.attr)(&key) {
            Some(v) => Value::SingleQuotedString(v),
            None => Value::Null,
        };
        *expr = Expr::value(value);
        ControlFlow::Continue(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn columns() -> HashSet<String> {
        ["region", "amount"].iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn attributes_become_literals_and_missing_ones_null() {
        let attr = |k: &str| (k == "region").then(|| "no'rth".to_string());
        let sql = policy_filter_sql(
            "region = subject_attr('region') OR amount > subject_attr('x')",
            &columns(),
            &attr,
        )
        .unwrap();
        assert_eq!(sql, "region = 'no''rth' OR amount > NULL");
    }

    #[test]
    fn refuses_what_the_filter_language_refuses() {
        let none = |_: &str| None;
        for bad in [
            "nope = 1",
            "region = (SELECT 1)",
            "subject_attr(region) = 'a'",
            "region = 'a'; DROP TABLE x",
            "max(amount) > 1",
        ] {
            let e = policy_filter_sql(bad, &columns(), &none).unwrap_err();
            assert!(e.to_string().contains("Invalid filter"), "{bad}: {e}");
        }
    }
}
