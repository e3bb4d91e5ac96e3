//! The `pg_catalog` tables that have no rows here, and the two this listener empties itself.
//!
//! The emulation's `pg_index` and `pg_constraint` are a copy of a real PostgreSQL's system
//! indexes and constraints, keyed by that server's object ids (`indrelid` 2836...), which no
//! relation of this catalogue has (`pg_class` numbers every table from 16384 on). Datasets have
//! neither indexes nor constraints, so both tables answer no rows here, with their columns kept:
//! clients' index and key queries (SQLAlchemy's `get_pk_constraint`, `get_indexes`, DuckDB's
//! `postgres` extension on attach) then find none, as they would for a table without any.
//! For the same reason the view `pg_indexes`, which the emulation lacks (DuckDB's `postgres`
//! extension lists indexes from it on attach), is here with no rows.
//!
//! Three tables are views over the emulation's: `pg_database` (the session's databases only),
//! `pg_class` (with `reloptions`), `pg_settings` ([`crate::settings`]).

use std::ops::ControlFlow;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::catalog::{CatalogProviderList, SchemaProvider, TableProvider};
use datafusion::common::{Column, ScalarValue, TableReference};
use datafusion::datasource::empty::EmptyTable;
use datafusion::datasource::{provider_as_source, ViewTable};
use datafusion::error::Result as DfResult;
use datafusion::logical_expr::{col, lit, Expr, LogicalPlanBuilder};
use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::ast::{
    Ident, ObjectName, ObjectNamePart, Statement, TableFactor, VisitorMut,
};
use datafusion_postgres::datafusion_pg_catalog::pg_catalog::setup_pg_catalog;

use crate::roles::SubjectRole;
use rapid_actors::sql_walk::Tree;

/// Emptied by [`register`]: the emulation's rows describe objects that do not exist here.
const EMPTIED: &[&str] = &["pg_index", "pg_constraint"];

/// The views this listener adds to `pg_catalog`, without rows.
const ADDED: &[&str] = &["pg_indexes"];

/// `information_schema`'s constraint views, which DataFusion's `information_schema` lacks: no
/// dataset has a constraint, so they have no rows, under PostgreSQL's columns. Clients join them
/// to find primary and foreign keys (Metabase's field sync, SQLAlchemy, dbt); a statement naming
/// `information_schema.<view>` reads the empty table of that name this listener keeps in
/// `pg_catalog` ([`qualify_added`]).
const CONSTRAINT_VIEWS: &[(&str, &[&str])] = &[
    (
        "table_constraints",
        &[
            "constraint_catalog",
            "constraint_schema",
            "constraint_name",
            "table_catalog",
            "table_schema",
            "table_name",
            "constraint_type",
            "is_deferrable",
            "initially_deferred",
            "enforced",
            "nulls_distinct",
        ],
    ),
    (
        "key_column_usage",
        &[
            "constraint_catalog",
            "constraint_schema",
            "constraint_name",
            "table_catalog",
            "table_schema",
            "table_name",
            "column_name",
            "ordinal_position",
            "position_in_unique_constraint",
        ],
    ),
    (
        "referential_constraints",
        &[
            "constraint_catalog",
            "constraint_schema",
            "constraint_name",
            "unique_constraint_catalog",
            "unique_constraint_schema",
            "unique_constraint_name",
            "match_option",
            "update_rule",
            "delete_rule",
        ],
    ),
    (
        "constraint_column_usage",
        &[
            "table_catalog",
            "table_schema",
            "table_name",
            "column_name",
            "constraint_catalog",
            "constraint_schema",
            "constraint_name",
        ],
    ),
];

/// The empty table of a [`CONSTRAINT_VIEWS`] view (positions are numbers, the rest text).
fn constraint_view(name: &str) -> Option<Arc<dyn TableProvider>> {
    let (_, columns) = CONSTRAINT_VIEWS
        .iter()
        .find(|(view, _)| name.eq_ignore_ascii_case(view))?;
    let fields: Vec<Field> = columns
        .iter()
        .map(|c| match c.contains("position") {
            true => Field::new(*c, DataType::Int32, true),
            false => Field::new(*c, DataType::Utf8, true),
        })
        .collect();
    Some(Arc::new(EmptyTable::new(Arc::new(Schema::new(fields)))))
}

