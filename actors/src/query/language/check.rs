//! User query fragments (`filter`, `select_columns`, ...) are parsed into expression trees with
//! DataFusion's SQL parser and every node is checked against an allow-list: columns of the
//! dataset, literals, comparison/boolean/arithmetic operators, LIKE, IN, IS NULL, BETWEEN and a
//! few functions. Anything else (subqueries, `;`, DDL, unknown functions or columns) is refused
//! with a message naming it. Only the rendering of a checked tree reaches the query engine.

use std::collections::HashSet;
use std::ops::ControlFlow;

use datafusion::sql::sqlparser::ast::{
    BinaryOperator, CeilFloorKind, DateTimeField, DuplicateTreatment, Expr, FunctionArg,
    FunctionArgExpr, FunctionArguments, SelectItem, UnaryOperator,
};
use datafusion::sql::sqlparser::dialect::GenericDialect;
use datafusion::sql::sqlparser::parser::Parser;
use datafusion::sql::sqlparser::tokenizer::Token;

use super::naming::{normalised_name, quoted};
use crate::error::{Error, Result};
use crate::sql_walk::Tree;

/// Longest fragment accepted; deeper nesting is refused by the parser's recursion limit.
const MAX_FRAGMENT_CHARS: usize = 10_000;

const AGGREGATES: &[&str] = &[
    "avg", "sum", "min", "max", "count", "median", "stddev", "var",
];
const SCALARS: &[&str] = &[
    "lower",
    "upper",
    "length",
    "char_length",
    "trim",
    "ltrim",
    "rtrim",
    "substr",
    "substring",
    "round",
    "abs",
    "floor",
    "ceil",
    "coalesce",
    "concat",
    "date_part",
    "date_trunc",
    "starts_with",
    "ends_with",
];

/// Functions that remove spaces (U+0020) only, so they take the one argument.
const TRIMS: &[&str] = &["trim", "ltrim", "rtrim"];

/// What a fragment may refer to.
pub(crate) struct Scope<'a> {
    pub columns: &'a HashSet<String>,
    /// Whether aggregate functions are allowed (select items and aggregation conditions).
    pub aggregates: bool,
}

pub(super) fn refuse(part: &str, why: String) -> Error {
    Error::invalid(format!("Invalid {part}: {why}"))
}

pub(super) fn parser<'a>(
    dialect: &'a GenericDialect,
    part: &str,
    text: &str,
) -> Result<Parser<'a>> {
    if text.len() > MAX_FRAGMENT_CHARS {
        return Err(refuse(
            part,
            format!("longer than {MAX_FRAGMENT_CHARS} characters"),
        ));
    }
    Parser::new(dialect)
        .with_recursion_limit(64)
        .try_with_sql(text)
        .map_err(|e| refuse(part, format!("[{text}] is not a valid expression ({e})")))
}

pub(super) fn expect_end(p: &mut Parser<'_>, part: &str, text: &str) -> Result<()> {
    match p.peek_token().token {
        Token::EOF => Ok(()),
        Token::SemiColon => Err(refuse(
            part,
            format!("[{text}] contains `;`: one expression only"),
        )),
        other => Err(refuse(
            part,
            format!("[{text}] has unexpected `{other}` after the expression"),
        )),
    }
}

/// Parses and checks a boolean (or any) expression; returns its checked rendering.
pub(crate) fn check_expr(part: &str, text: &str, scope: &Scope<'_>) -> Result<String> {
    let dialect = GenericDialect {};
    let mut p = parser(&dialect, part, text)?;
    let expr = p
        .parse_expr()
        .map_err(|e| refuse(part, format!("[{text}] is not a valid expression ({e})")))?;
    expect_end(&mut p, part, text)?;
    check_tree(part, &expr, scope)?;
    Ok(expr.to_string())
}

