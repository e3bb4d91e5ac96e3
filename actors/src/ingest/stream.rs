//! The bridge from an HTTP body to the blocking parser: chunks arrive through a bounded channel
//! (so a fast client can be at most a few chunks ahead of the parser: bounded memory), are
//! written to the raw file as they are read, and parsed as they come.

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::Path;

use tokio::sync::mpsc::Receiver;

use super::{ingest_csv, ingest_parquet, IngestPlan, StagedOutput};
use crate::error::Result;
use crate::file_kind::FileKind;

/// One message of the body stream: a chunk, or word that the body broke off (client gone,
/// size limit), which must fail the parse rather than look like a short file.
pub enum Chunk {
    Data(bytes::Bytes),
    Abort(String),
}

/// A `Read` over the chunks, copying every byte it hands out to `raw`.
pub struct ChunkReader {
    rx: Receiver<Chunk>,
    current: bytes::Bytes,
    raw: BufWriter<File>,
    pub bytes_read: u64,
}

impl ChunkReader {
    pub fn new(rx: Receiver<Chunk>, raw: File) -> ChunkReader {
        ChunkReader {
            rx,
            current: bytes::Bytes::new(),
            raw: BufWriter::with_capacity(1 << 20, raw),
            bytes_read: 0,
        }
    }

    /// Reads whatever is left into the raw file (for Parquet, which is parsed only once whole).
    fn drain_to_raw(&mut self) -> std::io::Result<()> {
        let mut buf = vec![0u8; 1 << 16];
        while self.read(&mut buf)? > 0 {}
        self.raw.flush()
    }
}

impl Read for ChunkReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.current.is_empty() {
            match self.rx.blocking_recv() {
                None => {
                    self.raw.flush()?;
                    return Ok(0);
                }
                Some(Chunk::Data(b)) => self.current = b,
                Some(Chunk::Abort(why)) => return Err(std::io::Error::other(why)),
            }
        }
        let n = buf.len().min(self.current.len());
        let piece = self.current.split_to(n);
        buf[..n].copy_from_slice(&piece);
        self.raw.write_all(&piece)?;
        self.bytes_read += n as u64;
        Ok(n)
    }
}

/// Receives and ingests one upload: CSV is parsed while it streams in; Parquet is written to
/// `raw_path` first (its footer, at the end, is needed to read it). Returns the staged output
/// and the number of raw bytes.
pub fn ingest_stream(
    kind: FileKind,
    rx: Receiver<Chunk>,
    raw_path: &Path,
    plan: &IngestPlan<'_>,
) -> Result<(StagedOutput, u64)> {
    let raw = File::create(raw_path)?;
    let mut reader = ChunkReader::new(rx, raw);
    match kind {
        FileKind::Csv => {
            let output = ingest_csv(&mut reader, plan)?;
            // Anything after the last record (a trailing newline) still belongs to the raw file.
            reader.drain_to_raw()?;
            Ok((output, reader.bytes_read))
        }
        FileKind::Parquet => {
            reader.drain_to_raw()?;
            let bytes = reader.bytes_read;
            drop(reader);
            Ok((ingest_parquet(raw_path, plan)?, bytes))
        }
    }
}
