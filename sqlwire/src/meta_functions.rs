//! Functions psql's meta-commands (`\dt+`, `\dn+`, `\df`, `\dT`) and SQLAlchemy's inspector
//! call that the `pg_catalog` emulation lacks. Datasets have no comments and no size of their own in the catalogue, so the
//! answers are PostgreSQL's for "none": NULL.

use std::ops::ControlFlow;
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, StringArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Int64Type};
use datafusion::common::{exec_err, Result as DfResult, ScalarValue};
use datafusion::logical_expr::{
    create_udf, ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use datafusion::sql::sqlparser::ast::{
    Expr, FunctionArg, FunctionArgExpr, FunctionArguments, Statement, Value,
};
use rapid_actors::sql_walk::rewrite_expressions;

/// Every function of this module.
pub(crate) fn all() -> Vec<ScalarUDF> {
    let mut out = vec![size_pretty(), ScalarUDF::from(JsonBuildObject::new())];
    for name in ["pg_table_size", "pg_indexes_size"] {
        out.push(constant(
            name,
            vec![DataType::Int64],
            ScalarValue::Int64(None),
        ));
    }
    let none = ScalarValue::Utf8(None);
    out.push(constant(
        "obj_description",
        vec![DataType::Int64, DataType::Utf8],
        none.clone(),
    ));
    out.push(constant(
        "shobj_description",
        vec![DataType::Int64, DataType::Utf8],
        none.clone(),
    ));
    out.push(constant(
        "col_description",
        vec![DataType::Int64, DataType::Int64],
        none.clone(),
    ));
    // The JDBC driver's getIndexInfo and SQLAlchemy's get_indexes name an index's columns with
    // it; no index exists here (`catalogue_tables`), so no row ever reaches it.
    out.push(constant(
        "pg_get_indexdef",
        vec![DataType::Int64, DataType::Int64, DataType::Boolean],
        none,
    ));
    for name in [
        "pg_function_is_visible",
        "pg_type_is_visible",
        "pg_operator_is_visible",
        "pg_collation_is_visible",
        "pg_conversion_is_visible",
    ] {
        let visible = ScalarValue::Boolean(Some(true));
        out.push(constant(name, vec![DataType::Int64], visible));
    }
    out
}

/// The description functions, which answer NULL whatever they are given (nothing here has a
/// comment).
const DESCRIPTIONS: &[&str] = &["obj_description", "shobj_description", "col_description"];

/// Their arguments left unevaluated: a NULL each, so the statement plans whatever the client
/// computed them with (Metabase's `col_description(format('%I.%I', s, t)::regclass::oid, n)`,
/// a text-to-`regclass` cast DataFusion cannot evaluate); whether any call was found.
pub(crate) fn unevaluated_descriptions(statements: &mut Vec<Statement>) -> bool {
    let mut changed = false;
    let _ = rewrite_expressions(statements, &mut |expr| {
        if let Expr::Function(f) = expr {
            let name = f
                .name
                .0
                .last()
                .and_then(|p| p.as_ident())
                .map(|i| i.value.to_lowercase());
            if name.is_some_and(|n| DESCRIPTIONS.contains(&n.as_str())) {
                if let FunctionArguments::List(list) = &mut f.args {
                    for arg in list.args.iter_mut() {
                        let null = FunctionArgExpr::Expr(Expr::value(Value::Null));
                        match arg {
                            FunctionArg::Unnamed(a) if *a != null => *a = null,
                            _ => continue,
                        }
                        changed = true;
                    }
                }
            }
        }
        ControlFlow::<()>::Continue(())
    });
    changed
}

/// `name(args)` answering `value` for every row. Any argument of each position's kind is taken
/// (`args` give the arity): clients pass object ids as `int4`, `oid` or `regclass` and column
/// numbers as `int2` or `int8` (Metabase's `col_description(oid, ordinal_position)`), and an
/// exact signature refused all but one spelling.
fn constant(name: &str, args: Vec<DataType>, value: ScalarValue) -> ScalarUDF {
    ScalarUDF::new_from_impl(Constant {
        name: name.to_string(),
        signature: Signature::any(args.len(), Volatility::Immutable),
        value,
    })
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct Constant {
    name: String,
    signature: Signature,
    value: ScalarValue,
}

impl ScalarUDFImpl for Constant {
    fn name(&self) -> &str {
        &self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _: &[DataType]) -> DfResult<DataType> {
        Ok(self.value.data_type())
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        let any_array = args
            .args
            .iter()
            .any(|a| matches!(a, ColumnarValue::Array(_)));
        Ok(match any_array {
            true => ColumnarValue::Array(self.value.to_array_of_size(args.number_rows)?),
            false => ColumnarValue::Scalar(self.value.clone()),
        })
    }
}

/// PostgreSQL's `pg_size_pretty(bigint)`: bytes below 10,240, then the first of kB, MB, GB, TB
/// in which the size is below 10,240 units, rounded half away from zero (as `dbsize.c`).
pub(crate) fn pretty(bytes: i64) -> String {
    let mut size = bytes;
    if size.abs() < 10 * 1024 {
        return format!("{size} bytes");
    }
    for unit in ["kB", "MB", "GB", "TB"] {
        // One unit up, keeping one more bit to round half up.
        let half = size / 512;
        if half.abs() < 20 * 1024 - 1 || unit == "TB" {
            let rounded = (half + half.signum()) / 2;
            return format!("{rounded} {unit}");
        }
        size /= 1024;
    }
    unreachable!("TB answers")
}

fn size_pretty() -> ScalarUDF {
    create_udf(
        "pg_size_pretty",
        vec![DataType::Int64],
        DataType::Utf8,
        Volatility::Immutable,
        Arc::new(|args: &[ColumnarValue]| {
            let sizes = match &args[0] {
                ColumnarValue::Array(a) => a.clone(),
                ColumnarValue::Scalar(s) => s.to_array()?,
            };
            let out: StringArray = sizes
                .as_primitive::<Int64Type>()
                .iter()
                .map(|s| s.map(pretty))
                .collect();
            Ok(ColumnarValue::Array(Arc::new(out)))
        }),
    )
}

/// `json_build_object(key, value, ...)` (SQLAlchemy's column inspection asks for a column's
/// identity and collation with it): the object as JSON text.
#[derive(Debug, PartialEq, Eq, Hash)]
struct JsonBuildObject {
    signature: Signature,
}

impl JsonBuildObject {
    fn new() -> JsonBuildObject {
        JsonBuildObject {
            signature: Signature::variadic_any(Volatility::Immutable),
        }
    }
}

impl ScalarUDFImpl for JsonBuildObject {
    fn name(&self) -> &str {
        "json_build_object"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _: &[DataType]) -> DfResult<DataType> {
        Ok(DataType::Utf8)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        if !args.args.len().is_multiple_of(2) {
            return exec_err!("json_build_object takes keys and values in pairs");
        }
        let columns = ColumnarValue::values_to_arrays(&args.args)?;
        let texts = columns
            .iter()
            .map(|c| cast(c, &DataType::Utf8))
            .collect::<DfResult<Vec<ArrayRef>, _>>()?;
        let mut out = Vec::with_capacity(args.number_rows);
        for row in 0..args.number_rows {
            let mut object = serde_json_free::Object::default();
            for pair in texts.chunks(2).zip(columns.chunks(2)) {
                let ([key, value], [_, raw]) = (pair.0, pair.1) else {
                    continue;
                };
                let key = key.as_string::<i32>();
                let value_text = value.as_string::<i32>();
                let json = match (value.is_null(row), raw.data_type()) {
                    (true, _) => "null".to_string(),
                    (false, t) if t.is_numeric() || *t == DataType::Boolean => {
                        value_text.value(row).to_string()
                    }
                    (false, _) => serde_json_free::quoted(value_text.value(row)),
                };
                object.push(key.value(row), json);
            }
            out.push(Some(object.finish()));
        }
        Ok(ColumnarValue::Array(Arc::new(StringArray::from(out))))
    }
}

/// JSON text without a JSON library (this crate has none): strings quoted and escaped.
mod serde_json_free {
    pub(super) fn quoted(text: &str) -> String {
        let mut out = String::with_capacity(text.len() + 2);
        out.push('"');
        for c in text.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
                c => out.push(c),
            }
        }
        out.push('"');
        out
    }

    #[derive(Default)]
    pub(super) struct Object(Vec<String>);

    impl Object {
        pub(super) fn push(&mut self, key: &str, json: String) {
            self.0.push(format!("{} : {json}", quoted(key)));
        }

        pub(super) fn finish(self) -> String {
            format!("{{{}}}", self.0.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::pretty;

    #[test]
    fn sizes_read_as_postgresql_prints_them() {
        assert_eq!(pretty(0), "0 bytes");
        assert_eq!(pretty(10239), "10239 bytes");
        assert_eq!(pretty(10240), "10 kB");
        assert_eq!(pretty(1_048_576), "1024 kB");
        assert_eq!(pretty(20 * 1024 * 1024), "20 MB");
    }

    #[test]
    fn json_build_object_quotes_text_and_keeps_numbers() {
        use super::serde_json_free::{quoted, Object};
        assert_eq!(quoted("a\"b\\c\n"), "\"a\\\"b\\\\c\\u000a\"");
        let mut object = Object::default();
        object.push("name", quoted("C"));
        object.push("n", "1".to_string());
        assert_eq!(object.finish(), "{\"name\" : \"C\", \"n\" : 1}");
    }
}
