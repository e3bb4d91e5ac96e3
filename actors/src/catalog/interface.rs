//! The catalog interface: every operation the engine asks of its catalog, in domain terms.
//! Each method is one atomic step (one transaction in SQL implementations); a method that must
//! happen "before anything else commits" takes a callback run inside that step. Refusals that
//! callers show to clients are `Error`s built by [`super::refusal`], identical in every
//! implementation; anything else failing is an internal error.

use crate::catalog::types::*;
use crate::error::Result;
use crate::job_state::{JobReport, JobStep, JobView, NewJob};
use crate::key::{DatasetKey, DatasetRecord};
use crate::sensitivity::Sensitivity;

/// Datasets and their schema versions.
pub trait DatasetCatalog {
    /// The dataset named `key` (dataset compared case-insensitively), with its latest version.
    fn find_dataset(&self, key: &DatasetKey) -> Result<Option<DatasetRecord>>;

    /// The keys of every dataset, ordered by layer, domain, dataset.
    fn dataset_keys(&self) -> Result<Vec<DatasetKey>>;

    /// Creates the dataset with its first schema version, under an id no dataset ever had (not
    /// even a deleted one). Refused: [`super::refusal::dataset_exists`]
    /// (conflict), [`super::refusal::no_protected_domain`] (invalid).
    fn create_dataset(
        &self,
        key: &DatasetKey,
        name: &str,
        sensitivity: Sensitivity,
        schema: &SchemaVersion,
    ) -> Result<DatasetRecord>;

    /// Stores the next schema version: `next` sees the dataset as it is inside the step and
    /// returns the version to store (or refuses). Returns the record with its new latest version.
    /// Refused: `key.not_found()`, [`super::refusal::no_protected_domain`], or `next`'s error.
    fn add_schema_version(
        &self,
        key: &DatasetKey,
        next: &mut dyn FnMut(&DatasetRecord) -> Result<SchemaVersion>,
    ) -> Result<DatasetRecord>;

    /// The stored JSON of one schema version.
    fn schema_json(&self, dataset_id: i64, version: i64) -> Result<Option<String>>;

    /// Replaces one schema version's JSON in place (its metadata edited), only if it is still
    /// `was`: false when it changed meanwhile (the caller reads it again) or is gone.
    fn replace_schema_json(
        &self,
        dataset_id: i64,
        version: i64,
        was: &str,
        json: &str,
    ) -> Result<bool>;

    /// Removes the dataset with every version, schema and manifest row.
    fn delete_dataset(&self, dataset_id: i64) -> Result<()>;

    /// When the version's rows last changed (RFC 3339 text), if ever: its newest upload, or a
    /// later rollback or raw file deletion.
    fn last_updated(&self, dataset_id: i64, version: i64) -> Result<Option<String>>;

    /// Who sent the newest upload of the version (for rows from before uploaders were recorded:
    /// the name of its job's subject), if known.
    fn last_uploaded_by(&self, dataset_id: i64, version: i64) -> Result<Option<String>>;
}

/// The manifest: which raw uploads and Parquet files make up each version.
pub trait ManifestCatalog {
    /// The version's data files, in the order they were recorded.
    fn data_files(&self, dataset_id: i64, version: i64) -> Result<Vec<DataFile>>;

    /// The version's manifest generation: a number that grows with every data file recorded or
    /// dropped in the version (triggers on `data_files` keep it, whoever writes), so a commit can
    /// be `based_on` the state its checks saw at a cost that does not grow with the files.
    fn manifest_generation(&self, dataset_id: i64, version: i64) -> Result<i64>;

    /// The version's data files in the partitions `partition_paths` (what an OVERWRITE replaces).
    fn data_files_in(
        &self,
        dataset_id: i64,
        version: i64,
        partition_paths: &[String],
    ) -> Result<Vec<DataFile>>;

    /// As [`Self::data_files`], and `hold` runs with them before any commit that replaces them
    /// can return (a reader leases them there, so none is deleted under it).
    fn data_files_held(
        &self,
        dataset_id: i64,
        version: i64,
        hold: &mut dyn FnMut(&[DataFile]),
    ) -> Result<Vec<DataFile>>;

    /// The version's raw files, oldest first (then by name).
    fn raw_files(&self, dataset_id: i64, version: i64) -> Result<Vec<RawFile>>;

    /// One upload commit, atomically: the raw file, its data files and their unique keys, the
    /// replaced files retired (their keys dropped), the numbered commit (APPEND or OVERWRITE) and
    /// the job SUCCESS. Refused (nothing recorded): [`super::refusal::commit_conflict`] when
    /// the version's manifest generation is not `based_on`; [`super::refusal::job_not_running`] when its job
    /// is no longer IN PROGRESS; a raw file name or data path already recorded.
    fn commit_upload(&self, commit: &UploadCommit) -> Result<()>;

