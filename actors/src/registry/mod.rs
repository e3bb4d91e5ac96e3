//! The registry: the catalog of datasets. Its actor creates datasets and starts one
//! [`DatasetActor`] per dataset, lazily, on first need; after that every change to a dataset goes
//! through that dataset's actor, so changes to one dataset are serialised while different datasets
//! proceed in parallel on a small pool of arbiters.

pub(crate) mod listing;

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use actix::{Actor, Addr, Arbiter, ArbiterHandle, Context, Handler, Message};

pub(crate) use crate::key::{DatasetKey, DatasetRecord};
use crate::records::{load_schema, stored_version};
pub(crate) use listing::list_datasets;

use crate::catalog::SharedCatalog;
use crate::dataset::{BumpSchema, DatasetActor, DeleteDataset};
use crate::error::Result;
use crate::history::HistorySettings;
use crate::schema::{validate, MetadataPatch, Schema, SchemaContext, ValidSchema};
use crate::storage::Storage;
use crate::traced::Traced;

#[derive(Clone)]
pub(crate) struct Registry {
    addr: Addr<RegistryActor>,
    catalog: SharedCatalog,
    layers: Arc<Vec<String>>,
}

impl Registry {
    /// Starts the registry actor. Call inside a running actix system.
    pub(crate) fn start(
        catalog: SharedCatalog,
        storage: Storage,
        layers: Vec<String>,
        history: HistorySettings,
    ) -> Registry {
        let pool = ArbiterPool::new(std::thread::available_parallelism().map_or(2, |n| n.get()));
        let actor = RegistryActor {
            catalog: catalog.clone(),
            storage,
            history,
            datasets: HashMap::new(),
            pool,
        };
        let addr = RegistryActor::start_in_arbiter(&Arbiter::new().handle(), move |_| actor);
        Registry {
            addr,
            catalog,
            layers: Arc::new(layers),
        }
    }

    /// Deletes every version, schema, raw file and data file of the dataset, after any change
    /// already queued for it; 404 if there is no such dataset.
    pub(crate) async fn delete_dataset(&self, key: &DatasetKey) -> Result<DatasetRecord> {
        let record = self.find(key)?;
        let actor = self.dataset_actor(key).await?;
        actor.send(Traced::new(DeleteDataset)).await??;
        self.addr
            .send(Traced::new(ForgetDataset(key.clone())))
            .await?;
        Ok(record)
    }

    pub(crate) fn layers(&self) -> &[String] {
        &self.layers
    }

    /// Validates `schema` and creates its dataset at version 1 (409 if the dataset exists).
    pub(crate) async fn create_schema(
        &self,
        schema: &Schema,
        protected_domains: &BTreeSet<String>,
    ) -> Result<ValidSchema> {
        let mut valid = self.validate(schema, protected_domains)?;
        valid.set_version(1);
        self.addr
            .send(Traced::new(CreateDataset(valid.clone())))
            .await??;
        Ok(valid)
    }

    /// Validates `schema` and stores it as the next version of its dataset (404 if none).
    pub(crate) async fn update_schema(
        &self,
        schema: &Schema,
        protected_domains: &BTreeSet<String>,
    ) -> Result<ValidSchema> {
        let valid = self.validate(schema, protected_domains)?;
        let key = DatasetKey::new(valid.layer(), valid.domain(), valid.dataset());
        let actor = self.dataset_actor(&key).await?;
        actor.send(Traced::new(BumpSchema(valid))).await?
    }

    /// Edits the metadata of `version` (latest when `None`, 0 or less) in place, validated as a whole
    /// schema; no new version. Stored only over the JSON it was made from: a concurrent edit
    /// makes it start again from that edit, so neither is lost.
    pub(crate) fn patch_metadata(
        &self,
        key: &DatasetKey,
        version: Option<i64>,
        patch: &MetadataPatch,
        protected_domains: &BTreeSet<String>,
    ) -> Result<ValidSchema> {
        let record = self.find(key)?;
        let version = version.filter(|v| *v > 0).unwrap_or(record.latest_version);
        for _ in 0..8 {
            let was_json = self
                .catalog
                .schema_json(record.id, version)?
                .ok_or_else(|| no_version(&record, version))?;
            let was: Schema = serde_json::from_str(&was_json).map_err(|e| {
                crate::error::Error::internal(format!("stored schema of {}: {e}", record.id))
            })?;
            let mut valid = self.validate(&patch.apply(was), protected_domains)?;
            valid.set_version(version);
            let json = stored_version(&valid)?.json;
            if self
                .catalog
                .replace_schema_json(record.id, version, &was_json, &json)?
            {
                return Ok(valid);
            }
        }
        Err(crate::error::Error::conflict(
            "The metadata kept changing while this edit was saved: try again",
        ))
    }

