//! `SET search_path`: unqualified table names resolve in the first schema of the path the
//! session's database has, as in PostgreSQL (`public` when none is named). Superset runs
//! `set search_path = "<schema>"` before each query of a schema chosen in SQL Lab or of a
//! dataset (PostgresEngineSpec.get_prequeries), so that `SELECT ... FROM orders` reads
//! that schema's `orders`; the library answered SET and kept resolving names in `public`.
//! `current_schema()` answers the schema names now resolve in.

use std::sync::Arc;

use datafusion::arrow::datatypes::DataType;
use datafusion::common::ScalarValue;
use datafusion::logical_expr::{create_udf, ColumnarValue, ScalarUDF, Volatility};
use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::ast::{ContextModifier, Expr, Set, Statement, Value};
use datafusion::sql::sqlparser::dialect::PostgreSqlDialect;
use datafusion::sql::sqlparser::parser::Parser;

/// The schema unqualified names resolve in when the path names none the database has.
const DEFAULT: &str = "public";

/// Follows each `SET search_path` of `sql` in `ctx`'s session (a `SET LOCAL`, which lasts to the
/// end of a transaction, is left alone); whether any.
pub(crate) fn follow(ctx: &SessionContext, sql: &str) -> bool {
    if !sql.to_ascii_lowercase().contains("search_path") {
        return false;
    }
    let Ok(statements) = Parser::parse_sql(&PostgreSqlDialect {}, sql) else {
        return false;
    };
    let mut followed = false;
    for statement in &statements {
        if let Some(path) = search_path(statement) {
            let schema = first_existing(ctx, &path);
            let state = ctx.state_ref();
            state
                .write()
                .config_mut()
                .options_mut()
                .catalog
                .default_schema = schema.clone();
            ctx.register_udf(current_schema(schema));
            followed = true;
        }
    }
    followed
}

/// The schemas a `SET search_path` names, in order (empty for `DEFAULT`).
fn search_path(statement: &Statement) -> Option<Vec<String>> {
    let Statement::Set(Set::SingleAssignment {
        scope,
        hivevar: false,
        variable,
        values,
    }) = statement
    else {
        return None;
    };
    let named = variable.to_string().eq_ignore_ascii_case("search_path");
    if !named || matches!(scope, Some(ContextModifier::Local)) {
        return None;
    }
    let names = values.iter().filter_map(|v| match v {
        Expr::Identifier(i)
            if i.quote_style.is_none() && i.value.eq_ignore_ascii_case("default") =>
        {
            None
        }
        Expr::Identifier(i) => Some(i.value.clone()),
        Expr::Value(v) => match &v.value {
            Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => Some(s.clone()),
            _ => None,
        },
        _ => None,
    });
    Some(names.collect())
}

/// The first of `path` that is a schema of the session's database, else [`DEFAULT`].
fn first_existing(ctx: &SessionContext, path: &[String]) -> String {
    let state = ctx.state_ref();
    let database = state
        .read()
        .config()
        .options()
        .catalog
        .default_catalog
        .clone();
    let schemas = ctx
        .catalog(&database)
        .map(|c| c.schema_names())
        .unwrap_or_default();
    path.iter()
        .find(|name| schemas.contains(name))
        .cloned()
        .unwrap_or_else(|| DEFAULT.to_string())
}

/// `current_schema()` answering `schema`.
fn current_schema(schema: String) -> ScalarUDF {
    create_udf(
        "current_schema",
        vec![],
        DataType::Utf8,
        Volatility::Stable,
        Arc::new(move |_: &[ColumnarValue]| {
            Ok(ColumnarValue::Scalar(ScalarValue::Utf8(Some(
                schema.clone(),
            ))))
        }),
    )
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use datafusion::arrow::array::{Int64Array, RecordBatch};
    use datafusion::arrow::datatypes::{DataType, Field, Schema};
    use datafusion::datasource::MemTable;
    use datafusion::prelude::{SessionConfig, SessionContext};

    use super::follow;

    /// A session in database `default` whose schema `sales` holds `orders` (one row, 7).
    async fn session() -> SessionContext {
        let config = SessionConfig::new().with_default_catalog_and_schema("default", "public");
        let ctx = SessionContext::new_with_config(config);
        ctx.sql("CREATE SCHEMA sales").await.unwrap();
        let schema = Arc::new(Schema::new(vec![Field::new("n", DataType::Int64, true)]));
        let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(Int64Array::from(vec![7]))]);
        let table = MemTable::try_new(schema, vec![vec![batch.unwrap()]]).unwrap();
        ctx.register_table("sales.orders", Arc::new(table)).unwrap();
        ctx
    }

    use crate::test_answers::answer;

    #[tokio::test]
    async fn unqualified_names_resolve_in_the_first_schema_of_the_path_that_exists() {
        let ctx = session().await;
        assert!(answer(&ctx, "SELECT n FROM orders").await.is_err());
        // Superset's prequery, a quoted identifier.
        assert!(follow(&ctx, "set search_path = \"sales\""));
        assert!(answer(&ctx, "SELECT n FROM orders")
            .await
            .unwrap()
            .contains("| 7 |"));
        let current = answer(&ctx, "SELECT current_schema() AS s").await.unwrap();
        assert!(current.contains("| sales |"), "{current}");
        // A path of schemas that do not exist first, one that does after.
        assert!(follow(
            &ctx,
            "SET search_path TO \"$user\", 'nowhere', public"
        ));
        assert!(answer(&ctx, "SELECT n FROM orders").await.is_err());
        assert!(follow(&ctx, "SET SESSION search_path = nowhere, sales"));
        assert!(answer(&ctx, "SELECT n FROM orders").await.is_ok());
        // LOCAL lasts to the end of a transaction: not followed; DEFAULT is `public`.
        assert!(!follow(&ctx, "SET LOCAL search_path = public"));
        assert!(answer(&ctx, "SELECT n FROM orders").await.is_ok());
        assert!(follow(&ctx, "SET search_path TO DEFAULT"));
        assert!(answer(&ctx, "SELECT n FROM orders").await.is_err());
        assert!(!follow(&ctx, "SET datestyle = 'ISO'"));
    }
}
