//! SQL's three-valued logic kept intact through DataFusion 55's expression simplifier, which
//! folds some predicates as if NULL were FALSE: `x IN (a) AND x IN (b)` with disjoint lists
//! becomes FALSE (so `NOT (...)` returns the rows where `x` is NULL) and
//! `x NOT IN (a) OR x NOT IN (b)` becomes TRUE. Upstream has fixed this after 55; until a
//! release carries the fix, this analyzer rule rewrites every AND/OR/NOT before the simplifier
//! sees it into two-valued logic over its operands' truth:
//!
//! - `T(p)`, "p is TRUE": `T(a AND b) = T(a) AND T(b)`, `T(a OR b) = T(a) OR T(b)`,
//!   `T(NOT a) = F(a)`, and for any other boolean `x`, `T(x) = x IS NOT DISTINCT FROM TRUE`
//!   (that is, `x IS TRUE`);
//! - `F(p)`, "p is FALSE", the dual;
//! - a filter (WHERE or HAVING) keeps a row when `T(filter)`; anywhere else a boolean
//!   `p` becomes `CASE WHEN T(p) THEN TRUE WHEN F(p) THEN FALSE END` (NULL otherwise).
//!
//! These comparisons are never NULL and the simplifier does not look through them, so
//! none of its NULL-unaware rules (which need IN lists or `=` as direct operands of AND/OR) can
//! apply, and every rewrite it does make on two-valued logic is sound.

use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::Result as DfResult;
use datafusion::logical_expr::expr_rewriter::NamePreserver;
use datafusion::logical_expr::{lit, when, BinaryExpr, Expr, LogicalPlan, Operator};
use datafusion::optimizer::AnalyzerRule;

#[derive(Debug, Default)]
pub(super) struct ThreeValuedLogic;

impl AnalyzerRule for ThreeValuedLogic {
    fn name(&self) -> &str {
        "rapid_three_valued_logic"
    }

    fn analyze(&self, plan: LogicalPlan, _: &ConfigOptions) -> DfResult<LogicalPlan> {
        plan.transform_up_with_subqueries(|node| {
            let filter = matches!(node, LogicalPlan::Filter(_));
            let names = NamePreserver::new(&node);
            node.map_expressions(|expr| {
                let name = names.save(&expr);
                let rewritten = if filter {
                    is_true(expr)?
                } else {
                    three_valued(expr)?
                };
                Ok(Transformed::yes(name.restore(rewritten)))
            })?
            .map_data(|p| p.recompute_schema())
        })
        .map(|t| t.data)
    }
}

/// The connective at the top of `expr`, if it is one.
enum Connective {
    And(Expr, Expr),
    Or(Expr, Expr),
    Not(Expr),
}

fn connective(expr: Expr) -> Result<Connective, Expr> {
    match expr {
        Expr::BinaryExpr(BinaryExpr {
            left,
            op: Operator::And,
            right,
        }) => Ok(Connective::And(*left, *right)),
        Expr::BinaryExpr(BinaryExpr {
            left,
            op: Operator::Or,
            right,
        }) => Ok(Connective::Or(*left, *right)),
        Expr::Not(inner) => Ok(Connective::Not(*inner)),
        other => Err(other),
    }
}

fn is_connective(expr: &Expr) -> bool {
    matches!(
        expr,
        Expr::Not(_)
            | Expr::BinaryExpr(BinaryExpr {
                op: Operator::And | Operator::Or,
                ..
            })
    )
}

/// `expr` (any type) with every AND/OR/NOT inside it rewritten, value for value.
fn three_valued(expr: Expr) -> DfResult<Expr> {
    if is_connective(&expr) {
        let truth = is_true(expr.clone())?;
        let falsity = is_false(expr)?;
        return when(truth, lit(true)).when(falsity, lit(false)).end();
    }
    expr.map_children(|child| three_valued(child).map(Transformed::yes))
        .map(|t| t.data)
}

/// `atom IS NOT DISTINCT FROM value`, which is `atom IS TRUE` (or `IS FALSE`) written so that
/// its nullability is the same in the logical and the physical plan: DataFusion 55 plans
/// `IS TRUE` as this comparison but declares the logical `IS TRUE` non-nullable, and the common
/// subexpression pass then fails on the mismatch.
fn is(atom: Expr, value: bool) -> Expr {
    Expr::BinaryExpr(BinaryExpr::new(
        Box::new(atom),
        Operator::IsNotDistinctFrom,
        Box::new(lit(value)),
    ))
}

/// `T(expr)`: TRUE when `expr` is TRUE, FALSE otherwise (never NULL).
fn is_true(expr: Expr) -> DfResult<Expr> {
    Ok(match connective(expr) {
        Ok(Connective::And(l, r)) => is_true(l)?.and(is_true(r)?),
        Ok(Connective::Or(l, r)) => is_true(l)?.or(is_true(r)?),
        Ok(Connective::Not(e)) => is_false(e)?,
        Err(atom) => is(three_valued(atom)?, true),
    })
}

/// `F(expr)`: TRUE when `expr` is FALSE, FALSE otherwise (never NULL).
fn is_false(expr: Expr) -> DfResult<Expr> {
    Ok(match connective(expr) {
        Ok(Connective::And(l, r)) => is_false(l)?.or(is_false(r)?),
        Ok(Connective::Or(l, r)) => is_false(l)?.and(is_false(r)?),
        Ok(Connective::Not(e)) => is_true(e)?,
        Err(atom) => is(three_valued(atom)?, false),
    })
}