    /// Which keys of `lists` (each best ascending: the index merge-joins them; the staged files'
    /// lists as they are, not merged) the version's index of `unique` column `column` holds,
    /// with the partition of the file holding each. `None` when the version's index is not built
    /// yet (its files were stored before the index existed; see [`UploadCommit::backfill`]).
    fn stored_keys(
        &self,
        dataset_id: i64,
        version: i64,
        column: &str,
        lists: &[&crate::catalog::KeyList],
    ) -> Result<Option<Vec<KeyHit>>>;

    /// Removes one raw file and every data file it contributed from the version, as one DELETE
    /// commit made by `subject`; returns the paths of those data files (retired: kept for the
    /// commits before this one), or `None` when there is no such raw file.
    fn delete_raw_file(
        &self,
        dataset_id: i64,
        version: i64,
        raw_filename: &str,
        subject: Option<&str>,
    ) -> Result<Option<Vec<String>>>;

    /// The parts of merged data files (files holding rows of several raw files), with the id of
    /// the file each is in, ordered by file and row: of the version's files holding rows of raw
    /// file `holding`, or of the files `ids`.
    fn file_parts(&self, of: PartsOf<'_>) -> Result<Vec<(i64, FilePart)>>;

    /// One [`FileSwap`], atomically, as one commit (COMPACT, or DELETE with `raw_deleted`): the
    /// added files recorded with their parts, the removed files retired, and the raw file (with
    /// the data files it alone contributed, retired, and its unique keys) deleted. Unique keys
    /// name raw files, not data files: merging moves none. Returns the paths of every data file
    /// retired; `None` (nothing recorded) when `raw_deleted` names no raw file.
    /// Refused: [`super::refusal::commit_conflict`] when a removed file is gone.
    fn swap_files(&self, swap: &FileSwap) -> Result<Option<Vec<String>>>;

    /// Every file the manifest lists (retired files kept for retained commits included), as one
    /// committed state.
    fn stored_files(&self) -> Result<StoredFiles>;
}

/// Commits as versions (issue 36): every change of a version's files is a numbered commit,
/// recorded in the transaction of the change itself. A file a commit replaces or removes leaves
/// the live manifest but is *retired*, kept with the commits that added and removed it, so every
/// retained commit's files can still be read; [`HistoryCatalog::expire_commits`] gives up those
/// no retained commit needs.
pub trait HistoryCatalog {
    /// The version's commits, newest first: `limit` of them after skipping `offset`.
    fn commits(
        &self,
        dataset_id: i64,
        version: i64,
        offset: i64,
        limit: i64,
    ) -> Result<Vec<Commit>>;

    /// The files live at commit `at` (added at or before it, not removed at or before it), and
    /// `hold` runs with them before any expiry that gives them up can return (a reader leases
    /// them there). Refused (not found): [`super::refusal::no_such_commit`] for a commit the
    /// version never had or a time before its first, [`super::refusal::commit_expired`] for a
    /// commit past retention.
    fn files_at_held(
        &self,
        dataset_id: i64,
        version: i64,
        at: &AsOf,
        hold: &mut dyn FnMut(&[DataFile]),
    ) -> Result<FilesAt>;

    /// Applies `retention` to the version: the commits it no longer retains become unreadable
    /// and the retired files only they listed leave the catalog; returns those files' paths (the
    /// caller deletes the objects once no reader holds them).
    fn expire_commits(
        &self,
        dataset_id: i64,
        version: i64,
        retention: &Retention,
    ) -> Result<Vec<String>>;

    /// A ROLLBACK commit by `subject` whose live files are those of commit `to` (no data copied:
    /// retired files are listed again, with their parts; later files retired); the version's
    /// unique index is rebuilt by its next checked commit. Returns the new commit's number.
    /// Refused: as [`Self::files_at_held`] for `to`, and
    /// [`super::refusal::rollback_past_deletion`] across a raw file deletion.
    fn rollback(
        &self,
        dataset_id: i64,
        version: i64,
        to: i64,
        subject: Option<&str>,
    ) -> Result<i64>;

    /// The (dataset id, version) pairs that keep retired files.
    fn versions_with_retired_files(&self) -> Result<Vec<(i64, i64)>>;

    /// The version's retired files (one per path) holding rows of raw file `raw_filename`: its
    /// own data files, and merged files with a part of it.
    fn retired_holding(
        &self,
        dataset_id: i64,
        version: i64,
        raw_filename: &str,
    ) -> Result<Vec<RetiredHolding>>;

