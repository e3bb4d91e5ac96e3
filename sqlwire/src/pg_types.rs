//! PostgreSQL's names for the types of `information_schema.columns`, which DataFusion fills with
//! its own (`Float64`, `Utf8`): clients that read column types from there (DuckDB's `postgres`
//! extension with `pg_use_information_schema_introspection`, SQLAlchemy, Superset) map a name
//! they do not know to text, and then cannot `sum` a number. The rewrite ([`crate::rewrite`])
//! reads the view through [`columns_view`], whose `data_type` and `udt_name` pass through
//! [`udf`], and whose rows come from the session's tables as the catalogue describes them
//! ([`crate::described`]: `is_nullable` is `NO` for a column its dataset does not allow null in).

use std::ops::ControlFlow;
use std::str::FromStr;
use std::sync::Arc;

use datafusion::arrow::array::{AsArray, StringArray};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{exec_err, ScalarValue};
use datafusion::logical_expr::{create_udf, ColumnarValue, ScalarUDF, Volatility};
use datafusion::sql::sqlparser::ast::{SetExpr, Statement, TableFactor, VisitorMut};
use datafusion::sql::sqlparser::dialect::PostgreSqlDialect;
use datafusion::sql::sqlparser::parser::Parser;
use datafusion_postgres::arrow_pg::datatypes::into_pg_type;
use rapid_actors::sql_walk::Tree;

/// The function: `rapid_pg_type(datafusion_type, 'sql' | 'udt')`.
pub(crate) const NAME: &str = "rapid_pg_type";

/// `information_schema.columns` as PostgreSQL shows it (the columns DataFusion has, positions
/// counted from 1 as PostgreSQL counts them where DataFusion counts from 0, the types named as
/// PostgreSQL names them, `udt_*` as PostgreSQL adds them, and the identity, generation and
/// update columns clients read: no column is an identity or generated, none is updatable here),
/// before its `FROM`.
const VIEW: &str = "SELECT table_catalog, table_schema, table_name, column_name, \
    CAST(ordinal_position + 1 AS INT) AS ordinal_position, column_default, is_nullable, rapid_pg_type(data_type, 'sql') AS data_type, \
    character_maximum_length, character_octet_length, numeric_precision, \
    numeric_precision_radix, numeric_scale, datetime_precision, interval_type, \
    table_catalog AS udt_catalog, \
    'pg_catalog' AS udt_schema, rapid_pg_type(data_type, 'udt') AS udt_name, \
    'NO' AS is_identity, CAST(NULL AS VARCHAR) AS identity_generation, \
    'NEVER' AS is_generated, CAST(NULL AS VARCHAR) AS generation_expression, \
    'NO' AS is_updatable";

/// Reads every `information_schema.columns` of `statements` through [`VIEW`]; whether any.
pub(crate) fn columns_view(statements: &mut Vec<Statement>) -> bool {
    let mut view = ColumnsView { changed: false };
    let _ = statements.rewrite(&mut view);
    view.changed
}

struct ColumnsView {
    changed: bool,
}

impl VisitorMut for ColumnsView {
    type Break = ();

    /// After the factor's own parts: the view's inner reference is not visited again.
    fn post_visit_table_factor(&mut self, factor: &mut TableFactor) -> ControlFlow<()> {
        let TableFactor::Table {
            name,
            alias,
            args: None,
            ..
        } = factor
        else {
            return ControlFlow::Continue(());
        };
        let parts: Vec<String> = name
            .0
            .iter()
            .filter_map(|p| p.as_ident().map(|i| i.value.to_lowercase()))
            .collect();
        if !parts.ends_with(&["information_schema".to_string(), "columns".to_string()]) {
            return ControlFlow::Continue(());
        }
        // Every database's columns, as DataFusion's `information_schema` lists them, each
        // nullable or not as its dataset's schema says (see `crate::described`).
        let columns = crate::described::COLUMNS;
        let sql = format!("SELECT * FROM ({VIEW} FROM pg_catalog.{columns}) AS columns");
        let Ok(mut parsed) = Parser::parse_sql(&PostgreSqlDialect {}, &sql) else {
            return ControlFlow::Continue(());
        };
        let Some(Statement::Query(query)) = parsed.pop() else {
            return ControlFlow::Continue(());
        };
        let SetExpr::Select(mut select) = *query.body else {
            return ControlFlow::Continue(());
        };
        let mut derived = select.from.remove(0).relation;
        if let (TableFactor::Derived { alias: named, .. }, Some(alias)) =
            (&mut derived, alias.take())
        {
            *named = Some(alias);
        }
        *factor = derived;
        self.changed = true;
        ControlFlow::Continue(())
    }
}