/// `pg_catalog` tables that answer no rows, whatever the session holds (the emulation's empty
/// ones, and [`EMPTIED`]): a select that inner-joins one has no rows
/// (`catalog_rewrites::empty_catalogue_selects`).
pub(crate) const EMPTY: &[&str] = &[
    "pg_indexes",
    "pg_index",
    "pg_constraint",
    "pg_attrdef",
    "pg_publication",
    "pg_publication_rel",
    "pg_publication_namespace",
    "pg_policy",
    "pg_inherits",
    "pg_trigger",
    "pg_statistic_ext",
    "pg_statistic_ext_data",
    "pg_partitioned_table",
    "pg_sequence",
    "pg_foreign_table",
    "pg_foreign_data_wrapper",
    "pg_foreign_server",
    "pg_user_mapping",
    "pg_default_acl",
    "pg_event_trigger",
];

/// Registers the emulation's `pg_catalog` in `database` for `role`, behind [`EmptiedTables`],
/// over the session's tables as the catalogue describes them ([`crate::described`]).
pub(crate) fn setup(ctx: &SessionContext, database: &str, role: SubjectRole) -> Result<(), String> {
    let (set_up, described) = crate::described::describing(ctx, || {
        setup_pg_catalog(ctx, database, role).map_err(|e| e.to_string())
    });
    set_up?;
    let catalog = ctx
        .catalog(database)
        .ok_or_else(|| format!("no catalog {database}"))?;
    let inner = catalog
        .schema("pg_catalog")
        .ok_or_else(|| "no pg_catalog schema".to_string())?;
    let databases = ctx.catalog_names();
    let emptied = EmptiedTables {
        inner,
        databases,
        described,
    };
    catalog
        .register_schema("pg_catalog", Arc::new(emptied))
        .map_err(|e| e.to_string())?;
    Ok(())
}

/// The emulation's `pg_catalog`, with [`EMPTIED`] answering no rows under their own columns.
#[derive(Debug)]
struct EmptiedTables {
    inner: Arc<dyn SchemaProvider>,
    /// The session's databases (the layers): `pg_database` lists only these.
    databases: Vec<String>,
    /// The session's tables as the catalogue describes them, for [`crate::described::COLUMNS`].
    described: Arc<dyn CatalogProviderList>,
}

#[async_trait]
impl SchemaProvider for EmptiedTables {
    fn table_names(&self) -> Vec<String> {
        let mut names = self.inner.table_names();
        names.extend(ADDED.iter().map(|n| n.to_string()));
        names.extend(CONSTRAINT_VIEWS.iter().map(|(n, _)| n.to_string()));
        names
    }

    async fn table(&self, name: &str) -> DfResult<Option<Arc<dyn TableProvider>>> {
        if let Some(view) = constraint_view(name) {
            return Ok(Some(view));
        }
        if name == crate::described::COLUMNS {
            return crate::described::columns(&self.described).await;
        }
        if name.eq_ignore_ascii_case("pg_indexes") {
            let text = |n: &str| Field::new(n, DataType::Utf8, true);
            let columns = [
                "schemaname",
                "tablename",
                "indexname",
                "tablespace",
                "indexdef",
            ];
            let schema = Schema::new(columns.map(text).to_vec());
            return Ok(Some(Arc::new(EmptyTable::new(Arc::new(schema)))));
        }
        if name.eq_ignore_ascii_case("pg_database") {
            if let Some(table) = self.inner.table(name).await? {
                return Ok(Some(only_databases(table, &self.databases)?));
            }
        }
        if name.eq_ignore_ascii_case("pg_settings") {
            if let Some(table) = self.inner.table(name).await? {
                return Ok(Some(crate::settings::table(table.schema())?));
            }
        }
        if name.eq_ignore_ascii_case("pg_class") {
            if let Some(table) = self.inner.table(name).await? {
                return Ok(Some(with_storage_options(table)?));
            }
        }
        let table = self.inner.table(name).await?;
        let emptied = EMPTIED.contains(&name.to_ascii_lowercase().as_str());
        Ok(match (table, emptied) {
            (Some(table), true) => Some(Arc::new(EmptyTable::new(table.schema()))),
            (table, _) => table,
        })
    }

