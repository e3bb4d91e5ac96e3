//! The engine facade: one handle, opened once, whose methods are the use cases of the service.
//! Every front door (the HTTP routes today, web pages and the admin CLI next) calls these and
//! nothing below them. Each method takes a permission pass ([`crate::auth::pass`]) proving the
//! caller was checked for what it asks; the engine does not check again and trusts no other proof.
//!
//! Handles inside are cheap clones (actor addresses, the catalog's shared connection), so
//! `Engine` is `Clone` and can be held by every worker.

mod audit;
mod browse;
mod changes;
mod compactor;
mod events;
mod history;
mod open;
mod ops;
mod overview;
mod policy;
mod profile;
mod query;
mod result_links;
pub mod sql;
mod upload;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

pub use crate::history::{AsOf, Commit};
pub use crate::query::answers::{Cell, Table};
pub use crate::query::language::request::{Condition, Limit, OrderBy, QueryRequest};
pub use crate::query::reading::info::{DatasetInfo, DateRange, InfoColumn, InfoMetadata};
pub use crate::registry::listing::{DatasetEntry, DatasetFilter, Enrichment, OneOrMany};
pub use crate::schema::Tags;
pub use browse::{RawFile, VersionFiles};
pub use changes::{CommitRange, MAX_CHANGE_COMMITS};
pub use compactor::CompactionFigures;
pub use events::{DeliveryCounts, DeliveryView, EventPage, NewWebhook, WebhookView};
pub use history::MAX_HISTORY_PAGE;
pub use open::EngineConfig;
pub use ops::{CatalogFigures, CommitFigures, Unfinished};
pub use overview::{Overview, PolicyNotice, OVERVIEW_VERSIONS};
pub use query::OutputFormat;
pub use upload::{UploadAccepted, UploadTarget};

use crate::auth::pass::{self, AccessKind, AdminPass, DatasetPass, SubjectPass, UserAdminPass};
use crate::auth::{Auth, Subject};
use crate::catalog::SharedCatalog;
use crate::dataset::DeleteRawFile;
use crate::error::{Error, Result};
use crate::file_kind::FileKind;
use crate::infer::{ColumnSample, DraftTarget, Sample};
use crate::jobs::{JobView, Jobs};
use crate::key::{DatasetKey, DatasetRecord};
use crate::manifest::remove_unlisted_files;
use crate::query::QueryPools;
use crate::registry::Registry;
use crate::schema::{MetadataPatch, Schema, ValidSchema};
use crate::storage::{safe_segment, Durability, Storage};
use crate::traced::Traced;

#[derive(Clone)]
pub struct Engine {
    auth: Auth,
    registry: Registry,
    jobs: Jobs,
    catalog: SharedCatalog,
    storage: Storage,
    /// This engine's query threads, slots and memory pool (two engines never share them).
    pools: Arc<QueryPools>,
    settings: Arc<Settings>,
    commits: Arc<ops::CommitCounters>,
    compactor: compactor::Compactor,
    /// The key of the `hash` column mask (see `Auth::mask_key`).
    mask_key: Arc<Vec<u8>>,
    audit: crate::audit::AuditLog,
    /// The webhook delivery loop (stops with the last engine handle) and the receiver rule.
    events: Arc<events::EventsState>,
}

struct Settings {
    /// The catalog (PostgreSQL) is shared with other nodes, which may share the data folder.
    shared_catalog: bool,
    max_upload_bytes: u64,
    max_value_bytes: usize,
    result_ttl_seconds: i64,
    history: crate::history::HistorySettings,
    profile_uploads: bool,
}

impl Engine {
    /// Subjects, credentials, tokens, permissions and protected domains.
    pub fn auth(&self) -> &Auth {
        &self.auth
    }

    /// The instance's layers.
    pub fn layers(&self) -> &[String] {
        self.registry.layers()
    }

    /// Whether this engine syncs what it acknowledges (`EngineConfig::durability`).
    pub fn durability(&self) -> Durability {
        self.storage.durability()
    }

    /// A pass for any authenticated subject.
    pub fn subject_pass(&self, subject: Arc<Subject>) -> SubjectPass {
        pass::subject_pass(subject)
    }

    /// A pass for a DATA_ADMIN (403 otherwise).
    pub fn admin_pass(&self, subject: Arc<Subject>) -> Result<AdminPass> {
        pass::admin_pass(subject)
    }

