//! One version of one dataset as a SQL table, current or as of a commit. Its files are the
//! catalog's at scan time (a [`ManifestTable`]), never a listing of the folder, and they stay on
//! disk until the session's statement ends (the lease is kept with the session, see
//! [`super::tables::SqlTables`]).

use std::sync::{Arc, Mutex};

use arrow::datatypes::SchemaRef;
use async_trait::async_trait;
use datafusion::catalog::{Session, TableProvider};
use datafusion::error::{DataFusionError, Result as DfResult};
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown, TableType};
use datafusion::physical_plan::ExecutionPlan;

use crate::audit::Note;
use crate::catalog::SharedCatalog;
use crate::error::Result;
use crate::history::{snapshot_at, AsOf};
use crate::key::{DatasetKey, DatasetRecord};
use crate::query::policy::EffectivePolicy;
use crate::query::reading::policy_table::subject_table;
use crate::schema::ValidSchema;
use crate::storage::{LeaseGuard, Storage};

pub(crate) struct LazyTable {
    catalog: SharedCatalog,
    storage: Storage,
    dataset_id: i64,
    version: i64,
    /// Which commit the table reads: the newest, or a retained earlier one.
    at: AsOf,
    schema: ValidSchema,
    /// What the session's subject is under (nothing: the plain table).
    policy: EffectivePolicy,
    arrow_schema: SchemaRef,
    /// The leases of the files scanned by the session's current statement.
    leases: Arc<Mutex<Vec<LeaseGuard>>>,
    /// The current statement's audit note.
    note: Arc<Mutex<Note>>,
    key: DatasetKey,
}

impl LazyTable {
    pub(crate) fn new(
        catalog: SharedCatalog,
        storage: Storage,
        record: &DatasetRecord,
        (version, at): (i64, AsOf),
        (schema, policy): (ValidSchema, EffectivePolicy),
        (leases, note): (Arc<Mutex<Vec<LeaseGuard>>>, Arc<Mutex<Note>>),
    ) -> Result<LazyTable> {
        let arrow_schema = subject_table(&storage, &schema, &[], &policy)?.schema();
        Ok(LazyTable {
            catalog,
            storage,
            dataset_id: record.id,
            version,
            at,
            schema,
            policy,
            arrow_schema,
            leases,
            note,
            key: record.key.clone(),
        })
    }
}

impl std::fmt::Debug for LazyTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LazyTable")
            .field("dataset_id", &self.dataset_id)
            .field("version", &self.version)
            .finish()
    }
}

#[async_trait]
impl TableProvider for LazyTable {
    fn schema(&self) -> SchemaRef {
        self.arrow_schema.clone()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> DfResult<Vec<TableProviderFilterPushDown>> {
        // As ManifestTable: filters skip files, the engine still applies them all; under a
        // policy none is taken (they run above it, see PolicyTable).
        let how = match self.policy.is_none() {
            true => TableProviderFilterPushDown::Inexact,
            false => TableProviderFilterPushDown::Unsupported,
        };
        Ok(vec![how; filters.len()])
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        let external = |e: crate::error::Error| DataFusionError::External(Box::new(e));
        let (at, lease) = snapshot_at(
            self.catalog.as_ref(),
            &self.storage,
            self.dataset_id,
            self.version,
            &self.at,
        )
        .map_err(external)?;
        let files = at.files;
        let columns: Vec<String> = match projection {
            Some(p) => p
                .iter()
                .filter_map(|&i| self.arrow_schema.fields().get(i))
                .map(|f| f.name().clone())
                .collect(),
            None => self
                .arrow_schema
                .fields()
                .iter()
                .map(|f| f.name().clone())
                .collect(),
        };
        let prefix = format!(
            "{}/{}/{}.",
            self.key.layer, self.key.domain, self.key.dataset
        );
        let note = self.note.lock().unwrap_or_else(|p| p.into_inner()).clone();
        note.read(
            &self.key,
            self.version,
            Some(at.commit),
            columns.into_iter().map(|c| format!("{prefix}{c}")),
            &self.policy.names,
        );
        self.leases
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(lease);
        let table =
            subject_table(&self.storage, &self.schema, &files, &self.policy).map_err(external)?;
        table.scan(state, projection, filters, limit).await
    }
}

/// The columns of a dataset's table that hold no NULL: those its schema version does not allow
/// null in (every row was checked against it on upload), unless the subject's policy masks the
/// column to NULL. None for a table that is not a dataset's. The table's Arrow schema says every
/// column is nullable (the Parquet files' fields are), so the PostgreSQL front's catalogue
/// (`pg_attribute.attnotnull`, `information_schema.columns.is_nullable`) asks here.
pub fn not_null_columns(table: &dyn TableProvider) -> Option<Vec<String>> {
    let table = (table as &dyn std::any::Any).downcast_ref::<LazyTable>()?;
    let masked_to_null = |name: &str| {
        matches!(
            table.policy.masks.get(name),
            Some(crate::query::policy::Mask::Null)
        )
    };
    let columns = table.schema.columns().iter();
    let not_null = columns.filter(|c| !c.allow_null && !masked_to_null(&c.name));
    Some(not_null.map(|c| c.name.clone()).collect())
}

/// What a large statement's result link is bound to (see `engine::result_links`): each dataset
/// version `plan` scans, once, with the fingerprint of the policy it was read under, as
/// `-{layer}.{domain}.{dataset}.{version}.{fingerprint in hex}`, and `-_system` when it reads the
/// audit log; after `sql`. URL-safe: names are lower-case letters, digits and `_`.
pub(crate) fn link_binding(plan: &datafusion::logical_expr::LogicalPlan) -> String {
    use datafusion::common::tree_node::TreeNodeRecursion;
    use datafusion::logical_expr::LogicalPlan;
    let mut read = std::collections::BTreeSet::new();
    let _ = plan.apply_with_subqueries(|node| {
        if let LogicalPlan::TableScan(scan) = node {
            let provider = datafusion::datasource::source_as_provider(&scan.source).ok();
            match provider
                .as_ref()
                .and_then(|p| (p.as_ref() as &dyn std::any::Any).downcast_ref::<LazyTable>())
            {
                Some(t) => {
                    let k = &t.key;
                    let fingerprint = crate::query::reading::run::policy_bound(&t.policy);
                    read.insert(format!(
                        "{}.{}.{}.{}.{fingerprint:x}",
                        k.layer, k.domain, k.dataset, t.version
                    ));
                }
                None if scan.table_name.catalog() == Some(crate::audit::table::SYSTEM_CATALOG) => {
                    read.insert("_system".to_string());
                }
                None => {}
            }
        }
        Ok(TreeNodeRecursion::Continue)
    });
    std::iter::once("sql".to_string())
        .chain(read)
        .collect::<Vec<_>>()
        .join("-")
}
