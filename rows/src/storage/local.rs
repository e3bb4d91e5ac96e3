//! The kept objects as files under the data folder: a key is a path relative to it. Objects are
//! put by rename (atomic on one file system), and every folder that received an entry is synced
//! with its ancestors (the durability discipline in the module doc of `storage`).

use std::io::{Read, Seek, SeekFrom};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::object_store::local::LocalFileSystem;
use datafusion::object_store::path::Path as StorePath;

use super::objects::{
    check_key, check_prefix, missing, ByteStream, DataFusionStore, ObjectMeta, ObjectRead,
    ObjectStorage, StagedObject,
};
use super::{DirSyncs, Durability};
use crate::error::{Error, Result};

/// Bytes read per item of a download stream.
const STREAM_CHUNK: usize = 256 * 1024;

#[derive(Debug, Clone)]
pub struct LocalFolder {
    root: PathBuf,
    durability: Durability,
}

impl LocalFolder {
    /// The objects under `root` (the data folder), fully durable. A relative root is made
    /// absolute against the current folder now: DataFusion's object store takes absolute paths
    /// only, and the default data folder (`./data`) is relative.
    pub fn new(root: impl Into<PathBuf>) -> LocalFolder {
        let root = root.into();
        let root = std::path::absolute(&root).unwrap_or(root);
        LocalFolder {
            root,
            durability: Durability::Full,
        }
    }

    /// These objects, synced as `durability` says.
    pub fn with_durability(self, durability: Durability) -> LocalFolder {
        LocalFolder { durability, ..self }
    }

    /// The file that keeps `key` (for copies into a local folder: backups).
    pub fn file(&self, key: &str) -> Result<PathBuf> {
        check_key(key)?;
        Ok(self.root.join(key))
    }

    fn path(&self, key: &str) -> Result<PathBuf> {
        self.file(key)
    }

    fn folder(&self, prefix: &str) -> Result<PathBuf> {
        check_prefix(prefix)?;
        Ok(self.root.join(prefix))
    }

    /// Opens the file of `key`, a missing one as [`missing`].
    fn open_file(&self, key: &str) -> Result<std::fs::File> {
        let path = self.path(key)?;
        std::fs::File::open(&path).map_err(|e| not_found_or(e, key, &path))
    }

    /// Moves every staged file into place, then syncs the folders that received them.
    fn place(&self, objects: &[StagedObject], placed: &mut Vec<PathBuf>) -> Result<()> {
        let mut folders = DirSyncs::new(&self.root, self.durability);
        for object in objects {
            let target = self.path(&object.key)?;
            super::move_into_place(&object.staged, &target)?;
            folders.received(target.parent().unwrap_or(&self.root));
            placed.push(target);
        }
        folders.sync()
    }
}

/// `tmp` under the name `target` unless that exists; whether it did.
fn link_new(tmp: &Path, target: &Path) -> Result<bool> {
    let context = || format!("writing {}", target.display());
    match std::fs::hard_link(tmp, target) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(_) if target.exists() => Ok(false),
        Err(_) => std::fs::rename(tmp, target)
            .map(|()| true)
            .map_err(|e| Error::from(e).context(context())),
    }
}

/// A new file holding `bytes`, its content synced as `durability` says.
fn write_synced(path: &Path, bytes: &[u8], durability: Durability) -> Result<()> {
    let mut file = std::fs::File::create_new(path)?;
    std::io::Write::write_all(&mut file, bytes)?;
    durability.sync_file(&file)?;
    Ok(())
}

/// An io error on `key` at `path`: [`missing`] when the file is not there.
fn not_found_or(e: std::io::Error, key: &str, path: &Path) -> Error {
    let context = format!("reading {}", path.display());
    if e.kind() == std::io::ErrorKind::NotFound {
        missing(key).context(context)
    } else {
        Error::from(e).context(context)
    }
}

#[async_trait::async_trait]
impl ObjectStorage for LocalFolder {
    fn put(&self, objects: &[StagedObject]) -> Result<()> {
        let mut placed = Vec::new();
        let result = self.place(objects, &mut placed);
        if result.is_err() {
            for path in &placed {
                let _ = super::remove_file_if_exists(path);
            }
        }
        result
    }

    fn open(&self, key: &str) -> Result<Box<dyn ObjectRead>> {
        Ok(Box::new(self.open_file(key)?))
    }

