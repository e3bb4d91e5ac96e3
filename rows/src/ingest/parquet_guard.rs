//! A Parquet file checked before its data is decoded, so a small file cannot decode into
//! gigabytes: the footer's size; every page's declared decoded size against the page budget
//! (twice the value limit: writers cut pages at about 1 MB, so only a page holding one long
//! value comes near it), and for GZIP and LZ4 pages, whose decoders in the `parquet`
//! crate do not stop at the declared size, the actual decoded size too; each dictionary's
//! longest value. From these, the rows per batch of each row group, so that no window of that
//! many rows can decode to more than [`BATCH_BYTES`], however its values are spread.

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use parquet::basic::{Compression, Type as PhysicalType};
use parquet::column::page::Page;
use parquet::file::metadata::{ColumnChunkMetaData, ParquetMetaData};
use parquet::file::reader::{FileReader, RowGroupReader};
use parquet::file::serialized_reader::SerializedFileReader;

use super::page_header::{read_page_header, DICTIONARY_PAGE};
use super::{BATCH_BYTES, BATCH_ROWS};
use crate::error::{Error, ErrorKind, Result};

/// The largest Parquet footer (file metadata) read.
pub const MAX_FOOTER_BYTES: u64 = 64 * 1024 * 1024;

/// The most pages one column chunk may have (their sizes are kept while planning).
const MAX_PAGES: usize = 1 << 20;

/// How to read a checked file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadPlan {
    /// Rows per batch, for each row group.
    pub batch_rows: Vec<usize>,
    /// Per leaf column: some dictionary holds a value over the limit, so the column is read as
    /// a dictionary (never expanded) to find the first row using that value.
    pub oversize_dictionary: Vec<bool>,
}

fn refuse(message: String) -> Error {
    Error::many(ErrorKind::Unprocessable, vec![message])
}

fn unreadable(e: impl std::fmt::Display) -> Error {
    refuse(format!("The file is not a readable Parquet file: {e}"))
}

/// Refuses a file whose footer is larger than [`MAX_FOOTER_BYTES`], before it is read.
pub fn check_footer(path: &Path) -> Result<()> {
    let mut file = File::open(path)?;
    let len = file.metadata()?.len();
    if len < 12 {
        return Err(unreadable("it is too short"));
    }
    let mut tail = [0u8; 8];
    file.seek(SeekFrom::End(-8))?;
    file.read_exact(&mut tail)?;
    if &tail[4..] != b"PAR1" {
        return Err(unreadable("it does not end with the Parquet magic bytes"));
    }
    // unwrap: a 4-byte slice of an 8-byte array.
    let footer = u64::from(u32::from_le_bytes(tail[..4].try_into().unwrap()));
    if footer > MAX_FOOTER_BYTES {
        return Err(refuse(format!(
            "The Parquet file's metadata is {footer} bytes, over the limit of {MAX_FOOTER_BYTES} bytes"
        )));
    }
    Ok(())
}

/// One column chunk as its pages declare it.
#[derive(Debug, Default)]
struct Chunk {
    dictionary_bytes: u64,
    /// Longest value the dictionary holds (0 without one).
    longest_dictionary_value: u64,
    /// Data pages in order: (values, decoded bytes).
    pages: Vec<(u64, u64)>,
    /// Bytes per row once decoded, beyond what the pages hold (offsets, nulls, casts).
    row_overhead: u64,
}

impl Chunk {
    /// The most bytes `rows` consecutive rows can decode to: the dictionary, each row's
    /// longest possible dictionary value, and every data page such a window can touch.
    fn bound(&self, rows: u64) -> u64 {
        let n = self.pages.len();
        let (mut r_pre, mut s_pre) = (vec![0u64; n + 1], vec![0u64; n + 1]);
        for (k, (r, s)) in self.pages.iter().enumerate() {
            r_pre[k + 1] = r_pre[k] + r;
            s_pre[k + 1] = s_pre[k].saturating_add(*s);
        }
        // For each first page i, pages i..=j where pages after i hold at least `rows` values.
        let (mut window, mut j) = (0u64, 0usize);
        for i in 0..n {
            j = j.max(i);
            while j + 1 < n && r_pre[j + 1] - r_pre[i + 1] < rows {
                j += 1;
            }
            window = window.max(s_pre[j + 1] - s_pre[i]);
        }
        self.dictionary_bytes
            .saturating_add(rows.saturating_mul(self.longest_dictionary_value + self.row_overhead))
            .saturating_add(window)
    }
}

