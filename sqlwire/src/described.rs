//! The session's tables as the catalogue describes them: each dataset's columns nullable or not
//! as its schema says. A dataset's table reads Parquet files whose fields are all nullable, so
//! its Arrow schema says every column may be NULL, and `pg_attribute.attnotnull`,
//! `information_schema.columns.is_nullable` and every client reading them (psql's `\d`,
//! SQLAlchemy's `get_columns`, the JDBC driver's `getColumns`, Metabase's sync) said so too. The
//! catalogue reads the session's tables through [`DescribedList`], which gives a column the
//! schema does not allow null in (`allow_null: false`; the engine's
//! `rapid_actors::engine::sql::not_null_columns`) a non-nullable field; the tables statements read
//! are the engine's own, unchanged, so no plan sees a field that could hold a NULL marked
//! otherwise.

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::{Field, Schema, SchemaRef};
use datafusion::catalog::information_schema::InformationSchemaProvider;
use datafusion::catalog::{
    CatalogProvider, CatalogProviderList, SchemaProvider, Session, TableProvider,
};
use datafusion::datasource::TableType;
use datafusion::error::Result as DfResult;
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown};
use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::SessionContext;
use rapid_actors::engine::sql::not_null_columns;

/// A session's catalog list as the catalogue describes it; everything else as the list does.
#[derive(Debug)]
pub(crate) struct DescribedList(pub(crate) Arc<dyn CatalogProviderList>);

impl CatalogProviderList for DescribedList {
    fn register_catalog(
        &self,
        name: String,
        catalog: Arc<dyn CatalogProvider>,
    ) -> Option<Arc<dyn CatalogProvider>> {
        self.0.register_catalog(name, catalog)
    }

    fn catalog_names(&self) -> Vec<String> {
        self.0.catalog_names()
    }

    fn catalog(&self, name: &str) -> Option<Arc<dyn CatalogProvider>> {
        let catalog = self.0.catalog(name)?;
        Some(Arc::new(DescribedCatalog(catalog)))
    }
}

#[derive(Debug)]
struct DescribedCatalog(Arc<dyn CatalogProvider>);

impl CatalogProvider for DescribedCatalog {
    fn schema_names(&self) -> Vec<String> {
        self.0.schema_names()
    }

    fn schema(&self, name: &str) -> Option<Arc<dyn SchemaProvider>> {
        let schema = self.0.schema(name)?;
        Some(Arc::new(DescribedSchema(schema)))
    }

    fn register_schema(
        &self,
        name: &str,
        schema: Arc<dyn SchemaProvider>,
    ) -> DfResult<Option<Arc<dyn SchemaProvider>>> {
        self.0.register_schema(name, schema)
    }

    fn deregister_schema(
        &self,
        name: &str,
        cascade: bool,
    ) -> DfResult<Option<Arc<dyn SchemaProvider>>> {
        self.0.deregister_schema(name, cascade)
    }
}

#[derive(Debug)]
struct DescribedSchema(Arc<dyn SchemaProvider>);

#[async_trait]
impl SchemaProvider for DescribedSchema {
    fn table_names(&self) -> Vec<String> {
        self.0.table_names()
    }

    async fn table(&self, name: &str) -> DfResult<Option<Arc<dyn TableProvider>>> {
        Ok(self.0.table(name).await?.map(described))
    }

    async fn table_type(&self, name: &str) -> DfResult<Option<TableType>> {
        self.0.table_type(name).await
    }

    fn table_exist(&self, name: &str) -> bool {
        self.0.table_exist(name)
    }
}

/// `table`, with the columns its dataset's schema does not allow null in not nullable (a table
/// that is no dataset's, or has no such column: as it is).
fn described(table: Arc<dyn TableProvider>) -> Arc<dyn TableProvider> {
    let not_null = not_null_columns(table.as_ref()).unwrap_or_default();
    if not_null.is_empty() {
        return table;
    }
    let inner = table.schema();
    let fields: Vec<Field> = inner
        .fields()
        .iter()
        .map(|f| match not_null.contains(f.name()) {
            true => f.as_ref().clone().with_nullable(false),
            false => f.as_ref().clone(),
        })
        .collect();
    let schema = Arc::new(Schema::new_with_metadata(fields, inner.metadata().clone()));
    Arc::new(Described { table, schema })
}

/// A dataset's table under its described schema. The catalogue reads only its schema and type;
/// a scan is the table's own.
#[derive(Debug)]
struct Described {
    table: Arc<dyn TableProvider>,
    schema: SchemaRef,
}

#[async_trait]
impl TableProvider for Described {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> TableType {
        self.table.table_type()
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> DfResult<Vec<TableProviderFilterPushDown>> {
        self.table.supports_filters_pushdown(filters)
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        self.table.scan(state, projection, filters, limit).await
    }
}

/// The name in `pg_catalog` of `information_schema.columns` read through [`DescribedList`]
/// (not listed among its tables): `pg_types::columns_view` reads the client's
/// `information_schema.columns` from it.
pub(crate) const COLUMNS: &str = "rapid_described_columns";

/// Runs `setup` (the emulation's `pg_catalog` set up in `ctx`, over the session's catalog list)
/// with `ctx`'s list as the catalogue describes it, then puts the session's own list back: the
/// catalogue keeps the described one, which is answered.
pub(crate) fn describing<T>(
    ctx: &SessionContext,
    setup: impl FnOnce() -> T,
) -> (T, Arc<dyn CatalogProviderList>) {
    let own = ctx.state_ref().read().catalog_list().clone();
    let described: Arc<dyn CatalogProviderList> = Arc::new(DescribedList(own.clone()));
    ctx.register_catalog_list(described.clone());
    let out = setup();
    ctx.register_catalog_list(own);
    (out, described)
}

/// [`COLUMNS`]: `information_schema.columns` over `list`.
pub(crate) async fn columns(
    list: &Arc<dyn CatalogProviderList>,
) -> DfResult<Option<Arc<dyn TableProvider>>> {
    InformationSchemaProvider::new(list.clone())
        .table("columns")
        .await
}