    fn table_exist(&self, name: &str) -> bool {
        self.inner.table_exist(name)
            || ADDED.contains(&name.to_ascii_lowercase().as_str())
            || constraint_view(name).is_some()
            || name == crate::described::COLUMNS
    }
}

/// A scan of the emulation's `pg_catalog.<name>`, for a view over it. Named with its schema:
/// a prepared statement's plan, the view inlined, is checked table by table before it runs
/// (`still_readable`), and `pg_database` alone was looked for in `public` and refused (42501).
fn scan(name: &str, table: Arc<dyn TableProvider>) -> DfResult<LogicalPlanBuilder> {
    let name = TableReference::partial("pg_catalog", name);
    LogicalPlanBuilder::scan(name, provider_as_source(table), None)
}

/// `pg_database` without the `postgres` database the emulation always lists: a session here is
/// in a layer, and `dbname=postgres` is refused (3D000) unless a layer has that name, so psql's
/// `\l` listed a database nobody could connect to.
fn only_databases(
    table: Arc<dyn TableProvider>,
    databases: &[String],
) -> DfResult<Arc<dyn TableProvider>> {
    let listed = databases.iter().map(|d| lit(d.as_str())).collect();
    let plan = scan("pg_database", table)?
        .filter(col("datname").in_list(listed, false))?
        .build()?;
    Ok(Arc::new(ViewTable::new(plan, None)))
}

/// `pg_class` with `reloptions` (a table's storage options, `text[]`), which the emulation
/// lacks: SQLAlchemy 2's table reflection reads it (`get_multi_table_options`, which Superset's
/// dataset creation calls through `Table(..., autoload_with=engine)`). No dataset has storage
/// options, so it is NULL in every row, as in PostgreSQL for a table without any.
fn with_storage_options(table: Arc<dyn TableProvider>) -> DfResult<Arc<dyn TableProvider>> {
    let text = Arc::new(Field::new_list_field(DataType::Utf8, true));
    let none = ScalarValue::try_from(DataType::List(text))?;
    let mut columns: Vec<Expr> = table
        .schema()
        .fields()
        .iter()
        .map(|f| col(Column::from_name(f.name())))
        .collect();
    columns.push(lit(none).alias("reloptions"));
    let plan = scan("pg_class", table)?.project(columns)?.build()?;
    Ok(Arc::new(ViewTable::new(plan, None)))
}

/// Qualifies an unqualified [`ADDED`] view with `pg_catalog`, as PostgreSQL's search path
/// finds it (the library qualifies the tables of its own emulation only), and points
/// `information_schema.<view>` of [`CONSTRAINT_VIEWS`] at the table of that name in
/// `pg_catalog`; whether any.
pub(crate) fn qualify_added(statements: &mut Vec<Statement>) -> bool {
    struct Qualify(bool);
    impl VisitorMut for Qualify {
        type Break = ();
        fn pre_visit_table_factor(&mut self, factor: &mut TableFactor) -> ControlFlow<()> {
            if let TableFactor::Table {
                name, args: None, ..
            } = factor
            {
                let ident = |part: &ObjectNamePart| part.as_ident().map(|i| i.value.clone());
                let parts: Vec<Option<String>> = name.0.iter().map(ident).collect();
                if let [.., Some(schema), Some(view)] = parts.as_slice() {
                    if schema.eq_ignore_ascii_case("information_schema")
                        && constraint_view(view).is_some()
                    {
                        let at = name.0.len() - 2;
                        name.0[at] = ObjectNamePart::Identifier(Ident::new("pg_catalog"));
                        self.0 = true;
                        return ControlFlow::Continue(());
                    }
                }
                let added = match parts.as_slice() {
                    [Some(part)] => ADDED.contains(&part.to_ascii_lowercase().as_str()),
                    _ => false,
                };
                if added {
                    let mut parts = vec![ObjectNamePart::Identifier(Ident::new("pg_catalog"))];
                    parts.append(&mut name.0);
                    *name = ObjectName(parts);
                    self.0 = true;
                }
            }
            ControlFlow::Continue(())
        }
    }
    let mut qualify = Qualify(false);
    let _ = statements.rewrite(&mut qualify);
    qualify.0
}

#[cfg(test)]
#[path = "catalogue_tables_tests.rs"]
mod tests;
