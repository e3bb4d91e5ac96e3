//! Size and depth limits on every query expression, enforced before anything walks it recursively.
//!
//! A query's strings and JSON filter groups become trees that our checker, DataFusion's planner
//! and its executor all walk by recursion, and DataFusion's planning time grows with the square
//! of a chain's length. So each part is bounded first, by iterative means only:
//! - every string's length in bytes (`max_expression_bytes`);
//! - the number of terms (operands and operators, from the SQL tokenizer, a loop) in the whole
//!   query (`max_nodes`): this also bounds the depth of any tree the query can produce;
//! - the nesting depth (`max_depth`): parentheses and function calls on the token stream, group
//!   levels on the JSON filter group, and then the real depth of the parsed tree, in which an
//!   operator chain `a OR b OR c` counts 3 (each operator nests the one before it). That last
//!   walk is recursive but safe: the term limit already bounds the tree, and it runs on the
//!   query threads' large stacks.

use std::ops::ControlFlow;

use datafusion::sql::sqlparser::ast::{Expr, SelectItem, Visitor};
use datafusion::sql::sqlparser::dialect::GenericDialect;
use datafusion::sql::sqlparser::parser::{Parser, ParserError};
use datafusion::sql::sqlparser::tokenizer::{Token, Tokenizer};

use super::request::{Condition, FilterGroup, QueryRequest};
use crate::error::{Error, Result};
use crate::sql_walk::Tree;

/// The limits on one query (settings; see docs/security.md, Query limits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueryLimits {
    /// Longest string in any field, in bytes (a JSON filter group counts as rendered).
    pub max_expression_bytes: usize,
    /// Most terms (operands and operators) in the whole query.
    pub max_nodes: usize,
    /// Deepest nesting of any expression.
    pub max_depth: usize,
}

/// Highest accepted `max_depth`: the checker's SQL parser refuses anything deeper anyway, and
/// two JSON levels per filter-group level must stay under serde_json's own limit of 128.
pub const DEPTH_CEILING: usize = 60;

impl Default for QueryLimits {
    fn default() -> Self {
        QueryLimits {
            max_expression_bytes: 10_000,
            max_nodes: 1_000,
            max_depth: 50,
        }
    }
}

/// How a string is parsed: a select item may carry `AS alias`, the others are expressions.
#[derive(Clone, Copy)]
enum Shape {
    SelectItem,
    Expression,
}

/// The terms counted so far across the whole query.
struct Budget<'a> {
    limits: &'a QueryLimits,
    used: usize,
}

impl Budget<'_> {
    fn spend(&mut self, part: &str, terms: usize) -> Result<()> {
        self.used += terms;
        if self.used > self.limits.max_nodes {
            return Err(Error::invalid(format!(
                "Invalid {part}: the query has more than {} terms (operands and operators) \
                 with this part; the limit is {} (RAPID_QUERY_MAX_NODES)",
                self.limits.max_nodes, self.limits.max_nodes
            )));
        }
        Ok(())
    }
}

/// Checks every part of `request` against `limits`; the first part past a limit is refused (400)
/// with a message naming the limit and its setting.
pub fn check_request(request: &QueryRequest, limits: &QueryLimits) -> Result<()> {
    let mut budget = Budget { limits, used: 0 };
    for item in request.select_columns.iter().flatten() {
        check_text("select_columns", item, Shape::SelectItem, &mut budget)?;
    }
    check_condition("filter", request.filter.as_ref(), &mut budget)?;
    for column in request.group_by_columns.iter().flatten() {
        check_text("group_by_columns", column, Shape::Expression, &mut budget)?;
    }
    check_condition(
        "aggregation_conditions",
        request.aggregation_conditions.as_ref(),
        &mut budget,
    )?;
    for order in request.order_by_columns.iter().flatten() {
        check_text(
            "order_by_columns",
            &order.column,
            Shape::Expression,
            &mut budget,
        )?;
        if let Some(direction) = &order.direction {
            check_bytes("order_by_columns", direction, limits)?;
        }
    }
    Ok(())
}

fn check_condition(part: &str, condition: Option<&Condition>, budget: &mut Budget) -> Result<()> {
    match condition {
        None => Ok(()),
        Some(Condition::Sql(text)) => check_text(part, text, Shape::Expression, budget),
        Some(Condition::Group(group)) => {
            check_group(part, group, budget)?;
            // The rendering is what the checker parses: bound its length and real depth too
            // (its terms were counted on the group). Rendering errors are the checker's to report.
            match super::filter_group::render(part, group) {
                Ok(text) => {
                    check_bytes(part, &text, budget.limits)?;
                    check_tree_depth(part, &text, Shape::Expression, budget.limits)
                }
                Err(_) => Ok(()),
            }
        }
    }
}

/// A JSON filter group, walked with an explicit stack: its depth in group levels, its terms
/// (column, operator and each value of every condition) and the length of every string.
fn check_group(part: &str, root: &FilterGroup, budget: &mut Budget) -> Result<()> {
    let limits = budget.limits;
    let mut stack = vec![(root, 1usize)];
    while let Some((group, depth)) = stack.pop() {
        if depth > limits.max_depth {
            return Err(too_deep(part, "its groups are", Some(depth), limits));
        }
        if let Some(op) = &group.logic_operator {
            check_bytes(part, op, limits)?;
        }
        for c in &group.conditions {
            check_bytes(part, &c.column, limits)?;
            check_bytes(part, &c.operator, limits)?;
            let values = match &c.value {
                Some(serde_json::Value::Array(items)) => items.len(),
                Some(_) => 1,
                None => 0,
            };
            if let Some(serde_json::Value::String(s)) = &c.value {
                check_bytes(part, s, limits)?;
            }
            for item in c
                .value
                .as_ref()
                .and_then(|v| v.as_array())
                .into_iter()
                .flatten()
            {
                if let serde_json::Value::String(s) = item {
                    check_bytes(part, s, limits)?;
                }
            }
            budget.spend(part, 2 + values)?;
        }
        stack.extend(group.groups.iter().map(|g| (g, depth + 1)));
    }
    Ok(())
}

