//! The interface to the kept objects: raw uploads, data Parquet files and large-query results.
//! Everything else in the data folder (staging, the catalog, the key files, spill folders) stays a
//! local path from [`super::Storage`].
//!
//! Keys are relative, `/`-separated strings (`data/{layer}/{domain}/{dataset}/{version}/...`), the
//! form the manifest records; [`super::keys`] builds them. Every method but [`ObjectStorage::stream`]
//! blocks: call them from blocking threads (the commit and unique checks run on
//! `spawn_blocking`). A remote backend blocks on its own runtime there.

use std::io::{Read, Seek};
use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::object_store::path::Path as StorePath;
use futures_util::stream::BoxStream;

use crate::error::{Error, ErrorKind, Result};

/// A finished local file and the key it is to be kept under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StagedObject {
    /// The local file (in staging); consumed by [`ObjectStorage::put`].
    pub staged: PathBuf,
    pub key: String,
}

/// What is known of a kept object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectMeta {
    pub key: String,
    pub size: u64,
    pub modified: SystemTime,
}

/// Where DataFusion reads the data files from: the store to register under `url`.
#[derive(Debug, Clone)]
pub struct DataFusionStore {
    pub url: ObjectStoreUrl,
    pub store: Arc<dyn datafusion::object_store::ObjectStore>,
}

/// A kept object opened for reading.
pub trait ObjectRead: Read + Seek + Send {}
impl<T: Read + Seek + Send> ObjectRead for T {}

/// An object's bytes as an async stream (downloads).
pub type ByteStream = BoxStream<'static, std::io::Result<Bytes>>;

/// The kept objects of one store. Implemented by [`super::LocalFolder`] (the data folder, today's
/// layout); an object-store backend implements the same and passes the same conformance suite
/// (`actors/tests/storage_conformance.rs`).
#[async_trait::async_trait]
pub trait ObjectStorage: Send + Sync + std::fmt::Debug {
    /// Keeps each staged file under its key, durably, as one group: once this returns, every
    /// object survives a power cut. A key that exists is replaced. The caller has already synced
    /// each staged file's contents (`Durability::sync_file`, step 1 of the durability
    /// discipline), so the syncs overlap the upload. On error none of the group's keys is left
    /// behind.
    fn put(&self, objects: &[StagedObject]) -> Result<()>;

    /// Keeps `bytes` under `key` unless an object is there already (put-if-absent), durably
    /// once it returns; answers whether it wrote. Two writers of one key never both succeed.
    /// For small objects written whole (the Delta Lake log).
    fn put_new(&self, key: &str, bytes: &[u8]) -> Result<bool>;

    /// Opens an object to read it whole or seek in it; NotFound when there is none.
    fn open(&self, key: &str) -> Result<Box<dyn ObjectRead>>;

    /// The bytes of `range` (which must lie within the object).
    fn read_range(&self, key: &str, range: Range<u64>) -> Result<Bytes>;

    /// Size and time of an object; NotFound when there is none.
    fn head(&self, key: &str) -> Result<ObjectMeta>;

    /// Every object whose key lies under the folder `prefix` (segment-wise: `data/a` holds
    /// `data/a/x`, not `data/ab`; `""` is everything), in key order.
    fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>>;

    /// Removes an object; one that is already gone is not an error.
    fn delete(&self, key: &str) -> Result<()>;

    /// Removes every object under the folder `prefix`.
    fn delete_prefix(&self, prefix: &str) -> Result<()> {
        for object in self.list(prefix)? {
            self.delete(&object.key)?;
        }
        Ok(())
    }

    /// Drops what is left empty under `prefix` once objects are gone (folders, on the local
    /// folder); stores without folders have nothing to do.
    fn prune_empty(&self, _prefix: &str) -> Result<()> {
        Ok(())
    }

    /// The object's bytes as a stream, for downloads; NotFound (before any byte) when missing.
    async fn stream(&self, key: &str) -> Result<ByteStream>;