    /// Erasure's catalog step, one transaction: each retired file of `rewrites` dropped or
    /// replaced by its rewrite (every retired row of that path, parts too), and the newest
    /// DELETE commit of `raw_filename` marked ERASE. Returns the old paths no file lists any
    /// more (the caller deletes them once no reader holds them). Refused (not found) when the
    /// version has no DELETE commit of that raw file.
    fn erase_retired(
        &self,
        dataset_id: i64,
        version: i64,
        raw_filename: &str,
        rewrites: &[RetiredRewrite],
    ) -> Result<Vec<String>>;
}

/// What each version's Delta Lake log is derived from (`crate::delta_log`): the catalog is the
/// source of truth, the log a copy of its commits that other engines read.
pub trait ChangesCatalog {
    /// The version's oldest readable commit (`history_floor`) and its newest (0: none yet).
    fn history_bounds(&self, dataset_id: i64, version: i64) -> Result<(i64, i64)>;

    /// Commits `from..=to` of the version, in order, each with the files whose `added_commit`
    /// or `removed_commit` it is. Exact for commits after the floor (expiry drops the retired
    /// rows removed at or before it).
    fn commit_changes(
        &self,
        dataset_id: i64,
        version: i64,
        from: i64,
        to: i64,
    ) -> Result<Vec<CommitChanges>>;
}

/// Column profiles of uploads (`crate::profile`), one per raw file, kept as JSON text by the
/// upload's commit ([`UploadCommit::profile`]). A raw file's profile goes with it (deleted with
/// the file, replaced files included).
pub trait ProfileCatalog {
    /// The version's kept profiles with their raw file's name, in the order they were recorded.
    fn profiles(&self, dataset_id: i64, version: i64) -> Result<Vec<(String, String)>>;
}

/// Called by [`JobCatalog::fail_in_progress_jobs`] with the number failed and a way to read
/// the manifest, before any other catalog write can commit.
pub(crate) type AfterFailing<'a> =
    &'a mut dyn FnMut(usize, &dyn Fn() -> Result<StoredFiles>) -> Result<()>;

/// Jobs: created IN PROGRESS, moved along their steps, ended SUCCESS or FAILED once. Each is run
/// by one node (one process), which keeps its running jobs' heartbeats fresh; a job whose
/// heartbeat is older than the lease was left by a node that died, and any node fails it.
pub trait JobCatalog {
    /// Records a new job IN PROGRESS at its kind's first step, run by `node_id`, with a fresh
    /// heartbeat.
    fn create_job(&self, job_id: &str, node_id: &str, job: &NewJob<'_>) -> Result<()>;

    /// Refreshes the heartbeat of every job IN PROGRESS run by `node_id`; returns how many.
    fn heartbeat_jobs(&self, node_id: &str) -> Result<usize>;

    /// Every job IN PROGRESS whose heartbeat is older than `lease` (any node's) becomes FAILED
    /// with `errors`; returns how many.
    fn fail_expired_jobs(&self, lease: std::time::Duration, errors: &[String]) -> Result<usize>;

    /// Moves a job IN PROGRESS at `from` to `to`; false when it is not there.
    fn advance_job(&self, job_id: &str, from: JobStep, to: JobStep) -> Result<bool>;

    /// Records how many rows the job has processed.
    fn set_job_progress(&self, job_id: &str, rows: u64) -> Result<()>;

    /// A job IN PROGRESS becomes FAILED with `errors`; a finished job stays as it ended.
    fn fail_job(&self, job_id: &str, errors: &[String]) -> Result<()>;

    /// As [`Catalog::fail_job`], for a refused upload: the link to its whole report and how
    /// many rows had problems.
    fn fail_job_with_report(
        &self,
        job_id: &str,
        errors: &[String],
        report: &JobReport,
    ) -> Result<()>;

    /// Records on a job IN PROGRESS the report and quarantine of the upload it is committing
    /// (a quarantining upload's rows kept apart); a finished job stays as it ended.
    fn record_job_report(&self, job_id: &str, report: &JobReport) -> Result<()>;

    /// A job IN PROGRESS becomes SUCCESS (a job with nothing to download).
    fn succeed_job(&self, job_id: &str) -> Result<()>;

    /// A job IN PROGRESS becomes SUCCESS with its result link.
    fn succeed_job_with_url(&self, job_id: &str, result_url: &str) -> Result<()>;

    fn job(&self, job_id: &str) -> Result<Option<JobView>>;

    /// The jobs of one subject (every job when `None`), newest first, at most `limit`.
    fn jobs(&self, subject_id: Option<&str>, limit: usize) -> Result<Vec<JobView>>;

    /// Every job IN PROGRESS run by `node_id` (or recorded before jobs had nodes) becomes FAILED
    /// with `errors`; then `after` runs (see [`AfterFailing`]). Returns how many failed.
    fn fail_in_progress_jobs(
        &self,
        node_id: &str,
        errors: &[String],
        after: AfterFailing<'_>,
    ) -> Result<usize>;
}

/// Subjects, credentials, permissions, protected domains, the legacy signing key.
pub trait SubjectCatalog {
    /// Every subject, permission and protected domain, as one committed state.
    fn auth_rows(&self) -> Result<AuthRows>;

