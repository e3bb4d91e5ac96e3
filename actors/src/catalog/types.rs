//! The plain values the catalog interface takes and returns: no database types, so every
//! implementation (SQLite today, PostgreSQL next) speaks the same language.

use crate::key::DatasetKey;

/// A Parquet file of a dataset version, as the manifest lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataFile {
    pub id: i64,
    pub raw_filename: String,
    pub partition_path: String,
    /// Relative to the data folder.
    pub path: String,
    pub rows: i64,
    pub bytes: i64,
    /// Its column bounds (`manifest::stats`, JSON the catalog keeps as it is); `None` for files
    /// recorded before bounds were kept.
    pub stats: Option<String>,
}

/// A raw upload of a dataset version.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RawFile {
    pub raw_filename: String,
    pub original_filename: String,
    pub rows: i64,
    pub bytes: i64,
    pub uploaded_at: String,
}

/// A schema version to store: its number, its JSON, and (for a PROTECTED schema) the protected
/// domain that must still exist when it is stored.
#[derive(Debug, Clone)]
pub struct SchemaVersion {
    pub version: i64,
    pub json: String,
    pub protected_domain: Option<String>,
}

/// A new data file of an upload commit.
#[derive(Debug, Clone)]
pub struct NewDataFile {
    pub partition_path: String,
    /// Relative to the data folder; unique across the catalog.
    pub path: String,
    pub rows: i64,
    pub bytes: i64,
    pub stats: Option<String>,
    /// The index keys of the file's `unique` columns (partition columns excepted: their values
    /// are in the paths).
    pub unique_keys: Vec<ColumnKeys>,
}

pub(crate) use rapid_rows::key_list::ColumnKeys;

/// A key of an upload found in a version's unique index: the partition of the file holding it
/// (an OVERWRITE of that partition replaces it, so it is no clash).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyHit {
    pub key: Vec<u8>,
    pub partition_path: String,
}

/// Keys of rows stored before their version had a unique index, recorded by the first commit
/// that needs the index: those of one raw file in one partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredKeys {
    pub raw_filename: String,
    pub partition_path: String,
    pub keys: ColumnKeys,
}

/// Everything one upload commit records, in one atomic step.
#[derive(Debug, Clone)]
pub struct UploadCommit {
    pub dataset_id: i64,
    pub version: i64,
    pub job_id: String,
    pub raw_filename: String,
    pub original_filename: String,
    /// The name of the subject that uploaded it.
    pub uploaded_by: String,
    pub rows: i64,
    pub raw_bytes: i64,
    pub files: Vec<NewDataFile>,
    /// The version's manifest generation the commit's checks saw (its unique checks read the
    /// version's files or index, OVERWRITE replaces some; see
    /// [`crate::catalog::interface::ManifestCatalog::manifest_generation`]): the commit is
    /// refused (conflict) when the version's files changed since, so a commit never lands on a
    /// state it did not check. `None` when nothing about the commit depends on them (APPEND with
    /// no unique column): such commits from several nodes never conflict.
    pub based_on: Option<i64>,
    /// Data files this commit replaces (OVERWRITE), among the files of generation `based_on`.
    pub replaced: Vec<i64>,
    /// When the version's unique index is still to be built (its files were stored before the
    /// index existed): the keys of every file of generation `based_on`, recorded before the commit's own;
    /// the version's index is complete from then on. Needs `based_on`.
    pub backfill: Option<Vec<StoredKeys>>,
    /// The version's manifest generation the engine read before checking the upload's keys
    /// against the unique index (`None` when unsure): the commit probes only the runs written
    /// after it (each run is tagged with a generation above the one its writer read), still
    /// refusing a key repeated inside the upload. Equal to `based_on`, nothing is probed but
    /// what this commit writes first (a backfill).
    pub keys_checked_at: Option<i64>,
    /// APPEND or OVERWRITE, as the version's history will list it.
    pub operation: CommitOperation,
    /// The upload's column profile (JSON), kept with the raw file in the commit's transaction:
    /// a client that reads SUCCESS finds it.
    pub profile: Option<String>,
}

