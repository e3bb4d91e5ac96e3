//! Where things live in the data folder, and the only place paths are built from names.
//!
//! ```text
//! catalog.sqlite
//! raw/{layer}/{domain}/{dataset}/{version}/{raw_filename}
//! data/{layer}/{domain}/{dataset}/{version}/{p0}={v}/{p1}={v}/{raw_id}-{n}.parquet
//! staging/{job_id}/
//! results/{job_id}.csv
//! ```
//! Every segment built from user input is checked ([`safe_segment`]) or encoded
//! ([`encode_partition_value`]), so no path can leave the data folder. Keeping all of this in one
//! module is what will let object storage replace the local folder later.
//!
//! # Durability discipline
//! A change is acknowledged (job SUCCESS, 200, 202, 201) only once it survives a power cut, and a
//! cut at any moment leaves the old state or the new one, never a mix. In this order:
//! 1. File contents are fsynced before they become reachable: each staged Parquet file as its
//!    writer closes it and the raw file as its writer thread finishes, on those threads, so the
//!    syncs overlap the rest of the upload.
//! 2. Files are renamed into place; every folder that received an entry is fsynced, with its
//!    ancestors up to the data folder (one sync per folder per commit, [`DirSyncs`]), so each new
//!    name and each new folder is durable.
//! 3. The catalog transaction commits durably: SQLite in WAL mode with `synchronous=FULL` fsyncs
//!    the WAL at every commit (and SQLite syncs the folder when it creates the WAL). Manifest rows
//!    and the job's SUCCESS are one transaction: only now is the change acknowledged.
//! 4. Only then are old files removed (OVERWRITE, deletions, dataset deletion). Their removal
//!    needs no sync: a name that comes back after a cut is not in the catalog, and start-up
//!    removes it again. Folders that only lost entries (staging) are not synced for the same
//!    reason.
//!
//! Start-up recovery finishes whatever a cut interrupted: staging is wiped, files the catalog
//! does not list are removed, jobs still IN PROGRESS become FAILED.
//! Catalog-only changes (schemas, subjects, jobs) are durable by step 3 alone.
//! `RAPID_DURABILITY=off` skips the syncs of steps 1-2 and runs SQLite with `synchronous=NORMAL`.

mod durability;
mod leases;

use std::path::{Path, PathBuf};

pub use durability::{
    durability, set_durability, sync_dir, sync_file, sync_files, DirSyncs, Durability,
};
pub use leases::{LeaseGuard, Leases};

use crate::error::{Error, Result};
use crate::key::DatasetKey;

/// The token signing key's file name in the data folder.
pub const KEY_FILE: &str = "token-signing.key";

/// The `n`th Parquet file an ingest writes into its staging folder `dir`.
pub fn staged_parquet(dir: &Path, n: usize) -> PathBuf {
    dir.join(format!("{n}.parquet"))
}

/// The part file a result is written to before it is complete.
pub fn part_file(done: &Path) -> PathBuf {
    let mut name = done.as_os_str().to_owned();
    name.push(".part");
    PathBuf::from(name)
}

#[derive(Debug, Clone)]
pub struct Storage {
    root: PathBuf,
    leases: Leases,
}

impl Storage {
    pub fn new(root: impl Into<PathBuf>) -> Storage {
        let root = root.into();
        Storage {
            leases: Leases::new(root.clone()),
            root,
        }
    }