/// The SQL standard's names PostgreSQL's `information_schema` uses, by `pg_type.typname`.
const SQL_NAMES: &[(&str, &str)] = &[
    ("bool", "boolean"),
    ("int2", "smallint"),
    ("int4", "integer"),
    ("int8", "bigint"),
    ("float4", "real"),
    ("float8", "double precision"),
    ("varchar", "character varying"),
    ("bpchar", "character"),
    ("time", "time without time zone"),
    ("timetz", "time with time zone"),
    ("timestamp", "timestamp without time zone"),
    ("timestamptz", "timestamp with time zone"),
];

/// PostgreSQL's type for DataFusion's name of one: its `typname` (`udt`) or its SQL name.
pub(crate) fn pg_name(datafusion: &str, udt: bool) -> String {
    let Some(pg) = DataType::from_str(datafusion)
        .ok()
        .and_then(|t| into_pg_type(&t).ok())
    else {
        // A type the wire sends as text (arrow-pg's default) is text to the client too.
        return "text".to_string();
    };
    let typname = pg.name();
    if udt {
        return typname.to_string();
    }
    // An array type (`_int8`): PostgreSQL's information_schema says ARRAY.
    if typname.starts_with('_') {
        return "ARRAY".to_string();
    }
    SQL_NAMES
        .iter()
        .find(|(t, _)| *t == typname)
        .map_or(typname, |(_, sql)| sql)
        .to_string()
}

pub(crate) fn udf() -> ScalarUDF {
    create_udf(
        NAME,
        vec![DataType::Utf8, DataType::Utf8],
        DataType::Utf8,
        Volatility::Immutable,
        Arc::new(|args: &[ColumnarValue]| {
            let ColumnarValue::Scalar(ScalarValue::Utf8(Some(form))) = &args[1] else {
                return exec_err!("{NAME} takes 'sql' or 'udt' as its second argument");
            };
            let udt = form == "udt";
            let names = match &args[0] {
                ColumnarValue::Array(a) => a.clone(),
                ColumnarValue::Scalar(s) => s.to_array()?,
            };
            let Some(names) = names.as_string_opt::<i32>() else {
                return exec_err!("{NAME} takes a type's name as text");
            };
            let out: StringArray = names.iter().map(|n| n.map(|n| pg_name(n, udt))).collect();
            Ok(ColumnarValue::Array(Arc::new(out)))
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::{columns_view, pg_name};
    use datafusion::sql::sqlparser::dialect::PostgreSqlDialect;
    use datafusion::sql::sqlparser::parser::Parser;

    #[test]
    fn information_schema_columns_is_read_through_the_view() {
        let sql = "SELECT c.data_type FROM \"default\".information_schema.columns AS c, t";
        let mut statements = Parser::parse_sql(&PostgreSqlDialect {}, sql).unwrap();
        assert!(columns_view(&mut statements));
        let out = statements[0].to_string();
        assert!(
            out.contains("rapid_pg_type(data_type, 'udt') AS udt_name"),
            "{out}"
        );
        assert!(
            out.contains("FROM pg_catalog.rapid_described_columns) AS c, t"),
            "{out}"
        );
        let mut other =
            Parser::parse_sql(&PostgreSqlDialect {}, "SELECT * FROM s.columns").unwrap();
        assert!(!columns_view(&mut other));
    }

    #[test]
    fn datafusion_types_get_postgresql_names() {
        for (df, sql, udt) in [
            ("Float64", "double precision", "float8"),
            ("Int64", "bigint", "int8"),
            ("Int32", "integer", "int4"),
            ("Utf8", "text", "text"),
            ("Utf8View", "text", "text"),
            ("Boolean", "boolean", "bool"),
            ("Date32", "date", "date"),
            (
                "Timestamp(Microsecond, None)",
                "timestamp without time zone",
                "timestamp",
            ),
        ] {
            assert_eq!(pg_name(df, false), sql, "{df}");
            assert_eq!(pg_name(df, true), udt, "{df}");
        }
    }
}
