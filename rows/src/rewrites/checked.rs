//! An analyzer rule (run after type coercion) that makes integer answers exact or an error,
//! never wrapped (docs/API.md, Query semantics):
//! - `a + b`, `a - b`, `a * b` and `-a` on integers become [`CheckedInt`] calls (same types);
//! - `sum(x)` of an integer `x` is accumulated as Decimal128(38, 0), exact for any row count
//!   this service can hold, and brought back to int64 by a projection right above the
//!   aggregate that fails when the total does not fit (so the column keeps its name and type);
//! - `avg(x)` of an integer `x` is that exact sum divided by the count (as doubles), as DuckDB
//!   and PostgreSQL compute it, rather than a running sum of doubles that loses the low digits;
//! - `median(x)` of an integer `x` is taken over doubles, so an even count gives the mean of the
//!   two middle values rather than a truncated integer.

use std::sync::Arc;

use arrow::datatypes::DataType;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{Column, DFSchema, Result as DfResult};
use datafusion::functions_aggregate::count::count_udaf;
use datafusion::functions_aggregate::sum::sum_udaf;
use datafusion::logical_expr::expr::AggregateFunction;
use datafusion::logical_expr::expr_rewriter::{unnormalize_col, NamePreserver};
use datafusion::logical_expr::{
    cast, Aggregate, BinaryExpr, Expr, ExprSchemable, LogicalPlan, Operator, Projection,
};
use datafusion::optimizer::AnalyzerRule;

use super::checked_udf::{CheckedInt, IntOp, SUM_PRECISION};

#[derive(Debug, Default)]
pub(super) struct CheckedIntegers;

impl AnalyzerRule for CheckedIntegers {
    fn name(&self) -> &str {
        "rapid_checked_integers"
    }

    fn analyze(&self, plan: LogicalPlan, _: &ConfigOptions) -> DfResult<LogicalPlan> {
        plan.transform_up_with_subqueries(|node| match node {
            LogicalPlan::Aggregate(agg) => exact_aggregates(agg),
            other => checked_arithmetic(other),
        })
        .map(|t| t.data)
    }
}

/// Replaces wrapping integer operators in every expression of `plan` (one node).
fn checked_arithmetic(plan: LogicalPlan) -> DfResult<Transformed<LogicalPlan>> {
    let schema = super::expression_schema(&plan)?;
    let names = NamePreserver::new(&plan);
    plan.map_expressions(|expr| {
        let name = names.save(&expr);
        // Top down, so that an error names the expression as written, not its rewritten parts.
        expr.transform_down(|e| checked_expr(e, &schema))
            .map(|t| t.update_data(|e| name.restore(e)))
    })?
    .map_data(|p| p.recompute_schema())
}

fn checked_expr(expr: Expr, schema: &DFSchema) -> DfResult<Transformed<Expr>> {
    let label = || label_of(&expr);
    match &expr {
        Expr::BinaryExpr(BinaryExpr { left, op, right })
            if matches!(op, Operator::Plus | Operator::Minus | Operator::Multiply) =>
        {
            let (lt, rt) = (left.get_type(schema)?, right.get_type(schema)?);
            if !(lt.is_integer() && rt.is_integer()) {
                return Ok(Transformed::no(expr));
            }
            let op = match op {
                Operator::Plus => IntOp::Add,
                Operator::Minus => IntOp::Sub,
                _ => IntOp::Mul,
            };
            // Type coercion makes both sides one type; should it not, both become int64.
            let (args, t) = if lt == rt {
                (vec![(**left).clone(), (**right).clone()], lt)
            } else {
                let wide = |e: &Expr| cast(e.clone(), DataType::Int64);
                (vec![wide(left), wide(right)], DataType::Int64)
            };
            Ok(Transformed::yes(CheckedInt::call(op, label(), args, t)))
        }
        Expr::Negative(inner) => {
            let t = inner.get_type(schema)?;
            if !t.is_integer() {
                return Ok(Transformed::no(expr));
            }
            let args = vec![(**inner).clone()];
            Ok(Transformed::yes(CheckedInt::call(
                IntOp::Neg,
                label(),
                args,
                t,
            )))
        }
        _ => Ok(Transformed::no(expr)),
    }
}

/// How an expression reads in an error message: without table qualifiers, with the parentheses
/// that operator precedence needs (DataFusion's own display leaves them out).
fn label_of(expr: &Expr) -> String {
    let operand = |e: &Expr, op: &Operator, right: bool| match e {
        Expr::BinaryExpr(inner)
            if inner.op.precedence() < op.precedence()
                || (right && inner.op.precedence() == op.precedence()) =>
        {
            format!("({})", label_of(e))
        }
        _ => label_of(e),
    };
    match expr {
        Expr::BinaryExpr(BinaryExpr { left, op, right }) => {
            format!(
                "{} {op} {}",
                operand(left, op, false),
                operand(right, op, true)
            )
        }
        Expr::Negative(inner) if matches!(**inner, Expr::BinaryExpr(_)) => {
            format!("-({})", label_of(inner))
        }
        Expr::Negative(inner) => format!("-{}", label_of(inner)),
        _ => unnormalize_col(expr.clone()).human_display().to_string(),
    }
}