/// Checks every page of `path` (whose metadata is `metadata`) and plans its reading.
pub fn plan(path: &Path, metadata: &ParquetMetaData, max_value: usize) -> Result<ReadPlan> {
    let page_limit = (max_value as u64).saturating_mul(2);
    let schema = metadata.file_metadata().schema_descr();
    for column in schema.columns() {
        if column.max_rep_level() > 0 || column.path().parts().len() > 1 {
            return Err(refuse(format!(
                "Column [{}] is a nested Parquet column (list, map or struct), which is not supported",
                column.path()
            )));
        }
    }
    let file = File::open(path)?;
    let pages = SerializedFileReader::new(file.try_clone()?).map_err(unreadable)?;
    let mut plan = ReadPlan {
        batch_rows: Vec::new(),
        oversize_dictionary: vec![false; schema.num_columns()],
    };
    let mut first_row = 1u64;
    for (g, group) in metadata.row_groups().iter().enumerate() {
        let rows = group.num_rows().max(0) as u64;
        let mut chunks = Vec::with_capacity(group.num_columns());
        for (c, chunk) in group.columns().iter().enumerate() {
            let where_ = Where {
                column: chunk.column_path().string(),
                first_row,
                rows,
                limit: page_limit,
            };
            let mut scanned = scan_chunk(&file, chunk, &where_)?;
            if scanned.dictionary_bytes > 0 {
                let reader = pages.get_row_group(g).map_err(unreadable)?;
                scanned.longest_dictionary_value =
                    longest_dictionary_value(reader.as_ref(), c, chunk)?;
                if scanned.longest_dictionary_value > max_value as u64 {
                    plan.oversize_dictionary[c] = true;
                }
            }
            chunks.push(scanned);
        }
        plan.batch_rows.push(batch_rows(&chunks));
        first_row += rows;
    }
    Ok(plan)
}

/// The largest batch (at most [`BATCH_ROWS`], at least 1) whose worst case fits the budget.
fn batch_rows(chunks: &[Chunk]) -> usize {
    let fits = |rows: u64| chunks.iter().map(|c| c.bound(rows)).sum::<u64>() <= BATCH_BYTES as u64;
    let (mut lo, mut hi) = (1u64, BATCH_ROWS as u64);
    if fits(hi) {
        return BATCH_ROWS;
    }
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo as usize
}

/// Where a chunk is, for messages.
struct Where {
    column: String,
    first_row: u64,
    rows: u64,
    limit: u64,
}

impl Where {
    fn too_large(&self, bytes: u64) -> Error {
        refuse(format!(
            "Column [{}] has a Parquet page that decodes to {bytes} bytes, over the limit of {} bytes \
             (twice the longest value allowed), in rows {} to {}",
            self.column,
            self.limit,
            self.first_row,
            self.first_row + self.rows.saturating_sub(1)
        ))
    }
}

/// Where the column chunk lies in the file, refused unless inside it. The parquet crate's own
/// `byte_range` asserts (panics) on a negative offset or size, which a client's footer can
/// declare (found by fuzzing), and its readers use it, so this runs before any of them.
fn chunk_range(file: &File, chunk: &ColumnChunkMetaData) -> Result<(u64, u64)> {
    let start = chunk
        .dictionary_page_offset()
        .unwrap_or_else(|| chunk.data_page_offset());
    let (Ok(start), Ok(len)) = (u64::try_from(start), u64::try_from(chunk.compressed_size()))
    else {
        return Err(unreadable("a column chunk has a negative offset or size"));
    };
    let file_len = file.metadata()?.len();
    if start.checked_add(len).is_none_or(|end| end > file_len) {
        return Err(unreadable("a column chunk lies past the end of the file"));
    }
    Ok((start, len))
}

