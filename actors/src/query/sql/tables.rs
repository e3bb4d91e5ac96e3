//! The catalogs one SQL session sees: a DataFusion catalog list whose catalogs are layers,
//! schemas domains and tables datasets, holding only what the subject may read. The set is
//! read again from the catalog and the subject's permissions before every statement
//! ([`SqlTables::refresh`]), so a permission taken away or a dataset deleted applies to open
//! sessions at once. Other catalogs (the session's default one, where the PostgreSQL front puts
//! `pg_catalog`) are kept as registered.
//!
//! Names: `"{layer}"."{domain}"."{dataset}"` is a dataset's latest schema version and
//! `"{layer}"."{domain}"."{dataset}@v{n}"` an older one (`@` is never part of a dataset's
//! name, and the double quotes make it one identifier in psql as in DataFusion). Either, followed
//! by `@c{commit}`, reads that version as of a retained commit (`"orders@c12"`,
//! `"orders@v1@c3"`); as-of names are not listed.

use crate::audit::table::{AUDIT_SCHEMA, EVENTS_TABLE};
use crate::audit::{AuditStore, Note};
use crate::auth::permission::Permission;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use datafusion::catalog::{
    CatalogProvider, MemoryCatalogProvider, MemorySchemaProvider, SchemaProvider, TableProvider,
};

use super::lazy_table::LazyTable;
use crate::auth::permission::Access;
use crate::auth::Subject;
use crate::catalog::SharedCatalog;
use crate::error::{ErrorKind, Result};
use crate::history::AsOf;
use crate::key::DatasetRecord;
use crate::query::policy::EffectivePolicy;
use crate::records::load_schema;
use crate::storage::{LeaseGuard, Storage};

/// The table name of schema version `version` of `dataset` when it is not the latest.
pub(crate) fn version_table_name(dataset: &str, version: i64) -> String {
    format!("{dataset}@v{version}")
}

/// layer -> domain -> dataset name -> its record: what the subject may read. Tables are made
/// from it when a statement names them (or a listing asks), so a statement over one dataset
/// reads one schema, however many datasets and versions the subject may read.
pub(super) type Readable = BTreeMap<String, BTreeMap<String, BTreeMap<String, Arc<DatasetRecord>>>>;

/// A table made: (dataset id, schema version, the commit when read as of one, the fingerprint
/// of the policy the subject is under there).
type TableKey = (i64, i64, Option<i64>, u64);

/// Catalog lists alive now, each a session's (HTTP SQL queries', wire connections'): a session
/// that has ended must not stay among them (a cycle of `Arc`s kept every signed-in wire
/// connection's; see rapid-sqlwire's `Checker`).
static LIVE: AtomicUsize = AtomicUsize::new(0);

/// How many sessions' catalog lists are alive now (process-wide).
pub fn live_sessions() -> usize {
    LIVE.load(Ordering::Relaxed)
}

impl Drop for Inner {
    fn drop(&mut self) {
        LIVE.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A session's catalog list. Cheap to clone: clones share everything.
#[derive(Clone)]
pub(crate) struct SqlTables {
    inner: Arc<Inner>,
}

struct Inner {
    catalog: SharedCatalog,
    storage: Storage,
    readable: RwLock<Arc<Readable>>,
    /// The subject as of the last refresh: the policies applied are its.
    subject: RwLock<Option<Arc<Subject>>>,
    /// The key of the `hash` column mask.
    mask_key: Arc<Vec<u8>>,
    /// Catalogs registered by the session (its default one, `pg_catalog`'s home).
    registered: RwLock<HashMap<String, Arc<dyn CatalogProvider>>>,
    /// Tables made before, by (dataset id, version, commit when as of one): a stored schema
    /// version never changes, nor does what a commit lists.
    made: Mutex<HashMap<TableKey, Arc<dyn TableProvider>>>,
    /// The leases of the files the current statement scans.
    leases: Arc<Mutex<Vec<LeaseGuard>>>,
    /// The current statement's audit note: the tables it scans write what they read.
    note: Arc<Mutex<Note>>,
    /// The audit log, shown as `"_system"."audit"."events"` to USER_ADMIN and DATA_ADMIN.
    audit: std::sync::OnceLock<Arc<dyn AuditStore>>,
}

impl std::fmt::Debug for SqlTables {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqlTables").finish_non_exhaustive()
    }
}

impl SqlTables {
    /// An empty list (no dataset until [`Self::refresh`]) with `default_catalog` holding an
    /// empty `public` schema, so that statements without tables plan.
    pub(crate) fn new(
        (catalog, storage): (SharedCatalog, Storage),
        mask_key: Arc<Vec<u8>>,
        default_catalog: &str,
    ) -> SqlTables {
        LIVE.fetch_add(1, Ordering::Relaxed);
        let tables = SqlTables {
            inner: Arc::new(Inner {
                catalog,
                storage,
                readable: RwLock::default(),
                subject: RwLock::default(),
                mask_key,
                registered: RwLock::default(),
                made: Mutex::default(),
                leases: Arc::default(),
                note: Arc::default(),
                audit: std::sync::OnceLock::new(),
            }),
        };
        tables.set_home(default_catalog);
        tables
    }

    /// The session shows the audit log (`store`) to subjects who may read it.
    pub(crate) fn with_audit(self, store: Arc<dyn AuditStore>) -> SqlTables {
        let _ = self.inner.audit.set(store);
        self
    }