/// A raw file the manifest lists, with the dataset it belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedRawFile {
    pub key: DatasetKey,
    pub version: i64,
    pub raw_filename: String,
    pub bytes: i64,
}

/// Every file the manifest lists, read as one committed state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoredFiles {
    /// Ordered by path.
    pub data: Vec<DataFile>,
    /// Ordered by layer, domain, dataset, version, name.
    pub raw: Vec<ListedRawFile>,
}

/// How a subject proves who it is: a client's secret digest or a user's password hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credential {
    SecretDigest(Vec<u8>),
    PasswordHash(String),
}

/// A subject as stored. Its kind follows from its credential (clients: secret, users: password).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubjectRow {
    pub id: String,
    pub name: String,
    pub email: Option<String>,
    pub credential: Credential,
    /// A user still holding the temporary password it was created with.
    pub must_change_password: bool,
}

/// Subjects, their permissions and the protected domains, read together for the auth snapshot.
#[derive(Debug, Clone, Default)]
pub struct AuthRows {
    /// The auth version these rows are at (see [`crate::catalog::interface::SubjectCatalog::auth_version`]).
    pub version: i64,
    pub subjects: Vec<SubjectRow>,
    /// (subject id, permission name), in the order they were granted.
    pub permissions: Vec<(String, String)>,
    pub protected_domains: Vec<String>,
}

/// The admin client created at first start or from the environment.
#[derive(Debug, Clone)]
pub struct AdminClient {
    pub client_id: String,
    pub secret_digest: Vec<u8>,
    /// Its name when free; else `{name}-{n}`.
    pub name: String,
    pub permissions: Vec<String>,
}

/// What deleting a protected domain found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DomainDeletion {
    Deleted,
    NotFound,
    /// PROTECTED datasets still in it ("layer/domain/dataset", sorted): nothing was deleted.
    InUse(Vec<String>),
}

/// The catalog's size, read in one go for metrics.
#[derive(Debug, Clone, Default)]
pub struct CatalogFigures {
    /// (kind, status, count) of the jobs.
    pub jobs: Vec<(String, String, i64)>,
    /// (name, count): datasets, schema_versions, data_files, raw_files, stored_rows,
    /// stored_bytes (Parquet), subjects, retained_files and retained_bytes (files kept only for
    /// earlier commits: what history costs on disk).
    pub counts: Vec<(&'static str, i64)>,
    /// What the catalog occupies on disk (SQLite: its file and WAL; PostgreSQL: its tables).
    pub file_bytes: u64,
}

/// The names of [`CatalogFigures::counts`], in order.
pub(crate) const COUNT_NAMES: [&str; 9] = [
    "datasets",
    "schema_versions",
    "data_files",
    "raw_files",
    "stored_rows",
    "stored_bytes",
    "subjects",
    "retained_files",
    "retained_bytes",
];

/// A stretch of a merged data file's rows that came from one raw file: rows `first_row` to
/// `first_row + rows - 1` (0-based). Kept so that deleting the raw file removes exactly them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilePart {
    pub raw_filename: String,
    pub first_row: i64,
    pub rows: i64,
}

/// Whose parts [`crate::catalog::interface::ManifestCatalog::file_parts`] reads.
#[derive(Debug, Clone, Copy)]
pub enum PartsOf<'a> {
    /// The version's merged files holding rows of this raw file.
    Holding {
        dataset_id: i64,
        version: i64,
        raw_filename: &'a str,
    },
    /// These files (those not merged have none).
    Files(&'a [i64]),
}

/// A retired file holding rows of a raw file being erased, with its parts (none: every row of
/// it is the raw file's).
#[derive(Debug, Clone)]
pub struct RetiredHolding {
    pub file: DataFile,
    pub parts: Vec<FilePart>,
}

/// What erasure does to the retired file at `path`: drops it (`rewrite` `None`) or lists its
/// rewrite without the erased rows in its place (same commits, new object).
#[derive(Debug, Clone)]
pub struct RetiredRewrite {
    pub path: String,
    pub rewrite: Option<SwapFile>,
}

