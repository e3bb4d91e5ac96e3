//! Parquet page headers read without decoding the pages: the sizes a page declares (what the
//! decoder will allocate), its kind and its value count. A minimal Thrift compact-protocol reader
//! that reads the few fields needed and skips the rest, with bounded nesting.

use std::io::{self, Read};

/// What the service needs to know of one page before it is decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PageHeader {
    /// 0 data page, 2 dictionary page, 3 data page v2 (Parquet's `PageType`).
    pub page_type: i32,
    pub uncompressed_size: i64,
    pub compressed_size: i64,
    /// Values in the page (rows, for a flat column) or in the dictionary.
    pub num_values: i64,
}

pub const DICTIONARY_PAGE: i32 = 2;

const MAX_DEPTH: usize = 16;

fn bad(message: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message.to_string())
}

fn byte<R: Read>(r: &mut R) -> io::Result<u8> {
    let mut b = [0u8; 1];
    r.read_exact(&mut b)?;
    Ok(b[0])
}

fn varint<R: Read>(r: &mut R) -> io::Result<u64> {
    let mut value = 0u64;
    for shift in (0..70).step_by(7) {
        let b = byte(r)?;
        value |= u64::from(b & 0x7f) << shift.min(63);
        if b & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err(bad("an over-long varint in a page header"))
}

fn zigzag<R: Read>(r: &mut R) -> io::Result<i64> {
    let v = varint(r)?;
    Ok((v >> 1) as i64 ^ -((v & 1) as i64))
}

fn skip_bytes<R: Read>(r: &mut R, n: u64) -> io::Result<()> {
    let copied = io::copy(&mut r.take(n), &mut io::sink())?;
    if copied < n {
        return Err(io::ErrorKind::UnexpectedEof.into());
    }
    Ok(())
}

/// Skips one value of compact type `t`.
fn skip<R: Read>(r: &mut R, t: u8, depth: usize) -> io::Result<()> {
    if depth > MAX_DEPTH {
        return Err(bad("a page header nested too deeply"));
    }
    match t {
        1 | 2 => Ok(()),
        3 => byte(r).map(|_| ()),
        4..=6 => varint(r).map(|_| ()),
        7 => skip_bytes(r, 8),
        8 => {
            let n = varint(r)?;
            skip_bytes(r, n)
        }
        9 | 10 => {
            let h = byte(r)?;
            let n = match h >> 4 {
                15 => varint(r)?,
                n => u64::from(n),
            };
            let et = h & 0x0f;
            for _ in 0..n {
                // Booleans in a list are one byte each.
                if et == 1 || et == 2 {
                    byte(r)?;
                } else {
                    skip(r, et, depth + 1)?;
                }
            }
            Ok(())
        }
        11 => {
            let n = varint(r)?;
            if n > 0 {
                let kv = byte(r)?;
                for _ in 0..n {
                    skip(r, kv >> 4, depth + 1)?;
                    skip(r, kv & 0x0f, depth + 1)?;
                }
            }
            Ok(())
        }
        12 => read_struct(r, depth + 1, |r, _, t, d| skip(r, t, d)),
        13 => skip_bytes(r, 16),
        _ => Err(bad("an unknown type in a page header")),
    }
}

/// Reads a struct's fields, handing each (id, type) to `field`, which must consume it.
fn read_struct<R: Read>(
    r: &mut R,
    depth: usize,
    mut field: impl FnMut(&mut R, i16, u8, usize) -> io::Result<()>,
) -> io::Result<()> {
    let mut last: i16 = 0;
    loop {
        let h = byte(r)?;
        let t = h & 0x0f;
        if t == 0 {
            return Ok(());
        }
        let id = match h >> 4 {
            0 => zigzag(r)? as i16,
            delta => last.wrapping_add(i16::from(delta)),
        };
        last = id;
        field(r, id, t, depth)?;
    }
}

fn int<R: Read>(r: &mut R, t: u8, depth: usize) -> io::Result<Option<i64>> {
    if matches!(t, 4..=6) {
        Ok(Some(zigzag(r)?))
    } else {
        skip(r, t, depth).map(|_| None)
    }
}

/// Reads one `PageHeader` from `r`, leaving `r` at the first byte of the page's data.
pub fn read_page_header<R: Read>(r: &mut R) -> io::Result<PageHeader> {
    let mut h = PageHeader::default();
    read_struct(r, 0, |r, id, t, depth| {
        match (id, t) {
            (1, _) => h.page_type = int(r, t, depth)?.unwrap_or(-1) as i32,
            (2, _) => h.uncompressed_size = int(r, t, depth)?.unwrap_or(-1),
            (3, _) => h.compressed_size = int(r, t, depth)?.unwrap_or(-1),
            // DataPageHeader, DictionaryPageHeader, DataPageHeaderV2: num_values is field 1.
            (5 | 7 | 8, 12) => read_struct(r, depth + 1, |r, id, t, d| {
                if let Some(n) = int_if(id == 1, r, t, d)? {
                    h.num_values = n;
                }
                Ok(())
            })?,
            _ => skip(r, t, depth)?,
        }
        Ok(())
    })?;
    if h.uncompressed_size < 0 || h.compressed_size < 0 || h.num_values < 0 {
        return Err(bad("a page header with a negative size"));
    }
    Ok(h)
}

fn int_if<R: Read>(wanted: bool, r: &mut R, t: u8, depth: usize) -> io::Result<Option<i64>> {
    if wanted {
        int(r, t, depth)
    } else {
        skip(r, t, depth).map(|_| None)
    }
}