/// Parses and checks one select item (`col`, `avg(col)`, `count(*)`, `col AS name`).
pub(crate) fn check_select_item(text: &str, scope: &Scope<'_>) -> Result<String> {
    let part = "select_columns";
    let dialect = GenericDialect {};
    let mut p = parser(&dialect, part, text)?;
    let item = p.parse_select_item().map_err(|e| {
        refuse(
            part,
            format!("[{text}] is not a valid column or expression ({e})"),
        )
    })?;
    expect_end(&mut p, part, text)?;
    match &item {
        SelectItem::UnnamedExpr(e @ Expr::Identifier(_)) => check_tree(part, e, scope)?,
        // Named as written (normalised), not by the engine's internal rendering.
        SelectItem::UnnamedExpr(e) => {
            check_tree(part, e, scope)?;
            return Ok(format!("{e} AS {}", quoted(&normalised_name(e))));
        }
        SelectItem::ExprWithAlias { expr, alias } => {
            check_tree(part, expr, scope)?;
            if alias.quote_style.is_some() || !is_plain_name(&alias.value) {
                return Err(refuse(
                    part,
                    format!(
                        "alias [{}] must be letters, digits and underscores",
                        alias.value
                    ),
                ));
            }
        }
        _ => {
            return Err(refuse(
                part,
                format!("[{text}] is not allowed: name columns or expressions"),
            ))
        }
    }
    Ok(item.to_string())
}

/// A function call standing where a column name would (rAPId's JSON condition `column`, such as
/// `count(*)` or `lower(cat)`), printed from its parse tree. The caller checks the condition
/// it becomes as a whole.
pub(crate) fn check_call(part: &str, text: &str) -> Result<String> {
    let dialect = GenericDialect {};
    let mut p = parser(&dialect, part, text)?;
    let expr = p
        .parse_expr()
        .map_err(|e| refuse(part, format!("[{text}] is not a valid expression ({e})")))?;
    expect_end(&mut p, part, text)?;
    match expr {
        Expr::Function(_)
        | Expr::Trim { .. }
        | Expr::Substring { .. }
        | Expr::Floor { .. }
        | Expr::Ceil { .. } => Ok(expr.to_string()),
        _ => Err(refuse(
            part,
            format!("column [{text}] must be a column name or a function call"),
        )),
    }
}

/// A bare column name (group by, order by).
pub(crate) fn check_column(part: &str, name: &str, known: &HashSet<String>) -> Result<String> {
    let lower = name.trim().to_ascii_lowercase();
    if known.contains(&lower) {
        Ok(lower)
    } else {
        Err(refuse(part, format!("unknown column [{name}]")))
    }
}