    /// Written to a hidden file beside the key and synced, then hard-linked to the key (which
    /// fails when the key exists: atomic on one file system), then the folder synced (with its
    /// ancestors when it was made now). A file system without hard links (some FUSE ones) gets
    /// a lookup and a rename instead: one process owns the folder, and its writers of one key
    /// (the Delta log's) put the same bytes.
    fn put_new(&self, key: &str, bytes: &[u8]) -> Result<bool> {
        let target = self.path(key)?;
        let folder = target.parent().unwrap_or(&self.root).to_path_buf();
        let made = !folder.is_dir();
        std::fs::create_dir_all(&folder)?;
        let tmp = folder.join(format!(".{}.tmp", uuid::Uuid::new_v4().simple()));
        let written =
            write_synced(&tmp, bytes, self.durability).and_then(|()| link_new(&tmp, &target));
        let _ = std::fs::remove_file(&tmp);
        if written? {
            let mut folders = DirSyncs::new(&self.root, self.durability);
            match made {
                true => folders.received(&folder),
                false => return self.durability.sync_dir(&folder).map(|()| true),
            }
            folders.sync()?;
            return Ok(true);
        }
        Ok(false)
    }

    fn read_range(&self, key: &str, range: Range<u64>) -> Result<Bytes> {
        let mut file = self.open_file(key)?;
        let len = range.end.checked_sub(range.start).ok_or_else(|| {
            Error::internal(format!("reading {key}: range {range:?} is backwards"))
        })?;
        let mut buf = vec![0; len as usize];
        file.seek(SeekFrom::Start(range.start))
            .and_then(|_| file.read_exact(&mut buf))
            .map_err(|e| Error::from(e).context(format!("reading {range:?} of {key}")))?;
        Ok(Bytes::from(buf))
    }

    fn head(&self, key: &str) -> Result<ObjectMeta> {
        let path = self.path(key)?;
        let meta = std::fs::metadata(&path).map_err(|e| not_found_or(e, key, &path))?;
        if !meta.is_file() {
            return Err(missing(key));
        }
        Ok(ObjectMeta {
            key: key.to_string(),
            size: meta.len(),
            modified: meta.modified()?,
        })
    }

    fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>> {
        let mut out = Vec::new();
        walk(&self.root, &self.folder(prefix)?, &mut out)?;
        out.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(out)
    }

    fn delete(&self, key: &str) -> Result<()> {
        super::remove_file_if_exists(&self.path(key)?)
    }

    fn delete_prefix(&self, prefix: &str) -> Result<()> {
        match std::fs::remove_dir_all(self.folder(prefix)?) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e.into()),
            _ => Ok(()),
        }
    }

    /// Removes the folders under `prefix` that hold no file (the prefix's own folder stays).
    fn prune_empty(&self, prefix: &str) -> Result<()> {
        prune(&self.folder(prefix)?);
        Ok(())
    }

    async fn stream(&self, key: &str) -> Result<ByteStream> {
        let path = self.path(key)?;
        let file = tokio::fs::File::open(&path)
            .await
            .map_err(|e| not_found_or(e, key, &path))?;
        Ok(Box::pin(futures_util::stream::unfold(
            file,
            |mut file| async {
                use tokio::io::AsyncReadExt;
                let mut buf = bytes::BytesMut::with_capacity(STREAM_CHUNK);
                match file.read_buf(&mut buf).await {
                    Ok(0) => None,
                    Ok(_) => Some((Ok(buf.freeze()), file)),
                    Err(e) => Some((Err(e), file)),
                }
            },
        )))
    }

    fn datafusion_store(&self) -> DataFusionStore {
        DataFusionStore {
            url: ObjectStoreUrl::local_filesystem(),
            store: Arc::new(LocalFileSystem::new()),
        }
    }

    /// The absolute path, its encoded partition folders kept as they are on disk
    /// (`StorePath::from` would percent-encode them a second time: `%` -> `%25`).
    fn location(&self, key: &str) -> Result<StorePath> {
        let absolute = self.path(key)?;
        StorePath::parse(absolute.to_string_lossy())
            .map_err(|e| Error::internal(format!("data file [{key}] is not a valid path: {e}")))
    }
}

/// Every file under `dir`, keyed by its path relative to `root`.
fn walk(root: &Path, dir: &Path, out: &mut Vec<ObjectMeta>) -> Result<()> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::from(e).context(format!("listing {}", dir.display()))),
    };
    for entry in entries {
        let entry = entry?;
        let path = entry.path();
        let meta = entry.metadata()?;
        if meta.is_dir() {
            walk(root, &path, out)?;
        } else if let Ok(rel) = path.strip_prefix(root) {
            out.push(ObjectMeta {
                key: rel.to_string_lossy().into_owned(),
                size: meta.len(),
                modified: meta.modified()?,
            });
        }
    }
    Ok(())
}

/// Removes the empty folders under `dir`, deepest first; a folder that is not empty stays.
fn prune(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            prune(&path);
            let _ = std::fs::remove_dir(&path);
        }
    }
}