    /// A number that grows with every committed change to subjects (credentials included),
    /// permissions or protected domains, whoever makes it (another node, `rapid-rs admin`): a
    /// node compares it with its cached picture's to know when to read the rows again.
    fn auth_version(&self) -> Result<i64>;

    /// Creates a subject with its permissions; false (nothing created) when its name, among
    /// subjects of its kind (case-insensitively), or a user's email is taken.
    fn create_subject(&self, subject: &SubjectRow, permissions: &[String]) -> Result<bool>;

    /// Deletes a client; false when there is none with this id.
    fn delete_client(&self, client_id: &str) -> Result<bool>;

    /// Deletes a user only when `user_id` and `username` (any case) name the same user.
    fn delete_user(&self, user_id: &str, username: &str) -> Result<bool>;

    /// A user's new password hash; it no longer must change it.
    fn set_password(&self, user_id: &str, password_hash: &str) -> Result<()>;

    /// A client's new secret digest; false when there is no such client.
    fn set_client_secret(&self, client_id: &str, secret_digest: &[u8]) -> Result<bool>;

    /// Replaces a subject's whole permission set; false when there is no such subject.
    fn replace_permissions(&self, subject_id: &str, permissions: &[String]) -> Result<bool>;

    /// Creates a protected domain (lower case); false when it exists.
    fn create_protected_domain(&self, domain: &str) -> Result<bool>;

    /// Deletes a protected domain no PROTECTED dataset uses, and the permissions in `revoke`
    /// from every subject.
    fn delete_protected_domain(&self, domain: &str, revoke: &[String]) -> Result<DomainDeletion>;

    /// The environment's admin client: its secret replaced if it exists, else created.
    fn put_admin_client(&self, admin: &AdminClient) -> Result<()>;

    /// Creates the admin client when there are no subjects at all, calling `before_commit` before
    /// it becomes visible (a failure there creates nothing); false when subjects exist.
    fn create_first_admin(
        &self,
        admin: &AdminClient,
        before_commit: &mut dyn FnMut() -> Result<()>,
    ) -> Result<bool>;

    /// The oldest client whose name starts with `prefix` (any case).
    fn oldest_client_named(&self, prefix: &str) -> Result<Option<String>>;

    /// The token signing key older installs kept in the catalog, if still there.
    fn legacy_signing_key(&self) -> Result<Option<Vec<u8>>>;

    /// Removes the legacy signing key so that its bytes do not linger in the catalog's storage.
    fn erase_legacy_signing_key(&self) -> Result<()>;
}

/// The whole catalog, shared as `Arc<dyn Catalog>` by every part of the engine.
/// Dataset policies (one per schema version, kept as the JSON the API answers) and subject
/// attributes (a JSON object of text values), read when a policy names `subject_attr`.
pub trait PolicyCatalog {
    /// The policy of one schema version, if any.
    fn policy(&self, dataset_id: i64, version: i64) -> Result<Option<String>>;

    /// Sets (replaces) the policy of one schema version; false when the version does not exist.
    fn put_policy(&self, dataset_id: i64, version: i64, json: &str) -> Result<bool>;

    /// Removes the policy of one schema version; false when it had none.
    fn delete_policy(&self, dataset_id: i64, version: i64) -> Result<bool>;

    /// A subject's attributes (a JSON object), if ever set.
    fn subject_attributes(&self, subject_id: &str) -> Result<Option<String>>;

    /// Replaces a subject's attributes; false when the subject does not exist.
    fn put_subject_attributes(&self, subject_id: &str, json: &str) -> Result<bool>;
}

pub trait Catalog:
    DatasetCatalog
    + ManifestCatalog
    + HistoryCatalog
    + ChangesCatalog
    + JobCatalog
    + SubjectCatalog
    + ProfileCatalog
    + PolicyCatalog
    + super::events::EventsCatalog
    + Send
    + Sync
{
    /// Answers a trivial read (readiness).
    fn ping(&self) -> Result<()>;

    /// Whether other processes (the other nodes of a service) change this catalog while this one
    /// runs, so that what a node caches of it must be checked against it before use. False for a
    /// catalog only one running service opens (SQLite: the data folder's lock).
    fn is_shared(&self) -> bool {
        false
    }

    /// Jobs by kind and status, object counts and size, for metrics.
    fn figures(&self) -> Result<CatalogFigures>;
}
