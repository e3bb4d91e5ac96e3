//! The blocking side of [`super::S3Objects`]: the runtime its requests run on, uploads of staged
//! files (multipart for large ones), and a seekable reader that fetches byte ranges on demand.

use std::future::Future;
use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use object_store::aws::AmazonS3;
use object_store::path::Path as StorePath;
use object_store::{ObjectStoreExt, PutPayload, WriteMultipart};
use tokio::io::AsyncReadExt;
use tokio::runtime::{Handle, Runtime};

use super::objects::missing;
use crate::error::{Error, Result};

/// Files up to this size are put in one request; larger ones in parts of this size.
pub(super) const PART_BYTES: usize = 8 << 20;

/// Parts of one multipart upload in flight at once.
const PARTS_IN_FLIGHT: usize = 4;

/// Bytes fetched per request by [`ObjectCursor`] (Parquet pages, backup copies).
const READ_CHUNK: u64 = 4 << 20;

/// The runtime every request of a store runs on. The [`super::ObjectStorage`] methods block and
/// may be called from any thread, also from an async worker of another runtime, where
/// `Handle::block_on` would panic: so the work is spawned here and its answer awaited on a plain
/// channel. Dropped without waiting (dropping a runtime inside async code panics).
#[derive(Debug)]
pub(super) struct IoRuntime(Option<Runtime>);

impl IoRuntime {
    pub(super) fn new() -> Result<IoRuntime> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("rapid-s3-io")
            .enable_all()
            .build()
            .map_err(|e| Error::internal(format!("starting the object storage runtime: {e}")))?;
        Ok(IoRuntime(Some(runtime)))
    }

    pub(super) fn handle(&self) -> &Handle {
        // unwrap: the runtime is only taken out in drop.
        self.0.as_ref().unwrap().handle()
    }

    /// Runs `work` on this runtime and blocks the calling thread until it is done.
    pub(super) fn run<T, F>(&self, work: F) -> Result<T>
    where
        F: Future<Output = Result<T>> + Send + 'static,
        T: Send + 'static,
    {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        self.handle().spawn(async move {
            let _ = tx.send(work.await);
        });
        rx.recv()
            .map_err(|_| Error::internal("an object storage request stopped before answering"))?
    }
}

impl Drop for IoRuntime {
    fn drop(&mut self) {
        if let Some(runtime) = self.0.take() {
            runtime.shutdown_background();
        }
    }
}

/// An object store error on `key`: [`missing`] for a missing object.
pub(super) fn store_error(e: object_store::Error, doing: &str, key: &str) -> Error {
    match e {
        object_store::Error::NotFound { .. } => missing(key),
        other => Error::internal(format!("{doing} [{key}] in the object store: {other}")),
    }
}

/// Uploads the local file `file` as `location`: one request when small, parts when large. A
/// failed multipart upload is aborted, so no parts are left behind.
pub(super) async fn upload(
    store: Arc<AmazonS3>,
    file: PathBuf,
    location: StorePath,
    key: String,
) -> Result<()> {
    let reading = |e: std::io::Error| Error::from(e).context(format!("reading {}", file.display()));
    let mut f = tokio::fs::File::open(&file).await.map_err(reading)?;
    let len = f.metadata().await.map_err(reading)?.len();
    if len <= PART_BYTES as u64 {
        let mut buf = Vec::with_capacity(len as usize);
        f.read_to_end(&mut buf).await.map_err(reading)?;
        store
            .put(&location, PutPayload::from(buf))
            .await
            .map_err(|e| store_error(e, "putting", &key))?;
        return Ok(());
    }
    let parts = store
        .put_multipart(&location)
        .await
        .map_err(|e| store_error(e, "starting the upload of", &key))?;
    let mut write = WriteMultipart::new_with_chunk_size(parts, PART_BYTES);
    let sent: Result<()> = async {
        loop {
            let mut chunk = BytesMut::with_capacity(PART_BYTES);
            while chunk.len() < PART_BYTES {
                if f.read_buf(&mut chunk).await.map_err(reading)? == 0 {
                    break;
                }
            }
            if chunk.is_empty() {
                return Ok(());
            }
            write
                .wait_for_capacity(PARTS_IN_FLIGHT)
                .await
                .map_err(|e| store_error(e, "uploading a part of", &key))?;
            write.put(chunk.freeze());
        }
    }
    .await;
    match sent {
        Ok(()) => write
            .finish()
            .await
            .map(|_| ())
            .map_err(|e| store_error(e, "completing the upload of", &key)),
        Err(e) => {
            let _ = write.abort().await;
            Err(e)
        }
    }
}

/// A kept object read through byte-range requests of [`READ_CHUNK`], fetched as reading reaches
/// them.
pub(super) struct ObjectCursor {
    store: Arc<AmazonS3>,
    io: Arc<IoRuntime>,
    location: StorePath,
    key: String,
    size: u64,
    pos: u64,
    buf: Bytes,
    buf_start: u64,
}

impl ObjectCursor {
    pub(super) fn new(
        store: Arc<AmazonS3>,
        io: Arc<IoRuntime>,
        location: StorePath,
        key: String,
        size: u64,
    ) -> ObjectCursor {
        ObjectCursor {
            store,
            io,
            location,
            key,
            size,
            pos: 0,
            buf: Bytes::new(),
            buf_start: 0,
        }
    }

    /// Makes the buffer hold the byte at `pos` (which is before the end).
    fn fill(&mut self) -> std::io::Result<()> {
        let end = self.pos.saturating_add(READ_CHUNK).min(self.size);
        let (store, location, key) = (self.store.clone(), self.location.clone(), self.key.clone());
        let range = self.pos..end;
        let bytes = self
            .io
            .run(async move {
                store
                    .get_range(&location, range)
                    .await
                    .map_err(|e| store_error(e, "reading", &key))
            })
            .map_err(std::io::Error::other)?;
        if bytes.is_empty() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!("{} ended before its {} bytes", self.key, self.size),
            ));
        }
        self.buf = bytes;
        self.buf_start = self.pos;
        Ok(())
    }
}

impl Read for ObjectCursor {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.pos >= self.size || out.is_empty() {
            return Ok(0);
        }
        let buffered = self.buf_start..self.buf_start + self.buf.len() as u64;
        if !buffered.contains(&self.pos) {
            self.fill()?;
        }
        let at = (self.pos - self.buf_start) as usize;
        let n = out.len().min(self.buf.len() - at);
        out[..n].copy_from_slice(&self.buf[at..at + n]);
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for ObjectCursor {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        let target = match to {
            SeekFrom::Start(n) => Some(n),
            SeekFrom::End(d) => self.size.checked_add_signed(d),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        self.pos = target.ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("seek before the start of {}", self.key),
            )
        })?;
        Ok(self.pos)
    }
}