fn scan_chunk(file: &File, chunk: &ColumnChunkMetaData, at: &Where) -> Result<Chunk> {
    let (start, len) = chunk_range(file, chunk)?;
    let mut input = file.try_clone()?;
    input.seek(SeekFrom::Start(start))?;
    let mut r = Counted {
        inner: BufReader::with_capacity(64 * 1024, input.take(len)),
        read: 0,
    };
    let verify = matches!(chunk.compression(), Compression::GZIP(_) | Compression::LZ4);
    let mut out = Chunk {
        row_overhead: 16,
        ..Chunk::default()
    };
    while r.read < len {
        let h = read_page_header(&mut r).map_err(unreadable)?;
        let (declared, compressed) = (h.uncompressed_size as u64, h.compressed_size as u64);
        if declared > at.limit {
            return Err(at.too_large(declared));
        }
        if compressed > len - r.read.min(len) {
            return Err(unreadable("a page runs past its column chunk"));
        }
        let mut body = (&mut r).take(compressed);
        if verify && declared > 0 {
            let decoded = decoded_size(chunk.compression(), &mut body, at.limit)?;
            if decoded > declared {
                return Err(at.too_large(decoded));
            }
        }
        std::io::copy(&mut body, &mut std::io::sink())?;
        if h.page_type == DICTIONARY_PAGE {
            out.dictionary_bytes += declared;
        } else if out.pages.len() == MAX_PAGES {
            return Err(refuse(format!(
                "Column [{}] has more than {MAX_PAGES} pages in one row group",
                at.column
            )));
        } else {
            out.pages.push((h.num_values as u64, declared));
        }
    }
    Ok(out)
}

/// Decodes a GZIP or LZ4 page into nothing, stopping just past `limit`.
fn decoded_size(codec: Compression, body: &mut impl Read, limit: u64) -> Result<u64> {
    let sink = &mut std::io::sink();
    let decoded = match codec {
        Compression::GZIP(_) => std::io::copy(
            &mut flate2::read::MultiGzDecoder::new(body).take(limit + 1),
            sink,
        ),
        // Old LZ4 pages may be Hadoop-framed or raw (decoded within the declared size by the
        // reader); only the LZ4 frame format decodes unbounded, so only it is measured.
        _ => match std::io::copy(
            &mut lz4_flex::frame::FrameDecoder::new(body).take(limit + 1),
            sink,
        ) {
            Ok(n) => Ok(n),
            Err(_) => Ok(0),
        },
    };
    decoded.map_err(unreadable)
}

/// The longest value in the dictionary page of column `c` (read and decoded by `parquet`,
/// which allocates its declared size: already checked against the budget).
fn longest_dictionary_value(
    group: &dyn RowGroupReader,
    c: usize,
    chunk: &ColumnChunkMetaData,
) -> Result<u64> {
    let descr = chunk.column_descr();
    match descr.physical_type() {
        PhysicalType::BYTE_ARRAY => {}
        PhysicalType::FIXED_LEN_BYTE_ARRAY => return Ok(descr.type_length().max(0) as u64),
        _ => return Ok(12),
    }
    let mut reader = group.get_column_page_reader(c).map_err(unreadable)?;
    let Some(Page::DictionaryPage {
        buf, num_values, ..
    }) = reader.get_next_page().map_err(unreadable)?
    else {
        return Ok(0);
    };
    // PLAIN byte arrays: a 4-byte little-endian length, then the bytes.
    let (mut at, mut longest) = (0usize, 0u64);
    for _ in 0..num_values {
        let Some(len) = buf.get(at..at + 4) else {
            break;
        };
        // unwrap: a 4-byte slice.
        let len = u32::from_le_bytes(len.try_into().unwrap()) as usize;
        longest = longest.max(len as u64);
        at = at.saturating_add(4).saturating_add(len);
    }
    Ok(longest)
}

/// Counts the bytes read through it.
struct Counted<R> {
    inner: R,
    read: u64,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_bound_covers_the_pages_any_run_of_rows_can_touch() {
        let chunk = Chunk {
            pages: vec![(10, 100), (10, 5000), (10, 100), (10, 100)],
            row_overhead: 0,
            ..Chunk::default()
        };
        // One row can sit in the big page; 11 rows can span it and a neighbour.
        assert!(chunk.bound(1) >= 5000);
        assert!(chunk.bound(11) >= 5100);
        assert!(chunk.bound(40) >= 5300);
        let dict = Chunk {
            dictionary_bytes: 1000,
            longest_dictionary_value: 500,
            row_overhead: 16,
            pages: vec![(100, 50)],
        };
        assert_eq!(dict.bound(10), 1000 + 10 * 516 + 50);
    }

    #[test]
    fn batches_shrink_as_rows_grow() {
        let small = Chunk {
            pages: vec![(65_536, 1 << 20)],
            row_overhead: 16,
            ..Chunk::default()
        };
        assert_eq!(batch_rows(&[small]), BATCH_ROWS);
        let huge_values = Chunk {
            dictionary_bytes: 50 << 20,
            longest_dictionary_value: 50 << 20,
            row_overhead: 16,
            pages: vec![(16, 64)],
        };
        assert_eq!(batch_rows(&[huge_values]), 1);
    }
}
