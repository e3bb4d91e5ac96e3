//! Where things live, and the only place paths and keys are built from names.
//!
//! The kept objects (raw uploads, data Parquet files, large-query results) are reached only
//! through the [`ObjectStorage`] interface, by key ([`keys`]); [`LocalFolder`] keeps them as files
//! in the data folder, and [`S3Objects`] in an S3-compatible bucket instead
//! (`RAPID_STORAGE_URL=s3://bucket/prefix`, under the prefix with the same keys). The rest stays
//! local, as paths from [`Storage`]:
//! ```text
//! catalog.sqlite, token-signing.key, admin-credentials.json
//! staging/{job_id}/            an upload being received and validated
//! staging/{job_id}.csv.part    a large query's result being written
//! spill/                       query sorts and aggregations
//! ```
//! and on the local folder the objects are
//! ```text
//! raw/{layer}/{domain}/{dataset}/{version}/{raw_filename}
//! data/{layer}/{domain}/{dataset}/{version}/{p0}={v}/{p1}={v}/{raw_id}-{n}.parquet
//! results/{job_id}.csv
//! ```
//! Every segment built from user input is checked ([`safe_segment`]) or encoded
//! ([`encode_partition_value`]), so no path can leave the data folder.
//!
//! # Durability discipline
//! A change is acknowledged (job SUCCESS, 200, 202, 201) only once it survives a power cut, and a
//! cut at any moment leaves the old state or the new one, never a mix. In this order:
//! 1. File contents are fsynced before they become reachable: each staged Parquet file as its
//!    writer closes it and the raw file as its writer thread finishes, on those threads, so the
//!    syncs overlap the rest of the upload.
//! 2. The files are put under their final keys as one group ([`ObjectStorage::put`]). On the
//!    local folder they are renamed into place and every folder that received an entry is
//!    fsynced, with its ancestors up to the data folder (one sync per folder per commit,
//!    [`DirSyncs`]), so each new name and each new folder is durable. An object store has no
//!    rename: the keys are unique, and the object is durable once its upload is acknowledged.
//! 3. The catalog transaction commits durably: SQLite in WAL mode with `synchronous=FULL` fsyncs
//!    the WAL at every commit (and SQLite syncs the folder when it creates the WAL). Manifest rows
//!    and the job's SUCCESS are one transaction: only now is the change acknowledged.
//! 4. Only then are old objects removed (OVERWRITE, deletions, dataset deletion). Their removal
//!    needs no sync: a name that comes back after a cut is not in the catalog, and start-up
//!    removes it again. Folders that only lost entries (staging) are not synced for the same
//!    reason.
//!
//! Start-up recovery finishes whatever a cut interrupted: staging is wiped, objects the catalog
//! does not list are removed, jobs still IN PROGRESS become FAILED. In a bucket, which other
//! nodes may share, only unlisted objects older than `RAPID_SWEEP_GRACE_SECS` are removed, at
//! start-up and every ten minutes ([`ObjectStorage::unlisted_grace`]).
//! Catalog-only changes (schemas, subjects, jobs) are durable by step 3 alone.
//! `RAPID_DURABILITY=off` skips the syncs of steps 1-2 and runs SQLite with `synchronous=NORMAL`.
//! The setting is a [`Durability`] value the engine is opened with (`EngineConfig::durability`):
//! its [`Storage`] (and the [`LocalFolder`] in it) carries it, and so do the catalog's open and
//! an upload's writers. `rapid-rs admin` commands use the default, `Full`.

mod durability;
pub mod keys;
mod leases;
mod local;
mod objects;
mod s3;
mod s3_io;
mod write_behind;

use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use durability::{DirSyncs, Durability};
pub use keys::{decode_partition_value, encode_partition_value, safe_segment};
pub use leases::{LeaseGuard, Leases};
pub use local::LocalFolder;
pub use objects::{
    is_missing, ByteStream, DataFusionStore, ObjectMeta, ObjectRead, ObjectReader, ObjectStorage,
    StagedObject,
};
pub use s3::S3Objects;
pub use write_behind::WriteBehind;

