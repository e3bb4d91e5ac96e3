//! An interval times a number, as PostgreSQL computes it: DataFusion 55 refuses
//! `INTERVAL '5 minutes' * 3` at planning (no arithmetic between an interval and a number),
//! and Superset writes its 5, 10, 15 and 30 second and minute time grains so, e.g.
//! `DATE_TRUNC('hour', t) + INTERVAL '5 minutes' * FLOOR(EXTRACT(MINUTE FROM t) / 5)`.
//! [`IntervalTimes`] plans `interval * number` and `number * interval` as a call of
//! [`interval_times`]; every other operation is left to DataFusion.
//!
//! The product follows PostgreSQL's `interval_mul`: each field is multiplied, a fraction of a
//! month carries into days (30 to a month) and a fraction of a day into time (24 hours), the
//! time is rounded to the nanosecond. A result outside the fields' ranges is an error.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, IntervalMonthDayNanoArray};
use arrow::datatypes::{DataType, IntervalMonthDayNano, IntervalUnit};
use datafusion::common::{exec_err, DFSchema, Result as DfResult};
use datafusion::logical_expr::planner::{ExprPlanner, PlannerResult, RawBinaryExpr};
use datafusion::logical_expr::{
    cast, ColumnarValue, Expr, ExprSchemable, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl,
    Signature, Volatility,
};
use datafusion::sql::sqlparser::ast::BinaryOperator;

const INTERVAL: DataType = DataType::Interval(IntervalUnit::MonthDayNano);
const NANOS_PER_DAY: f64 = 86_400_000_000_000.0;

/// Plans `interval * number` (either order) as [`interval_times`].
#[derive(Debug)]
pub(crate) struct IntervalTimes;

impl ExprPlanner for IntervalTimes {
    fn plan_binary_op(
        &self,
        expr: RawBinaryExpr,
        schema: &DFSchema,
    ) -> DfResult<PlannerResult<RawBinaryExpr>> {
        if expr.op != BinaryOperator::Multiply {
            return Ok(PlannerResult::Original(expr));
        }
        let kind = |e: &Expr| e.get_type(schema).ok();
        let (interval, number) = match (kind(&expr.left), kind(&expr.right)) {
            (Some(DataType::Interval(_)), Some(n)) if n.is_numeric() => (&expr.left, &expr.right),
            (Some(n), Some(DataType::Interval(_))) if n.is_numeric() => (&expr.right, &expr.left),
            _ => return Ok(PlannerResult::Original(expr)),
        };
        let args = vec![
            cast(interval.clone(), INTERVAL),
            cast(number.clone(), DataType::Float64),
        ];
        Ok(PlannerResult::Planned(interval_times().call(args)))
    }
}

/// `interval_times(interval, float8)`: the interval multiplied (see the module's notes).
pub(crate) fn interval_times() -> ScalarUDF {
    ScalarUDF::new_from_impl(Times {
        signature: Signature::exact(vec![INTERVAL, DataType::Float64], Volatility::Immutable),
    })
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct Times {
    signature: Signature,
}

impl ScalarUDFImpl for Times {
    fn name(&self) -> &str {
        "interval_times"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _: &[DataType]) -> DfResult<DataType> {
        Ok(INTERVAL)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        let rows = args.number_rows;
        let arrays = ColumnarValue::values_to_arrays(&args.args)?;
        let spans = arrays[0].as_primitive::<arrow::datatypes::IntervalMonthDayNanoType>();
        let factors = arrays[1].as_primitive::<arrow::datatypes::Float64Type>();
        let out = (0..rows)
            .map(|i| match spans.is_null(i) || factors.is_null(i) {
                true => Ok(None),
                false => times(spans.value(i), factors.value(i)).map(Some),
            })
            .collect::<DfResult<IntervalMonthDayNanoArray>>()?;
        let out: ArrayRef = Arc::new(out);
        match args
            .args
            .iter()
            .all(|a| matches!(a, ColumnarValue::Scalar(_)))
        {
            true => Ok(ColumnarValue::Scalar(
                datafusion::common::ScalarValue::try_from_array(&out, 0)?,
            )),
            false => Ok(ColumnarValue::Array(out)),
        }
    }
}

/// `span * factor` as PostgreSQL's `interval_mul` computes it.
fn times(span: IntervalMonthDayNano, factor: f64) -> DfResult<IntervalMonthDayNano> {
    let months = span.months as f64 * factor;
    let whole_months = months.trunc();
    let days = span.days as f64 * factor + (months - whole_months) * 30.0;
    let whole_days = days.trunc();
    let nanos = (span.nanoseconds as f64 * factor + (days - whole_days) * NANOS_PER_DAY).round();
    let fits = |v: f64, min: f64, max: f64| v.is_finite() && v >= min && v <= max;
    let (i32_min, i32_max) = (i32::MIN as f64, i32::MAX as f64);
    if !fits(whole_months, i32_min, i32_max)
        || !fits(whole_days, i32_min, i32_max)
        || !fits(nanos, i64::MIN as f64, i64::MAX as f64)
    {
        return exec_err!("interval out of range: an interval multiplied by {factor}");
    }
    Ok(IntervalMonthDayNano::new(
        whole_months as i32,
        whole_days as i32,
        nanos as i64,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(months: i32, days: i32, nanos: i64) -> IntervalMonthDayNano {
        IntervalMonthDayNano::new(months, days, nanos)
    }

    #[test]
    fn fields_multiply_and_fractions_carry_as_postgresql_carries_them() {
        let minute = 60_000_000_000;
        assert_eq!(
            times(span(0, 0, 5 * minute), 3.0).unwrap(),
            span(0, 0, 15 * minute)
        );
        assert_eq!(times(span(0, 0, 5 * minute), 0.0).unwrap(), span(0, 0, 0));
        assert_eq!(
            times(span(0, 0, minute), -2.0).unwrap(),
            span(0, 0, -2 * minute)
        );
        // Half a month is 15 days; half a day is 12 hours (PostgreSQL: '1 mon 1 day' * 0.5 =
        // '15 days 12:00:00').
        assert_eq!(
            times(span(1, 1, 0), 0.5).unwrap(),
            span(0, 15, 12 * 60 * minute)
        );
        assert!(times(span(i32::MAX, 0, 0), 2.0).is_err());
        assert!(times(span(0, 0, minute), f64::NAN).is_err());
    }
}