    /// `schema` checked as a version of this instance would be (nothing stored).
    pub(crate) fn validate(
        &self,
        schema: &Schema,
        protected_domains: &BTreeSet<String>,
    ) -> Result<ValidSchema> {
        let ctx = SchemaContext {
            layers: &self.layers,
            protected_domains,
        };
        validate(schema, &ctx)
    }

    /// The dataset's record as of now, or 404.
    pub(crate) fn find(&self, key: &DatasetKey) -> Result<DatasetRecord> {
        self.catalog
            .find_dataset(key)?
            .ok_or_else(|| key.not_found())
    }

    /// The schema of `version` (latest when `None`) of a dataset, or 404.
    pub(crate) fn schema(&self, key: &DatasetKey, version: Option<i64>) -> Result<ValidSchema> {
        let record = self.find(key)?;
        load_schema(self.catalog.as_ref(), &record, version)
    }

    /// The actor that serialises changes to `key`, started on first need; 404 if no such dataset.
    pub(crate) async fn dataset_actor(&self, key: &DatasetKey) -> Result<Addr<DatasetActor>> {
        self.addr
            .send(Traced::new(OpenDataset(key.clone())))
            .await?
    }
}

/// The 404 of a version the dataset does not have (as a read of it says).
fn no_version(record: &DatasetRecord, version: i64) -> crate::error::Error {
    crate::error::Error::not_found(format!(
        "Could not find the schema for dataset layer [{}], domain [{}], dataset [{}] and version [{version}]",
        record.key.layer, record.key.domain, record.key.dataset
    ))
}

struct RegistryActor {
    catalog: SharedCatalog,
    storage: Storage,
    /// Given to every dataset actor: each applies retention after its commits.
    history: HistorySettings,
    datasets: HashMap<DatasetKey, Addr<DatasetActor>>,
    pool: ArbiterPool,
}

impl Actor for RegistryActor {
    type Context = Context<Self>;
}

crate::traced::handle_traced!(RegistryActor: CreateDataset, OpenDataset, ForgetDataset);

struct CreateDataset(ValidSchema);

impl Message for CreateDataset {
    type Result = Result<()>;
}

impl Handler<CreateDataset> for RegistryActor {
    type Result = Result<()>;

    fn handle(&mut self, msg: CreateDataset, _: &mut Context<Self>) -> Result<()> {
        let schema = msg.0;
        let key = DatasetKey::new(schema.layer(), schema.domain(), schema.dataset());
        self.catalog.create_dataset(
            &key,
            schema.dataset(),
            schema.sensitivity(),
            &stored_version(&schema)?,
        )?;
        Ok(())
    }
}

struct OpenDataset(DatasetKey);

impl Message for OpenDataset {
    type Result = Result<Addr<DatasetActor>>;
}

impl Handler<OpenDataset> for RegistryActor {
    type Result = Result<Addr<DatasetActor>>;

    fn handle(&mut self, msg: OpenDataset, _: &mut Context<Self>) -> Self::Result {
        if let Some(addr) = self.datasets.get(&msg.0) {
            if addr.connected() {
                return Ok(addr.clone());
            }
        }
        let record = self
            .catalog
            .find_dataset(&msg.0)?
            .ok_or_else(|| msg.0.not_found())?;
        let actor = DatasetActor::new(
            self.catalog.clone(),
            self.storage.clone(),
            record,
            self.history,
        );
        let addr = DatasetActor::start_in_arbiter(&self.pool.next(), move |_| actor);
        self.datasets.insert(msg.0, addr.clone());
        Ok(addr)
    }
}

struct ForgetDataset(DatasetKey);

impl Message for ForgetDataset {
    type Result = ();
}

impl Handler<ForgetDataset> for RegistryActor {
    type Result = ();

    fn handle(&mut self, msg: ForgetDataset, _: &mut Context<Self>) {
        // The deleted dataset's actor stops once nothing refers to it.
        self.datasets.remove(&msg.0);
    }
}

/// A few arbiter threads that dataset actors are spread over, round-robin.
struct ArbiterPool {
    arbiters: Vec<Arbiter>,
    next: AtomicUsize,
}

impl ArbiterPool {
    fn new(size: usize) -> ArbiterPool {
        ArbiterPool {
            arbiters: (0..size.max(1)).map(|_| Arbiter::new()).collect(),
            next: AtomicUsize::new(0),
        }
    }

    fn next(&self) -> ArbiterHandle {
        let i = self.next.fetch_add(1, Ordering::Relaxed) % self.arbiters.len();
        self.arbiters[i].handle()
    }
}