    /// Read leases on this folder's data files (see [`Leases`]).
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
        self.root.join("catalog.sqlite")
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
        let catalog = self.catalog_file();
        let with_suffix = |suffix: &str| {
            let mut name = catalog.as_os_str().to_owned();
            name.push(suffix);
            PathBuf::from(name)
        };
        vec![
            catalog.clone(),
            with_suffix("-wal"),
            with_suffix("-shm"),
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

    /// A large query's result file `name` (`{job_id}.csv`).
    pub fn result_file(&self, name: &str) -> PathBuf {
        self.results_dir().join(name)
    }

    /// The folders whose files the manifest lists (`data`, `raw`).
    pub fn listed_roots(&self) -> [PathBuf; 2] {
        [self.root.join("data"), self.root.join("raw")]
    }

    /// A new file in staging for a schema-generation sample with extension `ext`.
    pub fn sample_file(&self, ext: &str) -> PathBuf {
        self.staging_root()
            .join(format!("sample-{}.{ext}", uuid::Uuid::new_v4()))
    }

    pub fn results_dir(&self) -> PathBuf {
        self.root.join("results")
    }

    fn dataset_rel(kind: &str, key: &DatasetKey) -> PathBuf {
        [kind, &key.layer, &key.domain, &key.dataset]
            .iter()
            .collect()
    }

    /// `raw/{layer}/{domain}/{dataset}`: every raw file of every version of the dataset.
    pub fn raw_dataset_dir(&self, key: &DatasetKey) -> PathBuf {
        self.root.join(Self::dataset_rel("raw", key))
    }

    /// `data/{layer}/{domain}/{dataset}`: every Parquet file of every version of the dataset.
    pub fn data_dataset_dir(&self, key: &DatasetKey) -> PathBuf {
        self.root.join(Self::dataset_rel("data", key))
    }

    pub fn raw_file(&self, key: &DatasetKey, version: i64, raw_filename: &str) -> PathBuf {
        self.raw_dataset_dir(key)
            .join(version.to_string())
            .join(raw_filename)
    }

    /// The path of a data file relative to the root, as the manifest records it.
    pub fn data_file_rel(
        key: &DatasetKey,
        version: i64,
        partition_path: &str,
        file_name: &str,
    ) -> String {
        let mut rel = Self::dataset_rel("data", key);
        rel.push(version.to_string());
        if !partition_path.is_empty() {
            rel.push(partition_path);
        }
        rel.push(file_name);
        rel.to_string_lossy().into_owned()
    }

    pub fn absolute(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }
}

/// Accepts a name usable as one path segment: letters, digits, `.`, `_`, `-`, not starting with a
/// dot (so never `.` or `..`), at most 255 bytes.
pub fn safe_segment(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 255
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// A partition value as a path segment, the way Hive readers (pyarrow, DuckDB, Spark) decode it:
/// kept when made of letters, digits, `_`, `-`, `.` (and not a dot-only name), otherwise
/// percent-encoded byte by byte, once. The empty string is the empty segment (`region=`), which
/// those readers give back as `''`; `__HIVE_DEFAULT_PARTITION__`, their name for NULL, is encoded
/// so that the literal string is not read as NULL. Partition columns never hold NULL.
pub fn encode_partition_value(value: &str) -> String {
    let plain = !value.bytes().all(|b| b == b'.')
        && value != HIVE_NULL
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
    if plain || value.is_empty() {
        return value.to_string();
    }
    if value == HIVE_NULL {
        return value.replace('_', "%5F");
    }
    let mut out = String::with_capacity(value.len() * 3);
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Hive's folder name for a NULL partition value. Stores written before the empty string had its
/// own encoding used it for `''`, so [`decode_partition_value`] reads it back as `''`.
const HIVE_NULL: &str = "__HIVE_DEFAULT_PARTITION__";

/// The value a segment written by [`encode_partition_value`] stands for (percent-decoded once).
pub fn decode_partition_value(segment: &str) -> String {
    if segment == HIVE_NULL {
        return String::new();
    }
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = (bytes[i] == b'%')
            .then(|| segment.get(i + 1..i + 3))
            .flatten()
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match hex {
            Some(b) => {
                out.push(b);
                i += 3;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsafe_segments_are_refused() {
        for bad in [
            "", ".", "..", "../x", "a/b", "a\\b", ".hidden", "a b", "x%2F",
        ] {
            assert!(!safe_segment(bad), "{bad}");
        }
        assert!(safe_segment("20261121T160000Z-ab12-file.csv"));
    }

    #[test]
    fn partition_values_never_escape_their_folder() {
        assert_eq!(encode_partition_value("north"), "north");
        assert_eq!(encode_partition_value("2024-01-31"), "2024-01-31");
        assert_eq!(encode_partition_value("1.5"), "1.5");
        assert_eq!(encode_partition_value("a/b"), "a%2Fb");
        assert_eq!(encode_partition_value(".."), "%2E%2E");
        assert_eq!(encode_partition_value("São Paulo"), "S%C3%A3o%20Paulo");
        for v in ["../../etc", "a/../b", "x=y"] {
            let e = encode_partition_value(v);
            assert!(!e.contains('/') && !e.contains('=') && e != "..", "{e}");
        }
    }

    #[test]
    fn partition_values_round_trip_once_encoded() {
        for v in [
            "",
            "north",
            "São Paulo",
            "a/b",
            "x y",
            "100%",
            "O'Brien",
            "%41",
            "..",
            "a.b",
            "__HIVE_DEFAULT_PARTITION__",
            "tab\tnew\nline",
            "ünï😀",
            "-5",
            "1e+20",
        ] {
            let encoded = encode_partition_value(v);
            assert_eq!(decode_partition_value(&encoded), v, "{v} -> {encoded}");
        }
        assert_eq!(encode_partition_value(""), "");
        assert_eq!(encode_partition_value("100%"), "100%25");
        assert_eq!(
            encode_partition_value("__HIVE_DEFAULT_PARTITION__"),
            "%5F%5FHIVE%5FDEFAULT%5FPARTITION%5F%5F"
        );
        // Stores from before the empty string had its own segment.
        assert_eq!(decode_partition_value("__HIVE_DEFAULT_PARTITION__"), "");
    }

    #[test]
    fn similar_dataset_names_get_disjoint_folders() {
        let s = Storage::new("/d");
        let a = s.data_dataset_dir(&DatasetKey::new("default", "dom", "sales"));
        let b = s.data_dataset_dir(&DatasetKey::new("default", "dom", "sales_2"));
        assert!(!b.starts_with(&a));
        assert_eq!(
            Storage::data_file_rel(&DatasetKey::new("l", "d", "s"), 1, "p=x", "f.parquet"),
            "data/l/d/s/1/p=x/f.parquet"
        );
    }
}
