//! A session's layers as DataFusion catalogs, its domains as schemas, its datasets as tables
//! made when named (see [`super::tables`] for the names and what is read when).

use std::collections::BTreeMap;
use std::sync::Arc;

use datafusion::catalog::{CatalogProvider, CatalogProviderList, SchemaProvider, TableProvider};
use datafusion::error::{DataFusionError, Result as DfResult};

use super::tables::{version_table_name, SqlTables};
use crate::audit::table::SYSTEM_CATALOG;
use crate::history::AsOf;
use crate::key::DatasetRecord;

/// The dataset, schema version and commit a table name means in `records`: a version's name
/// (see [`version_of`]) reads its newest commit, followed by `@c{n}` commit `n`.
fn resolve<'a>(
    records: &'a BTreeMap<String, Arc<DatasetRecord>>,
    name: &str,
) -> Option<(&'a Arc<DatasetRecord>, i64, AsOf)> {
    if let Some((table, commit)) = name.rsplit_once("@c") {
        let n: i64 = commit.parse().ok().filter(|n| *n >= 1)?;
        let (record, version) = version_of(records, table)?;
        return (name == format!("{table}@c{n}")).then_some((record, version, AsOf::Commit(n)));
    }
    let (record, version) = version_of(records, name)?;
    Some((record, version, AsOf::Latest))
}

/// The dataset and schema version a name means: `dataset` is its latest version,
/// `dataset@v{n}` an older one.
fn version_of<'a>(
    records: &'a BTreeMap<String, Arc<DatasetRecord>>,
    name: &str,
) -> Option<(&'a Arc<DatasetRecord>, i64)> {
    if let Some(record) = records.get(name) {
        return Some((record, record.latest_version));
    }
    let (dataset, version) = name.rsplit_once("@v")?;
    let version: i64 = version.parse().ok()?;
    let record = records.get(dataset)?;
    (version >= 1
        && version < record.latest_version
        && name == version_table_name(dataset, version))
    .then_some((record, version))
}

/// One layer's domains (as read at the statement's start), beside the schemas registered there.
#[derive(Debug)]
pub(super) struct LayerCatalog {
    pub(super) tables: SqlTables,
    pub(super) layer: String,
    pub(super) registered: Option<Arc<dyn CatalogProvider>>,
}

impl CatalogProvider for LayerCatalog {
    fn schema_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .tables
            .readable()
            .get(&self.layer)
            .map(|d| d.keys().cloned().collect())
            .unwrap_or_default();
        for name in self.registered.iter().flat_map(|r| r.schema_names()) {
            if !names.contains(&name) {
                names.push(name);
            }
        }
        names
    }

    fn schema(&self, name: &str) -> Option<Arc<dyn SchemaProvider>> {
        let readable = self.tables.readable();
        if let Some(records) = readable.get(&self.layer).and_then(|d| d.get(name)) {
            return Some(Arc::new(DomainSchema {
                tables: self.tables.clone(),
                records: records.clone(),
            }));
        }
        self.registered.as_ref().and_then(|r| r.schema(name))
    }

    fn register_schema(
        &self,
        name: &str,
        schema: Arc<dyn SchemaProvider>,
    ) -> DfResult<Option<Arc<dyn SchemaProvider>>> {
        match &self.registered {
            Some(r) => r.register_schema(name, schema),
            None => Err(DataFusionError::Plan(format!(
                "schemas cannot be made in layer {}",
                self.layer
            ))),
        }
    }
}

/// One domain's readable datasets; their tables are made when named.
#[derive(Debug)]
struct DomainSchema {
    tables: SqlTables,
    records: BTreeMap<String, Arc<DatasetRecord>>,
}

impl DomainSchema {
    fn lookup(&self, name: &str) -> DfResult<Option<Arc<dyn TableProvider>>> {
        let Some((record, version, at)) = resolve(&self.records, name) else {
            return Ok(None);
        };
        self.tables
            .table(record, version, at)
            .map_err(|e| DataFusionError::External(Box::new(e)))
    }
}

#[async_trait::async_trait]
impl SchemaProvider for DomainSchema {
    /// Every readable version of every dataset (listings only: this reads their schemas).
    fn table_names(&self) -> Vec<String> {
        let mut names = Vec::new();
        for (dataset, record) in &self.records {
            for version in 1..=record.latest_version {
                if !matches!(
                    self.tables.table(record, version, AsOf::Latest),
                    Ok(Some(_))
                ) {
                    continue; // a version that is gone
                }
                names.push(match version == record.latest_version {
                    true => dataset.clone(),
                    false => version_table_name(dataset, version),
                });
            }
        }
        names
    }

    async fn table(&self, name: &str) -> DfResult<Option<Arc<dyn TableProvider>>> {
        self.lookup(name)
    }

    fn table_exist(&self, name: &str) -> bool {
        matches!(self.lookup(name), Ok(Some(_)))
    }
}

/// The session's catalogs: its layers (as read at the statement's start), the audit log's
/// `_system` for those who may read it, and the catalogs it registered.
impl CatalogProviderList for SqlTables {
    fn register_catalog(
        &self,
        name: String,
        catalog: Arc<dyn CatalogProvider>,
    ) -> Option<Arc<dyn CatalogProvider>> {
        self.register(name, catalog)
    }

    fn catalog_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.readable().keys().cloned().collect();
        if self.system_catalog().is_some() {
            names.push(SYSTEM_CATALOG.to_string());
        }
        for name in self.registered_names() {
            if !names.contains(&name) {
                names.push(name);
            }
        }
        names
    }

    fn catalog(&self, name: &str) -> Option<Arc<dyn CatalogProvider>> {
        if name == SYSTEM_CATALOG {
            return self.system_catalog();
        }
        let registered = self.registered(name);
        if registered.is_none() && !self.readable().contains_key(name) {
            return None;
        }
        Some(Arc::new(LayerCatalog {
            tables: self.clone(),
            layer: name.to_string(),
            registered,
        }))
    }
}
