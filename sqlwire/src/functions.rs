//! Functions PostgreSQL clients call in their catalog queries that the `pg_catalog` emulation
//! lacks.

use std::sync::Arc;

use datafusion::arrow::array::{
    ArrayRef, AsArray, Int16Builder, Int32Array, Int32Builder, StructArray,
};
use datafusion::arrow::datatypes::{DataType, Field, Fields};
use datafusion::common::{exec_err, Result as DfResult, ScalarValue};
use datafusion::logical_expr::{create_udf, ColumnarValue, ScalarUDF, Volatility};

/// The first argument of a call as an array of text (`refusal` when it is something else).
fn text_argument(args: &[ColumnarValue], refusal: &str) -> DfResult<ArrayRef> {
    let values = match &args[0] {
        ColumnarValue::Array(a) => a.clone(),
        ColumnarValue::Scalar(s) => s.to_array()?,
    };
    match values.as_string_opt::<i32>() {
        Some(_) => Ok(values),
        None => exec_err!("{refusal}"),
    }
}

/// What `version()` answers over the wire: clients (SQLAlchemy's dialect) read the PostgreSQL
/// version it starts with, as in `server_version` (pgwire's 16.6).
pub(crate) const VERSION: &str =
    "PostgreSQL 16.6 (rapid-rs, Apache DataFusion 55) on x86_64-pc-linux-gnu";

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

/// PostgreSQL's fixed object ids of the types a session can answer with, by the names
/// `to_regtype` accepts for them.
const TYPE_OIDS: &[(&str, i32)] = &[
    ("bool", 16),
    ("boolean", 16),
    ("bytea", 17),
    ("int8", 20),
    ("bigint", 20),
    ("int2", 21),
    ("smallint", 21),
    ("int4", 23),
    ("integer", 23),
    ("int", 23),
    ("text", 25),
    ("oid", 26),
    ("float4", 700),
    ("real", 700),
    ("float8", 701),
    ("double precision", 701),
    ("varchar", 1043),
    ("character varying", 1043),
    ("date", 1082),
    ("time", 1083),
    ("timestamp", 1114),
    ("timestamp without time zone", 1114),
    ("timestamptz", 1184),
    ("timestamp with time zone", 1184),
    ("interval", 1186),
    ("numeric", 1700),
    ("decimal", 1700),
];

/// `to_regtype(name)`: the type's object id, NULL for a type this server does not have
/// (psycopg's `TypeInfo.fetch`, which SQLAlchemy calls for `hstore` on connect, reads a NULL as
/// "no such type").
pub(crate) fn to_regtype() -> ScalarUDF {
    create_udf(
        "to_regtype",
        vec![DataType::Utf8],
        DataType::Int32,
        Volatility::Immutable,
        Arc::new(|args: &[ColumnarValue]| {
            let names = text_argument(args, "to_regtype takes a type's name as text")?;
            let oids: Int32Array = names
                .as_string::<i32>()
                .iter()
                .map(|name| {
                    let name = name?.trim().to_lowercase();
                    let name = name.strip_prefix("pg_catalog.").unwrap_or(&name);
                    TYPE_OIDS
                        .iter()
                        .find(|(n, _)| *n == name)
                        .map(|(_, oid)| *oid)
                })
                .collect();
            Ok(ColumnarValue::Array(Arc::new(oids)))
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
            let keys = text_argument(args, "_pg_expandarray takes an index's key list as text")?;
            let (mut x, mut n) = (Int16Builder::new(), Int32Builder::new());
            for key in keys.as_string::<i32>().iter() {
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
    fn to_regtype_knows_the_types_a_session_answers_with_only() {
        let names: ArrayRef = Arc::new(StringArray::from(vec![
            Some("integer"),
            Some("pg_catalog.TEXT"),
            Some("hstore"),
            None,
        ]));
        let out = to_regtype()
            .invoke_with_args(ScalarFunctionArgs {
                args: vec![ColumnarValue::Array(names)],
                arg_fields: vec![Arc::new(Field::new("n", DataType::Utf8, true))],
                number_rows: 4,
                return_field: Arc::new(Field::new("r", DataType::Int32, true)),
                config_options: Default::default(),
            })
            .unwrap();
        let ColumnarValue::Array(out) = out else {
            panic!("an array")
        };
        let out = out.as_primitive::<Int32Type>();
        assert_eq!((out.value(0), out.value(1)), (23, 25));
        assert!(out.is_null(2) && out.is_null(3));
    }

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
