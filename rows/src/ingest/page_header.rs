//! Parquet page headers read without decoding the pages: the sizes a page declares (what the
//! decoder will allocate), its kind and its value count. A minimal Thrift compact-protocol reader
//! that reads the few fields needed and skips the rest, with bounded nesting.

use std::io::{self, Read};

/// What the service needs to know of one page before it is decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct PageHeader {
    /// 0 data page, 2 dictionary page, 3 data page v2 (Parquet's `PageType`).
    pub page_type: i32,
    pub uncompressed_size: i64,
    pub compressed_size: i64,
    /// Values in the page (rows, for a flat column) or in the dictionary.
    pub num_values: i64,
}

pub(super) const DICTIONARY_PAGE: i32 = 2;

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
                skip_element(r, et, depth + 1)?;
            }
            Ok(())
        }
        11 => {
            let n = varint(r)?;
            if n > 0 {
                let kv = byte(r)?;
                for _ in 0..n {
                    skip_element(r, kv >> 4, depth + 1)?;
                    skip_element(r, kv & 0x0f, depth + 1)?;
                }
            }
            Ok(())
        }
        12 => read_struct(r, depth + 1, |r, _, t, d| skip(r, t, d)),
        13 => skip_bytes(r, 16),
        _ => Err(bad("an unknown type in a page header")),
    }
}

/// Skips one element of a list, set or map. A boolean element is a byte of its own (only a
/// struct field carries its boolean in the type nibble), so every element takes at least one
/// byte and a declared count larger than the input ends at its end: a map of booleans skipped
/// as zero bytes each looped for as long as its count said (2^63 times; found by fuzzing).
fn skip_element<R: Read>(r: &mut R, t: u8, depth: usize) -> io::Result<()> {
    if t == 1 || t == 2 {
        byte(r).map(|_| ())
    } else {
        skip(r, t, depth)
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
pub(super) fn read_page_header<R: Read>(r: &mut R) -> io::Result<PageHeader> {
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

#[cfg(test)]
mod tests {
    use super::read_page_header;

    /// A header whose unknown field 4 is a map of booleans declaring 2^63 entries, in 5 bytes
    /// of input: each entry must consume input, so this ends at the input's end.
    #[test]
    fn a_huge_map_of_booleans_ends_at_the_end_of_the_input() {
        let mut header = vec![0x4b]; // field 4 (delta), type 11 (map)
        header.extend([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]); // 2^63 - 1
        header.push(0x11); // key and value types: boolean
        header.extend([1, 2, 1]); // three bytes of entries, then nothing
        let err = read_page_header(&mut header.as_slice()).expect_err("truncated");
        assert_eq!(err.kind(), std::io::ErrorKind::UnexpectedEof, "{err}");
    }

    /// The same for a list of booleans (already one byte each) and of structs.
    #[test]
    fn huge_lists_end_at_the_end_of_the_input() {
        for element in [0x01u8, 0x0c] {
            let mut header = vec![0x49, 0xf0 | element]; // field 4, list; count follows
            header.extend([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]);
            header.extend([0, 0, 0]);
            let err = read_page_header(&mut header.as_slice()).expect_err("truncated");
            assert_eq!(err.kind(), std::io::ErrorKind::UnexpectedEof, "{err}");
        }
    }
}