fn is_plain_name(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

pub(super) fn check_tree(part: &str, root: &Expr, scope: &Scope<'_>) -> Result<()> {
    let mut checker = ExprChecker {
        part,
        scope,
        refused: None,
    };
    let _ = root.walk(&mut checker);
    match checker.refused {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

struct ExprChecker<'a> {
    part: &'a str,
    scope: &'a Scope<'a>,
    /// Why the walk stopped.
    refused: Option<Error>,
}

impl datafusion::sql::sqlparser::ast::Visitor for ExprChecker<'_> {
    type Break = ();

    fn pre_visit_expr(&mut self, expr: &Expr) -> ControlFlow<()> {
        match self.allowed(expr) {
            Ok(()) => ControlFlow::Continue(()),
            Err(e) => {
                self.refused = Some(e);
                ControlFlow::Break(())
            }
        }
    }

    fn pre_visit_query(&mut self, _: &datafusion::sql::sqlparser::ast::Query) -> ControlFlow<()> {
        self.refused = Some(refuse(self.part, "subqueries are not allowed".into()));
        ControlFlow::Break(())
    }
}

impl ExprChecker<'_> {
    fn no(&self, why: String) -> Result<()> {
        Err(refuse(self.part, why))
    }

    /// Deny by default: only the listed kinds of node pass.
    fn allowed(&self, expr: &Expr) -> Result<()> {
        match expr {
            Expr::Identifier(ident) => {
                let name = ident.value.to_ascii_lowercase();
                if ident.quote_style.is_some() && ident.quote_style != Some('"') {
                    return self.no(format!(
                        "quoting [{}] this way is not supported",
                        ident.value
                    ));
                }
                if self.scope.columns.contains(&name) {
                    Ok(())
                } else {
                    self.no(format!("unknown column [{}]", ident.value))
                }
            }
            Expr::Value(_) | Expr::TypedString(_) | Expr::Nested(_) => Ok(()),
            Expr::IsNull(_)
            | Expr::IsNotNull(_)
            | Expr::IsTrue(_)
            | Expr::IsFalse(_)
            | Expr::IsNotTrue(_)
            | Expr::IsNotFalse(_) => Ok(()),
            Expr::InList { .. } | Expr::Between { .. } => Ok(()),
            Expr::Like { any: false, .. } | Expr::ILike { any: false, .. } => Ok(()),
            Expr::UnaryOp { op, .. } => match op {
                UnaryOperator::Not | UnaryOperator::Minus | UnaryOperator::Plus => Ok(()),
                other => self.no(format!("operator [{other}] is not allowed")),
            },
            Expr::BinaryOp { op, .. } => match op {
                BinaryOperator::Plus
                | BinaryOperator::Minus
                | BinaryOperator::Multiply
                | BinaryOperator::Divide
                | BinaryOperator::Modulo
                | BinaryOperator::Gt
                | BinaryOperator::Lt
                | BinaryOperator::GtEq
                | BinaryOperator::LtEq
                | BinaryOperator::Eq
                | BinaryOperator::NotEq
                | BinaryOperator::And
                | BinaryOperator::Or
                | BinaryOperator::StringConcat => Ok(()),
                other => self.no(format!("operator [{other}] is not allowed")),
            },
            Expr::Function(f) => self.function(f),
            // The SQL parser gives these functions their own node kinds.
            Expr::Trim {
                trim_where: None,
                trim_what: None,
                trim_characters: None,
                ..
            }
            | Expr::Substring { .. } => Ok(()),
            Expr::Trim { .. } => self.no(format!(
                "[{expr}]: trim takes one argument (it removes spaces)"
            )),
            Expr::Floor { field, .. } | Expr::Ceil { field, .. }
                if matches!(
                    field,
                    CeilFloorKind::DateTimeField(DateTimeField::NoDateTime)
                ) =>
            {
                Ok(())
            }
            Expr::Wildcard(_) => self.no("`*` is only allowed as count(*)".into()),
            Expr::Subquery(_) | Expr::Exists { .. } | Expr::InSubquery { .. } => {
                self.no("subqueries are not allowed".into())
            }
            other => self.no(format!("[{other}] is not an allowed expression")),
        }
    }

    fn function(&self, f: &datafusion::sql::sqlparser::ast::Function) -> Result<()> {
        let name = f.name.to_string().to_ascii_lowercase();
        let aggregate = AGGREGATES.contains(&name.as_str());
        if !(aggregate || SCALARS.contains(&name.as_str())) {
            return self.no(format!("unknown or disallowed function [{}]", f.name));
        }
        if aggregate && !self.scope.aggregates {
            return self.no(format!(
                "aggregate [{name}] is not allowed here: use aggregation_conditions"
            ));
        }
        if f.filter.is_some()
            || f.over.is_some()
            || f.null_treatment.is_some()
            || !f.within_group.is_empty()
        {
            return self.no(format!("[{f}] uses clauses that are not allowed"));
        }
        if !matches!(f.parameters, FunctionArguments::None) {
            return self.no(format!("[{f}] is not an allowed function call"));
        }
        let FunctionArguments::List(list) = &f.args else {
            return self.no(format!("[{f}] needs its arguments in parentheses"));
        };
        if !list.clauses.is_empty()
            || (list.duplicate_treatment == Some(DuplicateTreatment::Distinct) && !aggregate)
        {
            return self.no(format!("[{f}] uses clauses that are not allowed"));
        }
        if TRIMS.contains(&name.as_str()) && list.args.len() != 1 {
            return self.no(format!(
                "[{f}]: {name} takes one argument (it removes spaces)"
            ));
        }
        for arg in &list.args {
            match arg {
                FunctionArg::Unnamed(FunctionArgExpr::Expr(_)) => {}
                FunctionArg::Unnamed(FunctionArgExpr::Wildcard) if name == "count" => {}
                _ => return self.no(format!("[{f}] has an argument that is not allowed")),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "check_tests.rs"]
mod tests;