use crate::error::{Error, Result};

/// The catalog's file name in the data folder.
pub const CATALOG_FILE: &str = "catalog.sqlite";

/// The file the service and admin commands lock so that one process at a time uses the folder.
pub const LOCK_FILE: &str = "rapid-rs.lock";

/// The token signing key's file name in the data folder.
pub const KEY_FILE: &str = "token-signing.key";

/// The `n`th Parquet file an ingest writes into its staging folder `dir`.
pub fn staged_parquet(dir: &Path, n: usize) -> PathBuf {
    dir.join(format!("{n}.parquet"))
}

/// Delta log versions between checkpoints unless the engine is given another interval
/// (`RAPID_DELTA_CHECKPOINT_INTERVAL`; 0: none): Delta's own writers checkpoint every 10. Here,
/// not in `delta_log`, because the storage value carries it and `delta_log` builds on storage.
pub const DEFAULT_CHECKPOINT_INTERVAL: u64 = 10;

/// The data folder's local paths, and the kept objects ([`ObjectStorage`]) with their read leases;
/// how durably files are written there, and how often the Delta logs of its tables checkpoint.
#[derive(Debug, Clone)]
pub struct Storage {
    root: PathBuf,
    objects: Arc<dyn ObjectStorage>,
    leases: Leases,
    durability: Durability,
    checkpoint_interval: u64,
}

impl Storage {
    /// The data folder `root`, keeping its objects in it ([`LocalFolder`]), fully durable, with
    /// Delta checkpoints at the default interval (what `rapid-rs admin` works with).
    pub fn new(root: impl Into<PathBuf>) -> Storage {
        let root = root.into();
        let objects = Arc::new(LocalFolder::new(root.clone()));
        Storage::with_objects(root, objects)
    }

    /// The data folder `root`, with the objects where `storage_url` (`RAPID_STORAGE_URL`) says:
    /// in the data folder itself when it is unset or empty, in an S3-compatible bucket for
    /// `s3://bucket/prefix` ([`S3Objects`], unlisted objects swept after `sweep_grace`). Files
    /// written in the data folder are synced as `durability` says.
    pub fn open(
        root: impl Into<PathBuf>,
        storage_url: Option<&str>,
        sweep_grace: std::time::Duration,
        durability: Durability,
    ) -> Result<Storage> {
        let root = root.into();
        let objects: Arc<dyn ObjectStorage> =
            match storage_url.map(str::trim).filter(|u| !u.is_empty()) {
                None => Arc::new(LocalFolder::new(root.clone()).with_durability(durability)),
                Some(url) => Arc::new(S3Objects::from_url(url, sweep_grace)?),
            };
        Ok(Storage {
            durability,
            ..Storage::with_objects(root, objects)
        })
    }

    /// The data folder `root` for the local files, with the objects kept in `objects` (fully
    /// durable, checkpoints at the default interval).
    pub fn with_objects(root: impl Into<PathBuf>, objects: Arc<dyn ObjectStorage>) -> Storage {
        Storage {
            root: root.into(),
            leases: Leases::new(objects.clone()),
            objects,
            durability: Durability::Full,
            checkpoint_interval: DEFAULT_CHECKPOINT_INTERVAL,
        }
    }

    /// This storage with a Delta checkpoint every `every` log versions (0: none).
    pub fn with_checkpoint_interval(self, every: u64) -> Storage {
        Storage {
            checkpoint_interval: every,
            ..self
        }
    }

    /// How durably files are written here (see the durability discipline above).
    pub fn durability(&self) -> Durability {
        self.durability
    }

    /// Log versions between Delta checkpoints (`RAPID_DELTA_CHECKPOINT_INTERVAL`; 0: none).
    pub fn checkpoint_interval(&self) -> u64 {
        self.checkpoint_interval
    }

    /// The kept objects: raw files, data files, large-query results.
    pub fn objects(&self) -> &Arc<dyn ObjectStorage> {
        &self.objects
    }