/// The aggregate function inside `expr` (which may be aliased), if any.
fn aggregate_of(expr: &Expr) -> Option<&AggregateFunction> {
    match expr {
        Expr::AggregateFunction(f) => Some(f),
        Expr::Alias(a) => aggregate_of(&a.expr),
        _ => None,
    }
}

/// The integer argument of `f` when `f` is `name` over one, looking through the cast to a
/// float that type coercion puts around an integer argument of some aggregates (`avg(DISTINCT x)`).
fn integer_arg(f: &AggregateFunction, name: &str, schema: &DFSchema) -> DfResult<Option<Expr>> {
    if f.func.name() != name || f.params.args.len() != 1 {
        return Ok(None);
    }
    let mut arg = &f.params.args[0];
    if let Expr::Cast(c) = arg {
        if c.field.data_type().is_floating() && c.expr.get_type(schema)?.is_integer() {
            arg = &c.expr;
        }
    }
    Ok(arg.get_type(schema)?.is_integer().then(|| arg.clone()))
}

/// How an integer aggregate is computed exactly (see the module comment).
enum Exact {
    /// Summed as Decimal128, then checked back into int64.
    Sum(String),
    /// Summed as Decimal128 and divided by a count kept in the named extra column.
    Avg(String),
}

/// Integer `sum` and `avg` exact, integer `median` over doubles (see the module comment); then
/// the aggregate's own expressions get checked arithmetic.
fn exact_aggregates(agg: Aggregate) -> DfResult<Transformed<LogicalPlan>> {
    let input_schema = agg.input.schema().clone();
    let group_count = agg.group_expr.len();
    let decimal = DataType::Decimal128(SUM_PRECISION, 0);
    // What each rewritten output position needs from the projection above.
    let mut exact: Vec<(usize, Exact)> = Vec::new();
    let mut aggr_expr = Vec::with_capacity(agg.aggr_expr.len());
    let mut counts = Vec::new();
    for (i, expr) in agg.aggr_expr.iter().enumerate() {
        let name = agg.schema.field(group_count + i).name().clone();
        let Some(f) = aggregate_of(expr) else {
            aggr_expr.push(expr.clone());
            continue;
        };
        let mut rewritten = f.clone();
        if let Some(arg) = integer_arg(f, "sum", &input_schema)? {
            let label = label_of(&Expr::AggregateFunction(f.clone()));
            exact.push((group_count + i, Exact::Sum(label)));
            rewritten.params.args[0] = cast(arg, decimal.clone());
        } else if let Some(arg) = integer_arg(f, "avg", &input_schema)? {
            let count_name = format!("__rapid_count_{i}");
            let mut count = f.clone();
            count.func = count_udaf();
            count.params.args[0] = arg.clone();
            counts.push(Expr::AggregateFunction(count).alias(&count_name));
            exact.push((group_count + i, Exact::Avg(count_name)));
            rewritten.func = sum_udaf();
            rewritten.params.args[0] = cast(arg, decimal.clone());
        } else if let Some(arg) = integer_arg(f, "median", &input_schema)? {
            rewritten.params.args[0] = cast(arg, DataType::Float64);
        } else {
            aggr_expr.push(expr.clone());
            continue;
        }
        aggr_expr.push(Expr::AggregateFunction(rewritten).alias(name));
    }
    if aggr_expr == agg.aggr_expr {
        return checked_arithmetic(LogicalPlan::Aggregate(agg));
    }
    let outputs = agg.schema.fields().len();
    aggr_expr.extend(counts);
    let rebuilt = Aggregate::try_new(agg.input.clone(), agg.group_expr.clone(), aggr_expr)?;
    let rebuilt = checked_arithmetic(LogicalPlan::Aggregate(rebuilt))?.data;
    let schema = rebuilt.schema().clone();
    let exprs = (0..outputs)
        .map(|i| {
            let (qualifier, field) = schema.qualified_field(i);
            let column = Expr::Column(Column::from((qualifier, field)));
            let value = match exact.iter().find(|(position, _)| *position == i) {
                None => return column,
                Some((_, Exact::Sum(label))) => {
                    CheckedInt::call(IntOp::FromSum, label.clone(), vec![column], DataType::Int64)
                }
                Some((_, Exact::Avg(count))) => {
                    cast(column, DataType::Float64)
                        / cast(Expr::Column(Column::from_name(count)), DataType::Float64)
                }
            };
            value.alias_qualified(qualifier.cloned(), field.name())
        })
        .collect();
    let projection = Projection::try_new(exprs, Arc::new(rebuilt))?;
    Ok(Transformed::yes(LogicalPlan::Projection(projection)))
}
