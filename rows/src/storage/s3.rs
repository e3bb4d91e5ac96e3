//! The kept objects in an S3-compatible bucket (`RAPID_STORAGE_URL=s3://bucket/prefix`), through
//! the `object_store` crate's `AmazonS3`, the same store DataFusion reads the data files from.
//!
//! There is no rename: every key an upload writes is unique to it (the raw file name carries a
//! timestamp and a random part, data files are named after it, results after their job id), so
//! objects are put under their final keys first and become part of a dataset only when the
//! catalog commit lists them. Objects no catalog row lists are swept once they are older than the
//! grace period ([`ObjectStorage::unlisted_grace`]), so a commit in flight on another node is
//! never swept. An object is durable once its upload is acknowledged.

use std::ops::Range;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use datafusion::execution::object_store::ObjectStoreUrl;
use futures_util::{StreamExt, TryStreamExt};
use object_store::aws::{AmazonS3, AmazonS3Builder};
use object_store::client::SpawnedReqwestConnector;
use object_store::path::Path as StorePath;
use object_store::{ObjectStore, ObjectStoreExt};

use super::objects::{
    check_key, check_prefix, ByteStream, DataFusionStore, ObjectMeta, ObjectRead, ObjectStorage,
    StagedObject,
};
use super::s3_io::{store_error, upload, IoRuntime, ObjectCursor};
use crate::error::{Error, Result};

/// Staged files uploaded at once by one [`ObjectStorage::put`].
const UPLOADS_IN_FLIGHT: usize = 4;

#[derive(Debug)]
pub struct S3Objects {
    store: Arc<AmazonS3>,
    io: Arc<IoRuntime>,
    bucket: String,
    /// The folder of the bucket the keys live under: `""` or `a/b`.
    prefix: String,
    grace: Duration,
}

impl S3Objects {
    /// The bucket and prefix of `url` (`s3://bucket` or `s3://bucket/prefix`), reached with the
    /// standard AWS environment: `AWS_ENDPOINT_URL`, `AWS_REGION`, `AWS_ACCESS_KEY_ID`,
    /// `AWS_SECRET_ACCESS_KEY`, `AWS_ALLOW_HTTP` (for a local server). Unlisted objects are
    /// swept once older than `sweep_grace`.
    pub fn from_url(url: &str, sweep_grace: Duration) -> Result<S3Objects> {
        let (bucket, prefix) = parse_url(url)?;
        let io = Arc::new(IoRuntime::new()?);
        let store = AmazonS3Builder::from_env()
            .with_bucket_name(&bucket)
            .with_http_connector(SpawnedReqwestConnector::new(io.handle().clone()))
            .build()
            .map_err(|e| Error::invalid(format!("RAPID_STORAGE_URL [{url}]: {e}")))?;
        Ok(S3Objects {
            store: Arc::new(store),
            io,
            bucket,
            prefix,
            grace: sweep_grace,
        })
    }

    /// Where `rel` (a key or a folder, already checked) lives in the bucket.
    fn path(&self, rel: &str) -> Result<StorePath> {
        let full = match (self.prefix.is_empty(), rel.is_empty()) {
            (true, _) => rel.to_string(),
            (false, true) => self.prefix.clone(),
            (false, false) => format!("{}/{rel}", self.prefix),
        };
        StorePath::parse(&full)
            .map_err(|e| Error::internal(format!("[{rel}] is not a valid object key: {e}")))
    }

    fn key_path(&self, key: &str) -> Result<StorePath> {
        check_key(key)?;
        self.path(key)
    }

    /// The key of an object listed at `location`, relative to the prefix.
    fn key_of(&self, location: &StorePath) -> String {
        let full = location.as_ref();
        match self.prefix.is_empty() {
            true => full.to_string(),
            false => full
                .strip_prefix(&self.prefix)
                .and_then(|k| k.strip_prefix('/'))
                .unwrap_or(full)
                .to_string(),
        }
    }

