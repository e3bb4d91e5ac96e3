//! `-0.0` equals `0.0` in SQL, but arrow compares, hashes and groups doubles by their bits
//! (IEEE total order), so `ceil(-0.5) = 0`, `count(DISTINCT ceil(x))` and `GROUP BY` would tell
//! the two zeros apart where DuckDB and PostgreSQL do not. This analyzer rule passes every
//! floating-point operand of a comparison, IN list or BETWEEN, every float grouping or sort key
//! and the float argument of a DISTINCT aggregate through [`positive_zero`], which turns `-0.0` into
//! `0.0` (a function, because the simplifier would drop the `x + 0.0` that does the same).

use std::sync::Arc;

use arrow::array::{ArrayRef, AsArray, Float64Array};
use arrow::datatypes::{DataType, Float64Type};
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{DFSchema, Result as DfResult, ScalarValue};
use datafusion::logical_expr::expr::{AggregateFunction, InList};
use datafusion::logical_expr::expr_rewriter::NamePreserver;
use datafusion::logical_expr::{
    Between, BinaryExpr, ColumnarValue, Expr, ExprSchemable, LogicalPlan, Operator,
    ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use datafusion::optimizer::AnalyzerRule;

#[derive(Debug, PartialEq, Eq, Hash)]
struct PositiveZero {
    signature: Signature,
}

impl ScalarUDFImpl for PositiveZero {
    fn name(&self) -> &str {
        "positive_zero"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _: &[DataType]) -> DfResult<DataType> {
        Ok(DataType::Float64)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        Ok(match &args.args[0] {
            ColumnarValue::Scalar(ScalarValue::Float64(v)) => {
                ColumnarValue::Scalar(ScalarValue::Float64(v.map(|f| f + 0.0)))
            }
            ColumnarValue::Scalar(other) => ColumnarValue::Scalar(other.clone()),
            ColumnarValue::Array(a) => {
                let floats: Float64Array = a.as_primitive::<Float64Type>().unary(|f| f + 0.0);
                ColumnarValue::Array(Arc::new(floats) as ArrayRef)
            }
        })
    }
}

fn positive_zero(expr: Expr, schema: &DFSchema) -> DfResult<Expr> {
    // Once is enough: the analyzer may run again over a plan it already rewrote.
    let done = matches!(&expr, Expr::ScalarFunction(f) if f.name() == "positive_zero");
    if done || expr.get_type(schema)? != DataType::Float64 {
        return Ok(expr);
    }
    let udf = PositiveZero {
        signature: Signature::exact(vec![DataType::Float64], Volatility::Immutable),
    };
    Ok(ScalarUDF::new_from_impl(udf).call(vec![expr]))
}

#[derive(Debug, Default)]
pub(super) struct SignedZero;

impl AnalyzerRule for SignedZero {
    fn name(&self) -> &str {
        "rapid_signed_zero"
    }

    fn analyze(&self, plan: LogicalPlan, _: &ConfigOptions) -> DfResult<LogicalPlan> {
        plan.transform_up_with_subqueries(|node| {
            let schema = super::expression_schema(&node)?;
            let names = NamePreserver::new(&node);
            let grouping: Vec<Expr> = match &node {
                LogicalPlan::Aggregate(agg) => agg.group_expr.clone(),
                _ => Vec::new(),
            };
            // A sort key too: the zeros are one value, so ties go on to the next key.
            let sorting = matches!(node, LogicalPlan::Sort(_));
            node.map_expressions(|expr| {
                let name = names.save(&expr);
                let top = if sorting || grouping.contains(&expr) {
                    positive_zero(expr, &schema)?
                } else {
                    expr
                };
                top.transform_up(|e| rewrite(e, &schema))
                    .map(|t| t.update_data(|e| name.restore(e)))
            })?
            .map_data(|p| p.recompute_schema())
        })
        .map(|t| t.data)
    }
}

fn rewrite(expr: Expr, schema: &DFSchema) -> DfResult<Transformed<Expr>> {
    let zero = |e: Box<Expr>| positive_zero(*e, schema).map(Box::new);
    Ok(match expr {
        Expr::BinaryExpr(BinaryExpr { left, op, right })
            if matches!(
                op,
                Operator::Eq
                    | Operator::NotEq
                    | Operator::Lt
                    | Operator::LtEq
                    | Operator::Gt
                    | Operator::GtEq
            ) =>
        {
            Transformed::yes(Expr::BinaryExpr(BinaryExpr::new(
                zero(left)?,
                op,
                zero(right)?,
            )))
        }
        Expr::InList(InList {
            expr,
            list,
            negated,
        }) => {
            let list = list
                .into_iter()
                .map(|e| positive_zero(e, schema))
                .collect::<DfResult<_>>()?;
            Transformed::yes(Expr::InList(InList::new(zero(expr)?, list, negated)))
        }
        Expr::Between(Between {
            expr,
            negated,
            low,
            high,
        }) => Transformed::yes(Expr::Between(Between::new(
            zero(expr)?,
            negated,
            zero(low)?,
            zero(high)?,
        ))),
        Expr::AggregateFunction(mut f) if f.params.distinct => {
            f.params.args = f
                .params
                .args
                .into_iter()
                .map(|e| positive_zero(e, schema))
                .collect::<DfResult<_>>()?;
            Transformed::yes(Expr::AggregateFunction(AggregateFunction { ..f }))
        }
        other => Transformed::no(other),
    })
}
