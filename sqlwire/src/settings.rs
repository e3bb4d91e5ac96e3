//! The server settings clients read, from one list: the rows of `pg_settings` and the answers of
//! `current_setting(name)`.
//! - `standard_conforming_strings`: the emulation's own `pg_settings` row;
//! - `max_index_keys`: PostgreSQL's compiled-in 32, which the JDBC driver reads before
//!   `getImportedKeys` and `getExportedKeys` (DBeaver, Metabase);
//! - `default_table_access_method`: `heap`, which SQLAlchemy 2's table reflection
//!   (`Table(..., autoload_with=engine)`, Superset's dataset creation) compares each table's
//!   access method with; no dataset has one (`pg_class.relam` is 0).

use std::sync::Arc;

use datafusion::arrow::array::{new_null_array, Array, ArrayRef, AsArray, RecordBatch};
use datafusion::arrow::array::{StringArray, StringBuilder};
use datafusion::arrow::datatypes::{DataType, SchemaRef};
use datafusion::catalog::TableProvider;
use datafusion::common::{exec_err, Result as DfResult};
use datafusion::datasource::MemTable;
use datafusion::logical_expr::{create_udf, ColumnarValue, ScalarUDF, Volatility};

/// Each setting's name and value, as `pg_settings` lists them.
const SETTINGS: &[(&str, &str)] = &[
    ("standard_conforming_strings", "on"),
    ("max_index_keys", "32"),
    ("default_table_access_method", "heap"),
];

/// A setting's value by its name (PostgreSQL's names are case-insensitive).
fn value(name: &str) -> Option<&'static str> {
    SETTINGS
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name.trim()))
        .map(|(_, v)| *v)
}

/// `pg_settings` (under the emulation's columns, `schema`) with [`SETTINGS`] as its rows.
pub(crate) fn table(schema: SchemaRef) -> DfResult<Arc<dyn TableProvider>> {
    let names = StringArray::from_iter_values(SETTINGS.iter().map(|s| s.0));
    let values = StringArray::from_iter_values(SETTINGS.iter().map(|s| s.1));
    let columns = schema
        .fields()
        .iter()
        .map(|f| match f.name().as_str() {
            "name" => Arc::new(names.clone()) as ArrayRef,
            "setting" => Arc::new(values.clone()),
            _ => new_null_array(f.data_type(), SETTINGS.len()),
        })
        .collect();
    let batch = RecordBatch::try_new(schema.clone(), columns)?;
    Ok(Arc::new(MemTable::try_new(schema, vec![vec![batch]])?))
}

/// `current_setting(name)`: a setting of [`SETTINGS`]; any other is refused as PostgreSQL
/// refuses it (`unrecognized configuration parameter`).
pub(crate) fn current_setting() -> ScalarUDF {
    create_udf(
        "current_setting",
        vec![DataType::Utf8],
        DataType::Utf8,
        Volatility::Stable,
        Arc::new(|args: &[ColumnarValue]| {
            let names = match &args[0] {
                ColumnarValue::Array(a) => a.clone(),
                ColumnarValue::Scalar(s) => s.to_array()?,
            };
            let Some(names) = names.as_string_opt::<i32>() else {
                return exec_err!("current_setting takes a setting's name as text");
            };
            let mut out = StringBuilder::with_capacity(names.len(), 8 * names.len());
            for name in names.iter() {
                match name.map(|n| (n, value(n))) {
                    None => out.append_null(),
                    Some((_, Some(v))) => out.append_value(v),
                    Some((n, None)) => {
                        return exec_err!("unrecognized configuration parameter \"{n}\"")
                    }
                }
            }
            Ok(ColumnarValue::Array(Arc::new(out.finish())))
        }),
    )
}

#[cfg(test)]
mod tests {
    use datafusion::prelude::SessionContext;

    use crate::test_answers::answer;

    #[tokio::test]
    async fn current_setting_answers_the_listed_settings_and_refuses_others() {
        let ctx = SessionContext::new();
        ctx.register_udf(super::current_setting());
        let heap = answer(
            &ctx,
            "SELECT current_setting('default_table_access_method') AS v",
        );
        assert!(heap.await.unwrap().contains("| heap |"));
        let upper = answer(&ctx, "SELECT current_setting('MAX_INDEX_KEYS') AS v");
        assert!(upper.await.unwrap().contains("| 32 |"));
        let unknown = answer(&ctx, "SELECT current_setting('no_such_setting')").await;
        assert!(unknown
            .unwrap_err()
            .contains("unrecognized configuration parameter \"no_such_setting\""),);
    }
}