    /// Every object under the folder `prefix`, as the store lists them.
    fn list_raw(&self, prefix: &str) -> Result<Vec<object_store::ObjectMeta>> {
        check_prefix(prefix)?;
        let folder = self.path(prefix)?;
        let store = self.store.clone();
        let what = prefix.to_string();
        self.io.run(async move {
            let folder = (!folder.as_ref().is_empty()).then_some(folder);
            store
                .list(folder.as_ref())
                .try_collect::<Vec<_>>()
                .await
                .map_err(|e| store_error(e, "listing", &what))
        })
    }
}

/// `s3://bucket[/prefix]` -> (bucket, prefix without outer slashes).
fn parse_url(url: &str) -> Result<(String, String)> {
    let bad = |why: &str| Error::invalid(format!("RAPID_STORAGE_URL [{url}]: {why}"));
    let rest = url
        .strip_prefix("s3://")
        .ok_or_else(|| bad("expected s3://bucket or s3://bucket/prefix"))?;
    let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
    let prefix = prefix.trim_matches('/');
    let plain = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_');
    if bucket.is_empty() || !bucket.bytes().all(plain) {
        return Err(bad(
            "the bucket name must be letters, digits, '.', '-', '_'",
        ));
    }
    check_prefix(prefix).map_err(|_| bad("the prefix must be a plain folder path"))?;
    Ok((bucket.to_string(), prefix.to_string()))
}

#[async_trait::async_trait]
impl ObjectStorage for S3Objects {
    fn put(&self, objects: &[StagedObject]) -> Result<()> {
        let mut uploads = Vec::with_capacity(objects.len());
        for o in objects {
            uploads.push((o.staged.clone(), self.key_path(&o.key)?, o.key.clone()));
        }
        let store = self.store.clone();
        // Every upload runs to its end (none is cancelled half-way, which would leave parts).
        let outcomes: Vec<Result<()>> = self.io.run(async move {
            Ok(futures_util::stream::iter(uploads)
                .map(|(file, location, key)| upload(store.clone(), file, location, key))
                .buffer_unordered(UPLOADS_IN_FLIGHT)
                .collect()
                .await)
        })?;
        if let Some(e) = outcomes.into_iter().find_map(|o| o.err()) {
            for o in objects {
                let _ = self.delete(&o.key);
            }
            return Err(e);
        }
        for o in objects {
            super::remove_file_if_exists(&o.staged)?;
        }
        Ok(())
    }

    /// Looked up first, then a conditional put (`If-None-Match: *`), which AWS S3 and MinIO
    /// refuse when the key exists. Some S3-compatible stores (Garage) ignore the condition: two
    /// writers racing past the lookup then both write; the Delta log's writers put the same
    /// bytes derived from the same catalog rows, so either outcome is the same object.
    fn put_new(&self, key: &str, bytes: &[u8]) -> Result<bool> {
        if self.exists(key)? {
            return Ok(false);
        }
        let location = self.key_path(key)?;
        let payload = object_store::PutPayload::from(Bytes::copy_from_slice(bytes));
        let (store, what) = (self.store.clone(), key.to_string());
        self.io.run(async move {
            let options = object_store::PutOptions::from(object_store::PutMode::Create);
            match store.put_opts(&location, payload, options).await {
                Ok(_) => Ok(true),
                Err(object_store::Error::AlreadyExists { .. }) => Ok(false),
                Err(object_store::Error::Precondition { .. }) => Ok(false),
                Err(e) => Err(store_error(e, "writing", &what)),
            }
        })
    }

    fn open(&self, key: &str) -> Result<Box<dyn ObjectRead>> {
        let size = self.head(key)?.size;
        let location = self.key_path(key)?;
        Ok(Box::new(ObjectCursor::new(
            self.store.clone(),
            self.io.clone(),
            location,
            key.to_string(),
            size,
        )))
    }