    /// Read leases on the data files (see [`Leases`]).
    pub fn leases(&self) -> &Leases {
        &self.leases
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn staging_root(&self) -> PathBuf {
        self.root.join("staging")
    }

    pub fn staging_dir(&self, job_id: &str) -> PathBuf {
        self.staging_root().join(job_id)
    }

    /// The SQLite catalog.
    pub fn catalog_file(&self) -> PathBuf {
        self.root.join(CATALOG_FILE)
    }

    /// Where a restore writes the catalog before renaming it into place.
    pub fn restoring_catalog_file(&self) -> PathBuf {
        self.catalog_with_suffix(".restoring")
    }

    /// The lock one process at a time holds on the folder (the service, admin commands).
    pub fn lock_file(&self) -> PathBuf {
        self.root.join(LOCK_FILE)
    }

    /// A backup folder's summary, written last (a backup folder has a data folder's layout).
    pub fn backup_summary_file(&self) -> PathBuf {
        self.root.join("backup.json")
    }

    /// The catalog and its write-ahead log: what the catalog takes on disk.
    pub fn catalog_files(&self) -> [PathBuf; 2] {
        [self.catalog_file(), self.catalog_with_suffix("-wal")]
    }

    fn catalog_with_suffix(&self, suffix: &str) -> PathBuf {
        let mut name = self.catalog_file().into_os_string();
        name.push(suffix);
        PathBuf::from(name)
    }

    /// The token signing key's own file (0600), outside the catalog.
    pub fn key_file(&self) -> PathBuf {
        self.root.join(KEY_FILE)
    }

    /// Where the generated admin credentials are written on first start.
    pub fn admin_credentials_file(&self) -> PathBuf {
        self.root.join("admin-credentials.json")
    }

    /// The files that hold secrets (the catalog with its WAL and SHM, the admin credentials, the
    /// signing key): kept 0600.
    pub fn secret_files(&self) -> Vec<PathBuf> {
        vec![
            self.catalog_file(),
            self.catalog_with_suffix("-wal"),
            self.catalog_with_suffix("-shm"),
            self.admin_credentials_file(),
            self.key_file(),
        ]
    }

    /// Where query sorts and aggregations spill.
    pub fn spill_dir(&self) -> PathBuf {
        self.root.join("spill")
    }

    /// The raw file of an upload being received, in its job's staging folder.
    pub fn staged_raw(&self, job_id: &str) -> PathBuf {
        self.staging_dir(job_id).join("raw")
    }

    /// The folder the validated Parquet of an upload is written to, in its job's staging folder.
    pub fn staged_data(&self, job_id: &str) -> PathBuf {
        self.staging_dir(job_id).join("data")
    }

    /// Where a large query's result is written before it is complete and kept.
    pub fn staged_result(&self, job_id: &str) -> PathBuf {
        self.staging_root().join(format!("{job_id}.csv.part"))
    }

    /// The `n`th object a restore copies in, in `staging/restore/`, before it is put in place.
    pub fn staged_copy(&self, n: usize) -> PathBuf {
        self.staging_dir("restore").join(n.to_string())
    }

    /// A new file in staging for a schema-generation sample with extension `ext`.
    pub fn sample_file(&self, ext: &str) -> PathBuf {
        self.staging_root()
            .join(format!("sample-{}.{ext}", uuid::Uuid::new_v4()))
    }

    /// Where samples of schema generations are kept for the web pages, a folder each.
    pub fn kept_samples_root(&self) -> PathBuf {
        self.root.join("samples")
    }

    /// A new file in staging that the readiness check writes and removes.
    pub fn readiness_probe(&self) -> PathBuf {
        self.staging_root()
            .join(format!(".ready-{}", uuid::Uuid::new_v4().simple()))
    }
}

/// Creates the parent folder of `to` and renames `from` there (same file system: atomic).
pub fn move_into_place(from: &Path, to: &Path) -> Result<()> {
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::rename(from, to).map_err(|e| {
        Error::internal(format!(
            "moving {} to {}: {e}",
            from.display(),
            to.display()
        ))
    })
}

/// Removes a file, treating "already gone" as done.
pub fn remove_file_if_exists(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e.into()),
        _ => Ok(()),
    }
}
