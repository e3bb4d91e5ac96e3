//! The `hash` mask: HMAC-SHA256 of a value's text under the instance's mask key, in hex. Equal
//! values give equal hashes (masked columns stay joinable); the key never appears in a plan.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, StringBuilder};
use arrow::datatypes::DataType;
use datafusion::common::{exec_err, Result as DfResult, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, Expr, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use ring::hmac;

#[derive(PartialEq, Eq, Hash)]
pub struct MaskHash {
    key: Arc<Vec<u8>>,
    signature: Signature,
}

impl std::fmt::Debug for MaskHash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MaskHash")
    }
}

impl MaskHash {
    /// The masked text of `text` (a Utf8 expression).
    pub fn call(key: Arc<Vec<u8>>, text: Expr) -> Expr {
        let udf = MaskHash {
            key,
            signature: Signature::exact(vec![DataType::Utf8], Volatility::Immutable),
        };
        ScalarUDF::new_from_impl(udf).call(vec![text])
    }

    fn hash(&self, key: &hmac::Key, value: &str) -> String {
        let tag = hmac::sign(key, value.as_bytes());
        tag.as_ref().iter().map(|b| format!("{b:02x}")).collect()
    }
}

impl ScalarUDFImpl for MaskHash {
    fn name(&self) -> &str {
        "mask_hash"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _: &[DataType]) -> DfResult<DataType> {
        Ok(DataType::Utf8)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        let key = hmac::Key::new(hmac::HMAC_SHA256, &self.key);
        match args.args.as_slice() {
            [ColumnarValue::Scalar(ScalarValue::Utf8(v))] => Ok(ColumnarValue::Scalar(
                ScalarValue::Utf8(v.as_deref().map(|v| self.hash(&key, v))),
            )),
            [ColumnarValue::Array(a)] => {
                let text = a.as_string::<i32>();
                let mut out = StringBuilder::with_capacity(text.len(), text.len() * 64);
                for v in text.iter() {
                    out.append_option(v.map(|v| self.hash(&key, v)));
                }
                Ok(ColumnarValue::Array(Arc::new(out.finish()) as ArrayRef))
            }
            _ => exec_err!("mask_hash takes one text argument"),
        }
    }
}
