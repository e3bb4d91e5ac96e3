//! Parquet column chunks of a file in the local data folder, read on the query's own thread.
//!
//! The object store's local reads each go through tokio's blocking pool (a thread hand-off per
//! range) into a zero-filled buffer: in a group-by over 1M rows that was a tenth of the
//! server's time (benches/README.md, "Read path, third round"). Data files are immutable once
//! committed and usually in the page cache, so a plain read is a memory copy; it blocks only
//! this query's thread of the query runtime, which has one per running query. Footers still
//! come from the engine's metadata cache through the wrapped reader.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::physical_plan::parquet::CachedParquetFileReaderFactory;
use datafusion::datasource::physical_plan::ParquetFileReaderFactory;
use datafusion::error::Result as DfResult;
use datafusion::physical_plan::metrics::ExecutionPlanMetricsSet;
use futures_util::future::BoxFuture;
use futures_util::FutureExt;
use parquet::arrow::arrow_reader::ArrowReaderOptions;
use parquet::arrow::async_reader::AsyncFileReader;
use parquet::errors::{ParquetError, Result as ParquetResult};
use parquet::file::metadata::ParquetMetaData;

/// Makes [`LocalFileReader`]s; footers through `cached`.
#[derive(Debug)]
pub(crate) struct LocalReaderFactory {
    pub cached: CachedParquetFileReaderFactory,
}

impl ParquetFileReaderFactory for LocalReaderFactory {
    fn create_reader(
        &self,
        partition_index: usize,
        file: PartitionedFile,
        metadata_size_hint: Option<usize>,
        metrics: &ExecutionPlanMetricsSet,
    ) -> DfResult<Box<dyn AsyncFileReader + Send>> {
        // The local store maps a location to the absolute path it spells.
        let path = PathBuf::from(format!("/{}", file.object_meta.location.as_ref()));
        let footers =
            self.cached
                .create_reader(partition_index, file, metadata_size_hint, metrics)?;
        Ok(Box::new(LocalFileReader {
            path,
            file: None,
            footers,
        }))
    }
}

pub(crate) struct LocalFileReader {
    path: PathBuf,
    /// Opened at the first read, kept for the rest of the scan.
    file: Option<File>,
    footers: Box<dyn AsyncFileReader + Send>,
}

/// Bytes `range` of the file at `path`, opened into `file` at the first call.
fn read_range(path: &Path, file: &mut Option<File>, range: Range<u64>) -> ParquetResult<Bytes> {
    let io = |e: std::io::Error| ParquetError::External(Box::new(e));
    let file = match file {
        Some(f) => f,
        None => file.insert(File::open(path).map_err(io)?),
    };
    let len = range.end.saturating_sub(range.start);
    file.seek(SeekFrom::Start(range.start)).map_err(io)?;
    // `read_to_end` fills the spare capacity as it is: no zeroing of the buffer first.
    let mut buf = Vec::with_capacity(len as usize);
    file.take(len).read_to_end(&mut buf).map_err(io)?;
    if buf.len() as u64 != len {
        return Err(ParquetError::EOF(format!(
            "{} ends before byte {}",
            path.display(),
            range.end
        )));
    }
    Ok(Bytes::from(buf))
}

impl AsyncFileReader for LocalFileReader {
    fn get_bytes(&mut self, range: Range<u64>) -> BoxFuture<'_, ParquetResult<Bytes>> {
        let result = read_range(&self.path, &mut self.file, range);
        async move { result }.boxed()
    }

    fn get_byte_ranges(
        &mut self,
        ranges: Vec<Range<u64>>,
    ) -> BoxFuture<'_, ParquetResult<Vec<Bytes>>> {
        let result = ranges
            .into_iter()
            .map(|r| read_range(&self.path, &mut self.file, r))
            .collect();
        async move { result }.boxed()
    }

    fn get_metadata<'a>(
        &'a mut self,
        options: Option<&'a ArrowReaderOptions>,
    ) -> BoxFuture<'a, ParquetResult<Arc<ParquetMetaData>>> {
        self.footers.get_metadata(options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_read_exactly_and_a_short_file_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"0123456789").unwrap();
        let mut file = None;
        assert_eq!(&read_range(&path, &mut file, 2..5).unwrap()[..], b"234");
        assert_eq!(
            &read_range(&path, &mut file, 0..10).unwrap()[..],
            b"0123456789"
        );
        assert!(read_range(&path, &mut file, 7..7).unwrap().is_empty());
        let err = read_range(&path, &mut file, 8..12).unwrap_err().to_string();
        assert!(err.contains("ends before byte 12"), "{err}");
        let missing = read_range(&dir.path().join("gone"), &mut None, 0..1);
        assert!(missing.is_err());
    }
}
