//! Functions PostgreSQL clients call in their catalog queries that the `pg_catalog` emulation
//! lacks.

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, AsArray, Int16Builder, Int32Builder, StructArray};
use datafusion::arrow::datatypes::{DataType, Field, Fields};
use datafusion::common::{exec_err, ScalarValue};
use datafusion::logical_expr::{create_udf, ColumnarValue, ScalarUDF, Volatility};

/// What `version()` answers over the wire: clients (SQLAlchemy's dialect) read the PostgreSQL
/// version it starts with, as in `server_version` (pgwire's 16.6).
pub const VERSION: &str = "PostgreSQL 16.6 (rapid-rs, Apache DataFusion 55) on x86_64-pc-linux-gnu";

pub(crate) fn version() -> ScalarUDF {
    create_udf(
        "version",
        vec![],
        DataType::Utf8,
        Volatility::Stable,
        Arc::new(|_: &[ColumnarValue]| {
            Ok(ColumnarValue::Scalar(ScalarValue::Utf8(Some(
                VERSION.to_string(),
            ))))
        }),
    )
}

fn key_fields() -> Fields {
    Fields::from(vec![
        Field::new("x", DataType::Int16, true),
        Field::new("n", DataType::Int32, true),
    ])
}

/// `information_schema._pg_expandarray(indkey)`, which the JDBC driver's
/// `DatabaseMetaData.getPrimaryKeys` (DBeaver, Metabase) and `getIndexInfo` call. In PostgreSQL
/// it returns a row `(x, n)` per element of an index's key list; DataFusion has no set-returning
/// functions in a select list, so here it answers the first key at position 1. That is exact for
/// datasets (they have no index, so no row reaches it) and for single-column keys of the
/// emulated system indexes; for their multi-column keys it names the first column only.
pub(crate) fn expand_array() -> ScalarUDF {
    create_udf(
        "_pg_expandarray",
        vec![DataType::Utf8],
        DataType::Struct(key_fields()),
        Volatility::Immutable,
        Arc::new(|args: &[ColumnarValue]| {
            let keys = match &args[0] {
                ColumnarValue::Array(a) => a.clone(),
                ColumnarValue::Scalar(s) => s.to_array()?,
            };
            let Some(keys) = keys.as_string_opt::<i32>() else {
                return exec_err!("_pg_expandarray takes an index's key list as text");
            };
            let (mut x, mut n) = (Int16Builder::new(), Int32Builder::new());
            for key in keys.iter() {
                // An int2vector's text: the column numbers separated by spaces.
                match key.and_then(|k| k.split_whitespace().next()?.parse::<i16>().ok()) {
                    Some(first) => {
                        x.append_value(first);
                        n.append_value(1);
                    }
                    None => {
                        x.append_null();
                        n.append_null();
                    }
                }
            }
            let columns: Vec<ArrayRef> = vec![Arc::new(x.finish()), Arc::new(n.finish())];
            let answer = StructArray::try_new(key_fields(), columns, None)?;
            Ok(ColumnarValue::Array(Arc::new(answer)))
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{Array, StringArray};
    use datafusion::arrow::datatypes::{Int16Type, Int32Type};
    use datafusion::logical_expr::ScalarFunctionArgs;

    #[test]
    fn expand_array_answers_the_first_key_at_position_one() {
        let keys: ArrayRef = Arc::new(StringArray::from(vec![Some("3 1"), Some(""), None]));
        let udf = expand_array();
        let field = Arc::new(Field::new("k", DataType::Utf8, true));
        let out = udf
            .invoke_with_args(ScalarFunctionArgs {
                args: vec![ColumnarValue::Array(keys)],
                arg_fields: vec![field],
                number_rows: 3,
                return_field: Arc::new(Field::new("r", DataType::Struct(key_fields()), true)),
                config_options: Default::default(),
            })
            .unwrap();
        let ColumnarValue::Array(out) = out else {
            panic!("an array")
        };
        let out = out.as_struct();
        let x = out.column(0).as_primitive::<Int16Type>();
        let n = out.column(1).as_primitive::<Int32Type>();
        assert_eq!((x.value(0), n.value(0)), (3, 1));
        assert!(x.is_null(1) && n.is_null(1));
        assert!(x.is_null(2) && n.is_null(2));
    }
}
