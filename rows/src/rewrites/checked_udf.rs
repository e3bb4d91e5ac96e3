//! Integer arithmetic that refuses to wrap. DataFusion 55 evaluates `+ - *` and unary `-` on
//! integers with wrapping kernels (`i64::MAX + 1` becomes `i64::MIN`); these functions use arrow's
//! checked kernels instead (on the operands' own type, so result types do not change) and fail
//! with a message naming the expression. [`super::checked`]
//! puts them in place of the wrapping operators before a plan runs.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, Int64Array};
use arrow::compute::kernels::numeric;
use arrow::datatypes::{DataType, Decimal128Type};
use datafusion::common::{exec_err, Result as DfResult, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, Expr, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use datafusion::physical_expr_common::datum::apply;

/// The precision and scale integer sums are accumulated in: exact for any realistic row count.
pub(super) const SUM_PRECISION: u8 = 38;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum IntOp {
    Add,
    Sub,
    Mul,
    Neg,
    /// An exact (Decimal128) integer sum brought back to int64.
    FromSum,
}

#[derive(Debug, PartialEq, Eq, Hash)]
pub(super) struct CheckedInt {
    op: IntOp,
    /// The expression as the user wrote it, for the error message.
    label: String,
    /// The operands' integer type (the result's too, as with the operator it replaces), or
    /// int64 for a sum.
    result: DataType,
    signature: Signature,
}

impl CheckedInt {
    /// A call of the checked operation over `args`, integers of type `operands` (or, for
    /// `FromSum`, the Decimal128 sum).
    pub(super) fn call(op: IntOp, label: String, args: Vec<Expr>, operands: DataType) -> Expr {
        let (types, result) = match op {
            IntOp::Add | IntOp::Sub | IntOp::Mul => (vec![operands.clone(); 2], operands),
            IntOp::Neg => (vec![operands.clone()], operands),
            IntOp::FromSum => (
                vec![DataType::Decimal128(SUM_PRECISION, 0)],
                DataType::Int64,
            ),
        };
        let udf = CheckedInt {
            op,
            label,
            result,
            signature: Signature::exact(types, Volatility::Immutable),
        };
        ScalarUDF::new_from_impl(udf).call(args)
    }

    fn overflow<T>(&self) -> DfResult<T> {
        let range = match self.result {
            DataType::Int64 => format!(" ({} to {})", i64::MIN, i64::MAX),
            _ => String::new(),
        };
        exec_err!(
            "integer overflow: [{}] is outside the {} range{range}",
            self.label,
            self.result.to_string().to_lowercase()
        )
    }
}

impl ScalarUDFImpl for CheckedInt {
    fn name(&self) -> &str {
        match self.op {
            IntOp::Add => "checked_add",
            IntOp::Sub => "checked_sub",
            IntOp::Mul => "checked_mul",
            IntOp::Neg => "checked_neg",
            IntOp::FromSum => "checked_sum",
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _: &[DataType]) -> DfResult<DataType> {
        Ok(self.result.clone())
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        let result = match (self.op, args.args.as_slice()) {
            (IntOp::Add, [l, r]) => apply(l, r, numeric::add),
            (IntOp::Sub, [l, r]) => apply(l, r, numeric::sub),
            (IntOp::Mul, [l, r]) => apply(l, r, numeric::mul),
            (IntOp::Neg, [v]) => return self.unary(v, |a| numeric::neg(a).ok()),
            (IntOp::FromSum, [v]) => return self.unary(v, decimal_to_i64),
            _ => return exec_err!("{}: wrong number of arguments", self.name()),
        };
        // Arrow's only error from a checked kernel on two int64 inputs is the overflow.
        result.or_else(|_| self.overflow())
    }
}

impl CheckedInt {
    /// Applies `f` to the argument as an array; `None` means an overflow.
    fn unary(
        &self,
        value: &ColumnarValue,
        f: impl Fn(&ArrayRef) -> Option<ArrayRef>,
    ) -> DfResult<ColumnarValue> {
        match value {
            ColumnarValue::Array(a) => match f(a) {
                Some(out) => Ok(ColumnarValue::Array(out)),
                None => self.overflow(),
            },
            ColumnarValue::Scalar(s) => match f(&s.to_array()?) {
                Some(out) => Ok(ColumnarValue::Scalar(ScalarValue::try_from_array(&out, 0)?)),
                None => self.overflow(),
            },
        }
    }
}

/// Decimal128(38, 0) values as int64, or `None` when one does not fit.
fn decimal_to_i64(array: &ArrayRef) -> Option<ArrayRef> {
    let decimals = array.as_primitive_opt::<Decimal128Type>()?;
    let mut out = Vec::with_capacity(decimals.len());
    for i in 0..decimals.len() {
        out.push(if decimals.is_null(i) {
            None
        } else {
            Some(i64::try_from(decimals.value(i)).ok()?)
        });
    }
    Some(Arc::new(Int64Array::from(out)))
}