    /// A pass for a USER_ADMIN (403 otherwise).
    pub fn user_admin_pass(&self, subject: Arc<Subject>) -> Result<UserAdminPass> {
        pass::user_admin_pass(subject)
    }

    /// A pass to read or write the dataset `key` (403 without access, 404 if unknown).
    pub fn dataset_pass<A: AccessKind>(
        &self,
        subject: Arc<Subject>,
        key: &DatasetKey,
    ) -> Result<DatasetPass<A>> {
        pass::dataset_pass(subject, key, |k| self.registry.find(k))
    }

    /// `POST /schema`: validates `schema` and creates its dataset at version 1.
    pub async fn create_schema(&self, _: &AdminPass, schema: &Schema) -> Result<ValidSchema> {
        let protected = self.auth.snapshot().protected_domains.clone();
        self.registry.create_schema(schema, &protected).await
    }

    /// `PUT /schema`: validates `schema` and stores it as the dataset's next version, under the
    /// latest version's policy if it has one (see [`Engine::check_policy_carries`]).
    pub async fn update_schema(&self, _: &AdminPass, schema: &Schema) -> Result<ValidSchema> {
        let protected = self.auth.snapshot().protected_domains.clone();
        self.check_policy_carries(schema, &protected)?;
        self.registry.update_schema(schema, &protected).await
    }

    /// `PATCH /schema/{layer}/{domain}/{dataset}`: edits a version's metadata in place.
    pub fn patch_metadata(
        &self,
        _: &AdminPass,
        key: &DatasetKey,
        version: Option<i64>,
        patch: &MetadataPatch,
    ) -> Result<ValidSchema> {
        let protected = self.auth.snapshot().protected_domains.clone();
        self.registry
            .patch_metadata(key, version, patch, &protected)
    }

    /// Where a schema-generation sample of `kind` is received (in staging, wiped at start-up).
    pub fn new_sample_path(&self, _: &SubjectPass, kind: FileKind) -> PathBuf {
        self.storage.sample_file(kind.extension())
    }

    /// The folder where the web pages keep generation samples (one folder each).
    pub fn kept_samples_root(&self) -> PathBuf {
        self.storage.kept_samples_root()
    }

    /// A draft schema inferred from `sample`, on a blocking thread.
    pub async fn draft_schema(
        &self,
        pass: &SubjectPass,
        sample: Sample,
        target: DraftTarget,
    ) -> Result<Schema> {
        Ok(self.draft_sampled(pass, sample, target).await?.0)
    }

    /// A draft schema inferred from `sample`, with what the read showed of each column (its
    /// example values and null count), on a blocking thread.
    pub async fn draft_sampled(
        &self,
        _: &SubjectPass,
        sample: Sample,
        target: DraftTarget,
    ) -> Result<(Schema, Vec<ColumnSample>)> {
        let protected: BTreeSet<String> = self.auth.snapshot().protected_domains.clone();
        let layers = self.layers().to_vec();
        tokio::task::spawn_blocking(move || {
            crate::infer::draft_schema(&sample, target, &layers, &protected)
        })
        .await
        .map_err(|e| Error::internal(format!("schema inference task: {e}")))?
    }

    /// The latest version of every dataset the subject may see, filtered.
    pub fn list(
        &self,
        pass: &SubjectPass,
        filter: &DatasetFilter,
        enriched: bool,
    ) -> Result<Vec<DatasetEntry>> {
        let permissions = &pass.subject().permissions;
        crate::registry::list_datasets(self.catalog.as_ref(), permissions, filter, enriched)
    }

    /// Schema and figures of a version (the latest when `version` is absent or 0).
    pub async fn info<A: AccessKind>(
        &self,
        pass: &DatasetPass<A>,
        version: Option<i64>,
    ) -> Result<DatasetInfo> {
        let record = pass.record();
        let version = pick_version(version, record.latest_version);
        let schema = self.registry.schema(&record.key, Some(version))?;
        // Its row count and date ranges are over every row: refused under a policy.
        self.refuse_under_policy(pass.subject(), record, version, &schema, "figures")?;
        crate::query::reading::info::dataset_info(
            &self.pools,
            self.catalog.as_ref(),
            &self.storage,
            record,
            &schema,
            version,
        )
        .await
    }

