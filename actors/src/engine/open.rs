//! Opening the engine: what it is opened with, and the start-up that recovers from an
//! interrupted run before anything is served.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::{compactor, Engine, Settings};
use crate::auth::{Auth, AuthSettings, Bootstrap};
use crate::catalog::SharedCatalog;
use crate::error::Result;
use crate::jobs::Jobs;
use crate::manifest::remove_unlisted_files;
use crate::query::{QueryPools, QuerySettings};
use crate::registry::Registry;
use crate::storage::{Durability, Storage};

/// What the engine is opened with (the edge builds it from its flags and environment).
pub struct EngineConfig {
    /// The data folder: catalog, data, raw uploads, staging, results.
    pub data_dir: PathBuf,
    /// The PostgreSQL catalog's URL; `None`: the SQLite catalog in the data folder.
    pub catalog_url: Option<String>,
    /// This process's name among the nodes sharing the catalog: its jobs carry it.
    pub node_id: String,
    /// A job whose heartbeat is older than this is failed by any node (its node died).
    pub job_lease: Duration,
    /// The instance's layers (lower case).
    pub layers: Vec<String>,
    pub auth: AuthSettings,
    pub query: QuerySettings,
    /// Largest upload body accepted.
    pub max_upload_bytes: u64,
    /// The longest single value in an upload or sample.
    pub max_value_bytes: usize,
    /// How long a large query's result link stays valid.
    pub result_ttl_seconds: i64,
    /// Where the kept objects live (`RAPID_STORAGE_URL`): the data folder when `None`,
    /// `s3://bucket/prefix` for an S3-compatible bucket.
    pub storage_url: Option<String>,
    /// How old an unlisted object in a shared store must be before it is swept.
    pub sweep_grace: Duration,
    /// Whether acknowledged changes are fsynced first (`RAPID_DURABILITY`; see the durability
    /// discipline in `crate::storage`): the storage, the SQLite catalog and audit log, uploads and
    /// the admin credentials file of this engine follow it.
    pub durability: Durability,
    /// Log versions between Delta checkpoints of this engine's tables
    /// (`RAPID_DELTA_CHECKPOINT_INTERVAL`; 0: none).
    pub delta_checkpoint_interval: u64,
    /// When small data files are merged.
    pub compaction: crate::compaction::CompactionSettings,
    /// How long replaced files stay readable as earlier commits.
    pub history: crate::history::HistorySettings,
    /// How long audit rows are kept (`None`: for ever).
    pub audit_retention: Option<Duration>,
    /// Whether uploads are profiled (`RAPID_PROFILE_UPLOADS`).
    pub profile_uploads: bool,
    /// How webhooks are delivered (receivers allowed, retry period, time limit).
    pub deliveries: crate::events::delivery::DeliverySettings,
}

impl Engine {
    /// Opens the catalog, starts auth, recovers from an interrupted run (see [`recover`]),
    /// starts the query threads and the registry. Call once per engine, inside a running actix
    /// system, after the data folder's modes are set. Everything the engine decides by is in
    /// `config`: engines in one process may differ.
    pub fn open(config: EngineConfig) -> Result<(Engine, Bootstrap)> {
        let durability = config.durability;
        // First: a storage URL that cannot be used stops the start before the catalog is made.
        let storage = Storage::open(
            &config.data_dir,
            config.storage_url.as_deref(),
            config.sweep_grace,
            durability,
        )?
        .with_checkpoint_interval(config.delta_checkpoint_interval);
        let catalog =
            crate::catalog::open(&config.data_dir, config.catalog_url.as_deref(), durability)?;
        let (auth, bootstrap) = Auth::start(catalog.clone(), config.auth, durability)?;
        let shared = config.catalog_url.is_some();
        recover(&catalog, &storage, &config.node_id, shared)?;
        catch_up(&catalog, &storage, &config.history)?;
        // Before anything can run a query: empties the spill folder, starts the query threads.
        let pools = QueryPools::start(config.query)?;
        let jobs = Jobs::new(catalog.clone(), &config.node_id);
        jobs.start_heartbeat(config.job_lease)?;
        let registry = Registry::start(
            catalog.clone(),
            storage.clone(),
            config.layers,
            config.history,
        );
        let compactor = compactor::Compactor::start(
            catalog.clone(),
            storage.clone(),
            registry.clone(),
            jobs.clone(),
            config.compaction,
        )?;
        let audit = crate::audit::AuditLog::start(
            crate::catalog::open_audit(
                &config.data_dir,
                config.catalog_url.as_deref(),
                durability,
            )?,
            config.audit_retention,
            match config.catalog_url {
                Some(_) => crate::audit::Writers::Several,
                None => crate::audit::Writers::One,
            },
        )?;
        let events = start_events(&catalog, &auth, config.deliveries, shared)?;
        let settings = Arc::new(Settings {
            shared_catalog: shared,
            max_upload_bytes: config.max_upload_bytes,
            max_value_bytes: config.max_value_bytes,
            result_ttl_seconds: config.result_ttl_seconds,
            history: config.history,
            profile_uploads: config.profile_uploads,
        });
        let engine = Engine {
            mask_key: Arc::new(auth.mask_key()),
            auth,
            registry,
            jobs,
            catalog,
            storage,
            pools,
            settings,
            commits: Arc::default(),
            compactor,
            audit,
            events,
        };
        Ok((engine, bootstrap))
    }
}

