//! The bridge from an HTTP body to the blocking parser: chunks arrive through a bounded channel
//! (so a fast client can be at most a few chunks ahead of the parser: bounded memory), are
//! written to the raw file as they are read, and parsed as they come.

use std::fs::File;
use std::io::{Read, Write};
use std::path::Path;

use tokio::sync::mpsc::Receiver;

use super::csv_input::ingest_csv_synced;
use super::parquet_input::ingest_parquet_synced;
use super::{CsvOptions, IngestPlan, StagedOutput};
use crate::error::{Error, Result};
use crate::file_kind::FileKind;
use crate::storage::{Durability, WriteBehind};

/// One message of the body stream: a chunk, or word that the body broke off (client gone,
/// size limit), which must fail the parse rather than look like a short file.
pub enum Chunk {
    Data(bytes::Bytes),
    Abort(String),
}

/// A `Read` over the chunks. Each chunk is also handed (by reference count, not copied) to a
/// thread that writes the raw file, so disk writes never hold up the parser.
pub struct ChunkReader {
    rx: Receiver<Chunk>,
    current: bytes::Bytes,
    raw: Option<RawWriter>,
    pub bytes_read: u64,
}

struct RawWriter {
    tx: std::sync::mpsc::SyncSender<bytes::Bytes>,
    thread: std::thread::JoinHandle<std::io::Result<()>>,
}

impl RawWriter {
    fn start(file: File, durability: Durability) -> RawWriter {
        let (tx, rx) = std::sync::mpsc::sync_channel::<bytes::Bytes>(64);
        let thread = std::thread::spawn(move || {
            // Chunks are written as they are (a buffer would copy every byte once more), and
            // handed to the kernel for writing back as they go (see WriteBehind).
            let mut out = WriteBehind::new(file, durability);
            for chunk in rx {
                out.write_all(&chunk)?;
            }
            // Synced on this thread while the parser finishes (storage durability discipline).
            durability.sync_file(out.get_ref())
        });
        RawWriter { tx, thread }
    }

    fn finish(self) -> std::io::Result<()> {
        drop(self.tx);
        self.thread
            .join()
            .map_err(|_| std::io::Error::other("the raw file writer panicked"))?
    }
}

impl ChunkReader {
    /// Chunks from `rx`, also written to `raw`, which is synced as `durability` says.
    pub fn new(rx: Receiver<Chunk>, raw: File, durability: Durability) -> ChunkReader {
        ChunkReader {
            rx,
            current: bytes::Bytes::new(),
            raw: Some(RawWriter::start(raw, durability)),
            bytes_read: 0,
        }
    }

    /// Reads whatever is left, so all of it reaches the raw file.
    fn drain(&mut self) -> std::io::Result<()> {
        let mut buf = vec![0u8; 1 << 16];
        while self.read(&mut buf)? > 0 {}
        Ok(())
    }

    /// Waits until the raw file is completely written.
    fn finish_raw(&mut self) -> std::io::Result<()> {
        match self.raw.take() {
            Some(w) => w.finish(),
            None => Ok(()),
        }
    }

    fn next_chunk(&mut self) -> std::io::Result<bool> {
        match self.rx.blocking_recv() {
            None => Ok(false),
            Some(Chunk::Data(b)) => {
                if let Some(w) = &self.raw {
                    if w.tx.send(b.clone()).is_err() {
                        // The writer stopped on an I/O error: report it.
                        self.finish_raw()?;
                        return Err(std::io::Error::other("the raw file writer stopped"));
                    }
                }
                self.bytes_read += b.len() as u64;
                self.current = b;
                Ok(true)
            }
            Some(Chunk::Abort(why)) => Err(std::io::Error::other(why)),
        }
    }
}

impl Read for ChunkReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.current.is_empty() {
            if !self.next_chunk()? {
                return Ok(0);
            }
        }
        let n = buf.len().min(self.current.len());
        buf[..n].copy_from_slice(&self.current.split_to(n));
        Ok(n)
    }
}

/// Receives and ingests one upload: CSV is parsed while it streams in; Parquet is written to
/// `raw_path` first (its footer, at the end, is needed to read it). The raw file and the staged
/// data files are synced as `durability` says. Returns the staged output and the number of raw
/// bytes.
pub fn ingest_stream(
    kind: FileKind,
    rx: Receiver<Chunk>,
    raw_path: &Path,
    plan: &IngestPlan<'_>,
    durability: Durability,
) -> Result<(StagedOutput, u64)> {
    let raw = File::create(raw_path)
        .map_err(|e| Error::from(e).context(format!("creating {}", raw_path.display())))?;
    let mut reader = ChunkReader::new(rx, raw, durability);
    match kind {
        FileKind::Csv => {
            let output = ingest_csv_synced(&mut reader, plan, CsvOptions::default(), durability)?;
            // Anything after the last record (a trailing newline) still belongs to the raw file.
            reader.drain()?;
            reader.finish_raw()?;
            Ok((output, reader.bytes_read))
        }
        FileKind::Parquet => {
            reader.drain()?;
            reader.finish_raw()?;
            Ok((
                ingest_parquet_synced(raw_path, plan, durability)?,
                reader.bytes_read,
            ))
        }
    }
}