    /// The raw file names of a version; 404 for an unknown dataset or no files.
    pub fn files(&self, _: &SubjectPass, key: &DatasetKey, version: i64) -> Result<Vec<String>> {
        let record = self.registry.find(key)?;
        let files = self.catalog.raw_files(record.id, version)?;
        if files.is_empty() {
            return Err(Error::not_found(format!(
                "There are no uploaded files for the layer [{}], domain [{}], dataset [{}] and version [{version}]",
                key.layer, key.domain, key.dataset
            )));
        }
        Ok(files.into_iter().map(|f| f.raw_filename).collect())
    }

    /// Deletes one raw file of a version and the rows it brought, through the dataset's actor;
    /// `erase`: from every retained commit too (an ERASE commit).
    pub async fn delete_file(
        &self,
        pass: &DatasetPass<crate::auth::pass::Write>,
        version: i64,
        filename: &str,
        erase: bool,
    ) -> Result<()> {
        if !safe_segment(filename) {
            return Err(Error::invalid(format!("Invalid file name [{filename}]")));
        }
        let actor = self.registry.dataset_actor(&pass.record().key).await?;
        actor
            .send(Traced::new(DeleteRawFile {
                version,
                raw_filename: filename.to_string(),
                subject: pass.subject().id.clone(),
                erase,
            }))
            .await??;
        Ok(())
    }

    /// Merges the small files of a version now (a COMPACT job; the answer is its id); 404 for an
    /// unknown dataset or version.
    pub fn compact(
        &self,
        pass: &AdminPass,
        key: &DatasetKey,
        version: Option<i64>,
    ) -> Result<String> {
        let record = self.registry.find(key)?;
        let version = pick_version(version, record.latest_version);
        self.registry.schema(key, Some(version))?;
        let job_id = self.jobs.create(crate::jobs::NewJob {
            kind: crate::jobs::JobKind::Compact,
            key: &record.key,
            version,
            subject_id: &pass.subject().id,
            filename: None,
            raw_filename: None,
        })?;
        self.compactor.demand(&record.key, version, &job_id);
        Ok(job_id)
    }

    /// Deletes every version, file and schema of a dataset; 404 if there is none.
    pub async fn delete_dataset(&self, _: &AdminPass, key: &DatasetKey) -> Result<DatasetRecord> {
        self.registry.delete_dataset(key).await
    }

    /// The subject's jobs; every job for a DATA_ADMIN.
    pub fn jobs(&self, pass: &SubjectPass) -> Result<Vec<JobView>> {
        let all = pass.is_data_admin();
        self.jobs.list((!all).then_some(pass.subject().id.as_str()))
    }

    /// One job, for its owner or a DATA_ADMIN (403 otherwise, 404 if unknown).
    pub fn job(&self, pass: &SubjectPass, job_id: &str) -> Result<JobView> {
        let job = self.jobs.get(job_id)?;
        if job.subject_id != pass.subject().id && !pass.is_data_admin() {
            return Err(Error::forbidden(format!(
                "The job {} belongs to another subject",
                job.job_id
            )));
        }
        Ok(job)
    }

    /// Removes the objects of a shared store (S3) that no catalog row lists and that are older
    /// than the grace period; returns how many. Blocking. The local folder has nothing to do:
    /// only this process writes to it, and start-up removed what no row lists.
    pub fn sweep_unlisted_objects(&self) -> Result<usize> {
        if self.storage.objects().unlisted_grace().is_none() {
            return Ok(0);
        }
        remove_unlisted_files(&self.catalog.stored_files()?, &self.storage)
    }

    /// Applies history retention to every version keeping retired files (commits also age out
    /// while no new commit lands); returns how many files were given up. Blocking.
    /// Delta logs that lag are brought up to date first (`crate::delta_log::sync_all`).
    pub fn expire_history(&self) -> Result<usize> {
        let (_, lagging) = crate::delta_log::sync_all(self.catalog.as_ref(), &self.storage)?;
        crate::history::expire_all(
            self.catalog.as_ref(),
            &self.storage,
            &self.settings.history,
            &lagging,
        )
    }

    /// Removes large-query results older than their link's lifetime; returns how many. Blocking.
    pub fn remove_expired_results(&self) -> usize {
        let ttl = Duration::from_secs(self.settings.result_ttl_seconds.max(0) as u64);
        crate::query::answers::large::remove_expired_results(&self.storage, ttl)
    }
}

/// The version asked for, or the latest when absent or 0 (as rAPId).
pub fn pick_version(asked: Option<i64>, latest: i64) -> i64 {
    asked.filter(|v| *v > 0).unwrap_or(latest)
}