    fn read_range(&self, key: &str, range: Range<u64>) -> Result<Bytes> {
        if range.end < range.start {
            return Err(Error::internal(format!(
                "reading {key}: range {range:?} is backwards"
            )));
        }
        let location = self.key_path(key)?;
        let (store, what) = (self.store.clone(), key.to_string());
        self.io.run(async move {
            store
                .get_range(&location, range)
                .await
                .map_err(|e| store_error(e, "reading", &what))
        })
    }

    fn head(&self, key: &str) -> Result<ObjectMeta> {
        let location = self.key_path(key)?;
        let (store, what) = (self.store.clone(), key.to_string());
        let meta = self.io.run(async move {
            store
                .head(&location)
                .await
                .map_err(|e| store_error(e, "reading", &what))
        })?;
        Ok(ObjectMeta {
            key: key.to_string(),
            size: meta.size,
            modified: SystemTime::from(meta.last_modified),
        })
    }

    fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>> {
        let mut out: Vec<ObjectMeta> = self
            .list_raw(prefix)?
            .iter()
            .map(|m| ObjectMeta {
                key: self.key_of(&m.location),
                size: m.size,
                modified: SystemTime::from(m.last_modified),
            })
            .collect();
        out.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(out)
    }

    fn delete(&self, key: &str) -> Result<()> {
        let location = self.key_path(key)?;
        let (store, what) = (self.store.clone(), key.to_string());
        self.io.run(async move {
            match store.delete(&location).await {
                Err(object_store::Error::NotFound { .. }) => Ok(()),
                other => other.map_err(|e| store_error(e, "deleting", &what)),
            }
        })
    }

    /// Lists the folder and deletes what it holds in bulk requests.
    fn delete_prefix(&self, prefix: &str) -> Result<()> {
        let listed = self.list_raw(prefix)?;
        let (store, what) = (self.store.clone(), prefix.to_string());
        self.io.run(async move {
            let locations = futures_util::stream::iter(listed.into_iter().map(|m| Ok(m.location)));
            let mut deleted = store.delete_stream(locations.boxed());
            while let Some(outcome) = deleted.next().await {
                match outcome {
                    Ok(_) | Err(object_store::Error::NotFound { .. }) => {}
                    Err(e) => return Err(store_error(e, "deleting under", &what)),
                }
            }
            Ok(())
        })
    }

    async fn stream(&self, key: &str) -> Result<ByteStream> {
        let location = self.key_path(key)?;
        let got = self
            .store
            .get(&location)
            .await
            .map_err(|e| store_error(e, "reading", key))?;
        Ok(Box::pin(got.into_stream().map_err(std::io::Error::other)))
    }

    fn datafusion_store(&self) -> DataFusionStore {
        DataFusionStore {
            // unwrap: a bucket name from parse_url is a valid URL host.
            url: ObjectStoreUrl::parse(format!("s3://{}", self.bucket)).unwrap(),
            store: self.store.clone(),
        }
    }

    fn location(&self, key: &str) -> Result<StorePath> {
        self.key_path(key)
    }

    fn unlisted_grace(&self) -> Option<Duration> {
        Some(self.grace)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn storage_urls_name_a_bucket_and_a_plain_prefix() {
        let ok = |u: &str| parse_url(u).unwrap();
        assert_eq!(ok("s3://b"), ("b".into(), "".into()));
        assert_eq!(ok("s3://b/"), ("b".into(), "".into()));
        assert_eq!(ok("s3://b/lake/prod/"), ("b".into(), "lake/prod".into()));
        for bad in [
            "b/x",
            "file:///tmp",
            "s3://",
            "s3:///x",
            "s3://b/a//c",
            "s3://b/../x",
            "s3://b c/x",
            "s3://b@h/x",
        ] {
            assert!(parse_url(bad).is_err(), "{bad}");
        }
    }
}