    /// The audit log's catalog, when the session's subject may read it.
    pub(super) fn system_catalog(&self) -> Option<Arc<dyn CatalogProvider>> {
        let store = self.inner.audit.get()?;
        let subject = self
            .inner
            .subject
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()?;
        let reads = subject.has(&Permission::UserAdmin) || subject.has(&Permission::DataAdmin);
        if !reads {
            return None;
        }
        let schema = MemorySchemaProvider::new();
        let table = crate::audit::table::events_table(store.clone()).ok()?;
        // A new memory schema has no table of that name: nothing is replaced.
        let _ = schema.register_table(EVENTS_TABLE.to_string(), table);
        let catalog = MemoryCatalogProvider::new();
        let _ = catalog.register_schema(AUDIT_SCHEMA, Arc::new(schema));
        Some(Arc::new(catalog))
    }

    /// Makes `name` the one registered catalog, holding an empty `public` schema: the database a
    /// wire client names at sign-in replaces the one the session was made with, so that catalog
    /// listings (`pg_namespace`, `information_schema.schemata`) show one `public`, not two.
    pub(crate) fn set_home(&self, name: &str) {
        let home = MemoryCatalogProvider::new();
        // A memory catalog accepts any schema: the result (a replaced schema) is always None.
        let _ = home.register_schema("public", Arc::new(MemorySchemaProvider::new()));
        let mut registered = self
            .inner
            .registered
            .write()
            .unwrap_or_else(|p| p.into_inner());
        registered.clear();
        registered.insert(name.to_string(), Arc::new(home));
    }

    /// Reads again which datasets `subject` may read (their records; no schema is read).
    pub(crate) fn refresh(&self, subject: &Arc<Subject>) -> Result<()> {
        let permissions = &subject.permissions;
        *self
            .inner
            .subject
            .write()
            .unwrap_or_else(|p| p.into_inner()) = Some(subject.clone());
        let catalog = self.inner.catalog.as_ref();
        let mut readable = Readable::new();
        for key in catalog.dataset_keys()? {
            let Some(record) = catalog.find_dataset(&key)? else {
                continue; // deleted since the key list was read
            };
            let k = &record.key;
            let may_read = permissions
                .iter()
                .any(|p| p.grants(Access::Read, record.sensitivity, &k.layer, &k.domain));
            if !may_read {
                continue;
            }
            readable
                .entry(k.layer.clone())
                .or_default()
                .entry(k.domain.clone())
                .or_default()
                .insert(k.dataset.clone(), Arc::new(record));
        }
        *self
            .inner
            .readable
            .write()
            .unwrap_or_else(|p| p.into_inner()) = Arc::new(readable);
        Ok(())
    }

    /// The table of one version, made once; `None` when the version is gone.
    pub(super) fn table(
        &self,
        record: &DatasetRecord,
        version: i64,
        at: AsOf,
    ) -> Result<Option<Arc<dyn TableProvider>>> {
        let commit = match at {
            AsOf::Commit(n) => Some(n),
            _ => None,
        };
        let schema = match load_schema(self.inner.catalog.as_ref(), record, Some(version)) {
            Ok(s) => s,
            Err(e) if e.kind == ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let policy = self.policy(record, version, &schema)?;
        let key = (record.id, version, commit, policy.fingerprint);
        if let Some(t) = self
            .inner
            .made
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
        {
            return Ok(Some(t.clone()));
        }
        let table: Arc<dyn TableProvider> = Arc::new(LazyTable::new(
            self.inner.catalog.clone(),
            self.inner.storage.clone(),
            record,
            (version, at),
            (schema, policy),
            (self.inner.leases.clone(), self.inner.note.clone()),
        )?);
        let mut made = self.inner.made.lock().unwrap_or_else(|p| p.into_inner());
        made.insert(key, table.clone());
        Ok(Some(table))
    }

    /// The policy of one version as it applies to the session's subject.
    fn policy(
        &self,
        record: &DatasetRecord,
        version: i64,
        schema: &crate::schema::ValidSchema,
    ) -> Result<EffectivePolicy> {
        let subject = self
            .inner
            .subject
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let Some(subject) = subject else {
            return Ok(EffectivePolicy::default());
        };
        crate::query::policy::for_subject(
            self.inner.catalog.as_ref(),
            (record.id, version),
            schema,
            &subject,
            &self.inner.mask_key,
        )
    }

    /// The note the next statement's scans write into (the request's, for the audit log).
    pub(crate) fn set_note(&self, note: Note) {
        *self.inner.note.lock().unwrap_or_else(|p| p.into_inner()) = note;
    }

    /// Lets go of the files the statement read (call once its rows are out).
    pub(crate) fn end_statement(&self) {
        self.inner
            .leases
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }

    pub(super) fn readable(&self) -> Arc<Readable> {
        self.inner
            .readable
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Registers a catalog the session makes (`pg_catalog`'s home).
    pub(super) fn register(
        &self,
        name: String,
        catalog: Arc<dyn CatalogProvider>,
    ) -> Option<Arc<dyn CatalogProvider>> {
        self.inner
            .registered
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(name, catalog)
    }

    /// The names of the catalogs the session registered.
    pub(super) fn registered_names(&self) -> Vec<String> {
        self.inner
            .registered
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .keys()
            .cloned()
            .collect()
    }

    pub(super) fn registered(&self, name: &str) -> Option<Arc<dyn CatalogProvider>> {
        self.inner
            .registered
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(name)
            .cloned()
    }
}

#[cfg(test)]
#[path = "tables_tests.rs"]
mod tests;