/// What a stop left behind, done before anything reads: Delta log versions the catalog has and
/// the logs lack, and the files of commits that aged out meanwhile.
fn catch_up(
    catalog: &Arc<dyn crate::catalog::Catalog>,
    storage: &Storage,
    history: &crate::history::HistorySettings,
) -> Result<()> {
    // Delta logs behind the catalog (a stop between a commit and its log version, versions
    // stored before the logs, `rapid-rs admin compact`) are written first, while the
    // catalog still has every retired row their missing versions are derived from.
    let (logged, lagging) = crate::delta_log::sync_all(catalog.as_ref(), storage)?;
    if logged > 0 {
        tracing::info!(
            logged,
            "wrote Delta log versions the catalog had and the log lacked"
        );
    }
    // Commits that aged out while stopped (or merges of `rapid-rs admin compact`, which
    // applies no retention) give up their files before anything reads.
    let expired = crate::history::expire_all(catalog.as_ref(), storage, history, &lagging)?;
    if expired > 0 {
        tracing::info!(expired, "removed files of expired commits");
    }
    Ok(())
}

/// The webhook delivery loop, and the receiver rule subscriptions are checked against.
fn start_events(
    catalog: &SharedCatalog,
    auth: &Auth,
    mut deliveries: crate::events::delivery::DeliverySettings,
    shared: bool,
) -> Result<Arc<super::events::EventsState>> {
    deliveries.shared = shared;
    let receivers = deliveries.rule.clone();
    let dispatcher =
        crate::events::delivery::Dispatcher::start(catalog.clone(), auth.clone(), deliveries)?;
    Ok(Arc::new(super::events::EventsState {
        dispatcher,
        receivers,
    }))
}

/// Start-up after a crash or a stop: staging holds only unfinished work, this node's jobs left
/// running can never finish (other nodes' are failed by their lease), and files not in the
/// manifest belong to commits that never happened. With a `shared` catalog (PostgreSQL) other
/// nodes may be staging and placing files in this folder right now: staging and unlisted files
/// are left alone (a leftover costs space; removing another node's would lose its upload).
fn recover(catalog: &SharedCatalog, storage: &Storage, node_id: &str, shared: bool) -> Result<()> {
    let staging = storage.staging_root();
    if staging.exists() && !shared {
        std::fs::remove_dir_all(&staging)?;
    }
    std::fs::create_dir_all(&staging)?;
    let failed = Jobs::new(catalog.clone(), node_id).fail_interrupted()?;
    // A shared object store sweeps only what is older than its grace: safe beside other nodes.
    let removed = match shared && storage.objects().unlisted_grace().is_none() {
        true => 0,
        false => remove_unlisted_files(&catalog.stored_files()?, storage)?,
    };
    if failed > 0 || removed > 0 {
        tracing::warn!(
            failed_jobs = failed,
            removed_files = removed,
            "recovered from an interrupted run"
        );
    }
    Ok(())
}