/// A data file written by a [`FileSwap`] (compaction, or a rewrite that drops a raw file's rows).
#[derive(Debug, Clone)]
pub struct SwapFile {
    pub partition_path: String,
    pub path: String,
    pub rows: i64,
    pub bytes: i64,
    pub stats: Option<String>,
    /// Where each of its rows came from, in row order, covering every row.
    pub parts: Vec<FilePart>,
}

/// Data files replaced by others holding the same rows (compaction), or the same rows less a
/// raw file's (`raw_deleted`), in one atomic step.
#[derive(Debug, Clone)]
pub struct FileSwap {
    pub dataset_id: i64,
    pub version: i64,
    /// Refused (conflict, nothing recorded) unless every one of them is still in the version.
    pub removed: Vec<i64>,
    pub added: Vec<SwapFile>,
    /// A raw file deleted in the same step, with the data files only it contributed and its
    /// unique keys.
    pub raw_deleted: Option<String>,
    /// Who asked for it (its history's `subject`); `None` for the service's own compaction.
    pub subject: Option<String>,
}

/// What a commit did to its dataset version (docs/guide.md, History).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommitOperation {
    /// An upload that added rows.
    Append,
    /// An upload that replaced the files of the partitions it brought (every file when
    /// unpartitioned).
    Overwrite,
    /// A raw file deleted with every row it brought.
    Delete,
    /// Small files merged: the same rows in fewer files.
    Compact,
    /// The state a version had when history began (the migration that added commits).
    Baseline,
    /// The files of an earlier commit listed again.
    Rollback,
    /// A raw file deleted with erasure (`?erase=true`): its rows also left every retained
    /// commit (a DELETE commit marked so once the retired files were rewritten).
    Erase,
}

impl CommitOperation {
    pub fn as_str(self) -> &'static str {
        match self {
            CommitOperation::Append => "APPEND",
            CommitOperation::Overwrite => "OVERWRITE",
            CommitOperation::Delete => "DELETE",
            CommitOperation::Compact => "COMPACT",
            CommitOperation::Baseline => "BASELINE",
            CommitOperation::Rollback => "ROLLBACK",
            CommitOperation::Erase => "ERASE",
        }
    }
}

/// One commit of a dataset version, as its history lists it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Commit {
    /// Its number in the version: 1, 2, ... in the order they landed.
    pub commit: i64,
    /// RFC 3339, UTC.
    pub committed_at: String,
    /// APPEND, OVERWRITE, DELETE, ERASE (a raw file deleted with `?erase=true`: its rows also
    /// left every earlier commit), COMPACT, ROLLBACK or BASELINE.
    pub operation: String,
    /// The id of the subject that made it; null for the service's own work (compaction, the
    /// baseline).
    pub subject: Option<String>,
    /// The raw file uploaded (APPEND, OVERWRITE) or deleted (DELETE).
    pub raw_filename: Option<String>,
    pub rows_added: i64,
    pub rows_removed: i64,
}

/// One commit of a version with the files it added and removed: what its Delta Lake version
/// is derived from (`crate::delta_log`). A file listed again by a rollback is added again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitChanges {
    pub commit: i64,
    /// As [`super::now_text`] writes times (RFC 3339, UTC, milliseconds).
    pub committed_at: String,
    pub operation: String,
    pub added: Vec<DataFile>,
    pub removed: Vec<DataFile>,
}

/// Which commit of a version a read sees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AsOf {
    /// The newest commit.
    Latest,
    /// Commit number N.
    Commit(i64),
    /// The newest commit at or before this time (as [`super::now_text`] writes times).
    Time(String),
}

/// The files live at one commit of a version (what a read of that commit scans).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilesAt {
    /// The commit read: 0 for a version with no commit yet.
    pub commit: i64,
    pub files: Vec<DataFile>,
}

/// How long replaced files stay readable: a commit is retained while it is among the newest
/// `keep_commits` of its version or was committed at or after `keep_since`; files no retained
/// commit lists are then removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Retention {
    /// At least 1 (the newest commit is always retained).
    pub keep_commits: i64,
    /// A time as [`super::now_text`] writes it.
    pub keep_since: String,
}