fn check_bytes(part: &str, text: &str, limits: &QueryLimits) -> Result<()> {
    if text.len() > limits.max_expression_bytes {
        return Err(Error::invalid(format!(
            "Invalid {part}: an expression of {} bytes; the limit is {} (RAPID_QUERY_MAX_EXPRESSION_BYTES)",
            text.len(),
            limits.max_expression_bytes
        )));
    }
    Ok(())
}

/// `depth` is how deep it goes, or `None` when the parser gave up past its own ceiling.
fn too_deep(part: &str, what: &str, depth: Option<usize>, limits: &QueryLimits) -> Error {
    let depth = depth.map_or_else(|| format!("more than {DEPTH_CEILING}"), |d| d.to_string());
    Error::invalid(format!(
        "Invalid {part}: {what} nested {depth} deep; the limit is {} (RAPID_QUERY_MAX_DEPTH)",
        limits.max_depth
    ))
}

/// What a tree's depth counts, for messages: chains surprise people.
const TREE: &str = "the expression is (each operator of a chain such as `a OR b OR c` is a \
                    level; use IN for lists of values)";

/// Length, then terms and bracket depth on the token stream, then the parsed tree's real depth.
fn check_text(part: &str, text: &str, shape: Shape, budget: &mut Budget) -> Result<()> {
    let limits = budget.limits;
    check_bytes(part, text, limits)?;
    let dialect = GenericDialect {};
    // A string the tokenizer refuses is one the checker's parser refuses too, with its reason.
    let Ok(tokens) = Tokenizer::new(&dialect, text).tokenize() else {
        return budget.spend(part, 1);
    };
    let (mut terms, mut depth, mut deepest) = (0usize, 0usize, 0usize);
    for token in &tokens {
        match token {
            // Outside the language (columns are plain names), and chains of them make sqlparser
            // backtrack exponentially: `Z.y.Z.` repeated 18 times (108 bytes) parsed for over a
            // minute (found by fuzzing). Refused before any parser sees them.
            Token::Period | Token::LBracket | Token::RBracket | Token::LBrace | Token::RBrace => {
                return Err(Error::invalid(format!(
                    "Invalid {part}: `{token}` has no place in a query expression (columns are \
                     named without qualifiers; there are no subscripts, arrays or maps)"
                )));
            }
            Token::LParen => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            Token::RParen => depth = depth.saturating_sub(1),
            Token::Whitespace(_) | Token::Comma | Token::EOF => {}
            _ => terms += 1,
        }
    }
    if deepest > limits.max_depth {
        return Err(too_deep(part, "it is", Some(deepest), limits));
    }
    budget.spend(part, terms.max(1))?;
    check_tree_depth(part, text, shape, limits)
}

/// The parsed tree's depth, operator chains included. Parse failures are left to the checker.
fn check_tree_depth(part: &str, text: &str, shape: Shape, limits: &QueryLimits) -> Result<()> {
    let dialect = GenericDialect {};
    let Ok(mut parser) = Parser::new(&dialect)
        .with_recursion_limit(DEPTH_CEILING + 4)
        .try_with_sql(text)
    else {
        return Ok(());
    };
    // The parser recurses about once per level of the tree it builds.
    let too_deep_to_parse = |e: &ParserError| matches!(e, ParserError::RecursionLimitExceeded);
    let parsed = match shape {
        Shape::Expression => parser.parse_expr().map(Some),
        Shape::SelectItem => parser.parse_select_item().map(|item| match item {
            SelectItem::UnnamedExpr(expr) | SelectItem::ExprWithAlias { expr, .. } => Some(expr),
            _ => None,
        }),
    };
    let expr = match parsed {
        Ok(Some(expr)) => expr,
        Err(e) if too_deep_to_parse(&e) => return Err(too_deep(part, TREE, None, limits)),
        Ok(None) | Err(_) => return Ok(()),
    };
    let mut meter = DepthMeter { now: 0, deepest: 0 };
    let _ = expr.walk(&mut meter);
    if meter.deepest > limits.max_depth {
        return Err(too_deep(part, TREE, Some(meter.deepest), limits));
    }
    Ok(())
}

/// Tracks the depth of expression nodes during a visit.
struct DepthMeter {
    now: usize,
    deepest: usize,
}

impl Visitor for DepthMeter {
    type Break = ();

    fn pre_visit_expr(&mut self, _: &Expr) -> ControlFlow<()> {
        self.now += 1;
        self.deepest = self.deepest.max(self.now);
        ControlFlow::Continue(())
    }

    fn post_visit_expr(&mut self, _: &Expr) -> ControlFlow<()> {
        self.now -= 1;
        ControlFlow::Continue(())
    }
}

#[cfg(test)]
#[path = "limits_tests.rs"]
mod tests;