    /// The store DataFusion reads data files through.
    fn datafusion_store(&self) -> DataFusionStore;

    /// The location of `key` in [`Self::datafusion_store`].
    fn location(&self, key: &str) -> Result<StorePath>;

    /// Size of an object; NotFound when there is none.
    fn size(&self, key: &str) -> Result<u64> {
        Ok(self.head(key)?.size)
    }

    /// How old an object under `data/` or `raw/` that no catalog row lists must be before a sweep
    /// removes it. `None` for a store only this process uses (the local folder, locked by the
    /// service): start-up removes every unlisted object at once. `Some(grace)` for a shared
    /// store, where a young unlisted object may be another node's commit in flight.
    fn unlisted_grace(&self) -> Option<Duration> {
        None
    }

    /// An object's whole content; NotFound when there is none.
    fn read_all(&self, key: &str) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.open(key)?
            .read_to_end(&mut out)
            .map_err(|e| Error::from(e).context(format!("reading {key}")))?;
        Ok(out)
    }

    fn exists(&self, key: &str) -> Result<bool> {
        match self.head(key) {
            Ok(_) => Ok(true),
            Err(e) if is_missing(&e) => Ok(false),
            Err(e) => Err(e),
        }
    }
}

/// The error of a missing object.
pub(super) fn missing(key: &str) -> Error {
    Error::not_found(format!("No object [{key}]"))
}

/// Whether `e` says the object does not exist.
pub fn is_missing(e: &Error) -> bool {
    e.kind == ErrorKind::NotFound
}

/// Refuses keys that are not plain relative paths: empty, absolute, with empty, `.` or `..`
/// segments, or with a backslash or NUL. Keys come from [`super::keys`], but a key read back from
/// the catalog must not reach outside the store either.
pub(super) fn check_key(key: &str) -> Result<()> {
    let bad = key.is_empty()
        || key.contains(['\\', '\0'])
        || key
            .split('/')
            .any(|s| s.is_empty() || s == "." || s == "..");
    if bad {
        return Err(Error::internal(format!("not a valid object key: [{key}]")));
    }
    Ok(())
}

/// Like [`check_key`], for a folder prefix, where `""` (everything) is allowed.
pub(super) fn check_prefix(prefix: &str) -> Result<()> {
    if prefix.is_empty() {
        Ok(())
    } else {
        check_key(prefix)
    }
}

/// An object read by byte ranges, for the Parquet reader (stored-unique checks, `admin check`).
#[derive(Debug, Clone)]
pub struct ObjectReader {
    objects: Arc<dyn ObjectStorage>,
    key: String,
    size: u64,
}

impl ObjectReader {
    /// Opens `key` of `objects`; NotFound when there is none.
    pub fn new(objects: Arc<dyn ObjectStorage>, key: &str) -> Result<ObjectReader> {
        let size = objects.size(key)?;
        Ok(ObjectReader {
            objects,
            key: key.to_string(),
            size,
        })
    }
}

impl parquet::file::reader::Length for ObjectReader {
    fn len(&self) -> u64 {
        self.size
    }
}

impl parquet::file::reader::ChunkReader for ObjectReader {
    type T = std::io::BufReader<Box<dyn ObjectRead>>;

    /// A reader from `start` on, reading lazily (page headers are read this way, one by one).
    fn get_read(&self, start: u64) -> parquet::errors::Result<Self::T> {
        let external = |e: Error| parquet::errors::ParquetError::External(Box::new(e));
        let mut object = self.objects.open(&self.key).map_err(external)?;
        object.seek(std::io::SeekFrom::Start(start))?;
        Ok(std::io::BufReader::new(object))
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<Bytes> {
        let end = start.saturating_add(length as u64);
        if end > self.size {
            return Err(parquet::errors::ParquetError::EOF(format!(
                "{}: {length} bytes at {start} run past its {} bytes",
                self.key, self.size
            )));
        }
        self.objects
            .read_range(&self.key, start..end)
            .map_err(|e| parquet::errors::ParquetError::External(Box::new(e)))
    }
}
