//! The durable state, kept in the backing folder: `files/{ino}` holds an inode's durable contents,
//! `dirs/{ino}` a directory's durable entries (one `kind ino mode hex(name)` line each).
//! Root is inode 1. Nothing here is written except on behalf of an fsync (or a torn write).

use std::ffi::{OsStr, OsString};
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::kind::Kind;

/// One durable directory entry: name, inode, kind, permission bits.
pub(crate) type Entry = (OsString, u64, Kind, u16);

pub(crate) struct Backing {
    root: PathBuf,
}

fn hex(name: &OsStr) -> String {
    name.as_bytes().iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Option<OsString> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    let bytes: Option<Vec<u8>> = (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect();
    bytes.map(OsString::from_vec)
}

fn parse_entry(line: &str) -> Option<Entry> {
    let parts: Vec<&str> = line.split(' ').collect();
    let [kind, ino, mode, name] = parts.as_slice() else {
        return None;
    };
    let kind = match *kind {
        "d" => Kind::Dir,
        "f" => Kind::File,
        _ => return None,
    };
    Some((
        unhex(name)?,
        ino.parse().ok()?,
        kind,
        u16::from_str_radix(mode, 8).ok()?,
    ))
}

impl Backing {
    pub(crate) fn open(root: &Path) -> io::Result<Backing> {
        std::fs::create_dir_all(root.join("files"))?;
        std::fs::create_dir_all(root.join("dirs"))?;
        Ok(Backing {
            root: root.to_path_buf(),
        })
    }

    fn file_path(&self, ino: u64) -> PathBuf {
        self.root.join("files").join(ino.to_string())
    }

    fn dir_path(&self, ino: u64) -> PathBuf {
        self.root.join("dirs").join(ino.to_string())
    }

    /// Durable size and modification time of a file inode (0 and now when never synced).
    pub(crate) fn file_meta(&self, ino: u64) -> (u64, Option<std::time::SystemTime>) {
        match std::fs::metadata(self.file_path(ino)) {
            Ok(m) => (m.len(), m.modified().ok()),
            Err(_) => (0, None),
        }
    }

    /// Durable contents of a file inode (empty when never synced).
    pub(crate) fn read_file(&self, ino: u64) -> io::Result<Vec<u8>> {
        match std::fs::read(self.file_path(ino)) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Vec::new()),
            other => other,
        }
    }

    /// Makes `data` the durable contents of `ino`: bytes past `floor` (the smallest size since the
    /// last sync) are cut off and zero-filled up to the new size, then the dirty pages written.
    pub(crate) fn write_file(
        &self,
        ino: u64,
        data: &[u8],
        floor: u64,
        dirty: impl Iterator<Item = (u64, u64)>,
    ) -> io::Result<()> {
        let out = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(false)
            .open(self.file_path(ino))?;
        out.set_len(floor)?;
        out.set_len(data.len() as u64)?;
        for (start, end) in dirty {
            let end = (end as usize).min(data.len());
            let start = (start as usize).min(end);
            out.write_all_at(&data[start..end], start as u64)?;
        }
        Ok(())
    }

    /// Writes `bytes` at `offset` into the durable contents of `ino` (a torn write).
    pub(crate) fn write_at(&self, ino: u64, offset: u64, bytes: &[u8]) -> io::Result<()> {
        OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(false)
            .open(self.file_path(ino))?
            .write_all_at(bytes, offset)
    }

    pub(crate) fn read_dir(&self, ino: u64) -> io::Result<Vec<Entry>> {
        let text = match std::fs::read_to_string(self.dir_path(ino)) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        text.lines()
            .map(|line| {
                parse_entry(line)
                    .ok_or_else(|| io::Error::other(format!("bad entry in dirs/{ino}: {line}")))
            })
            .collect()
    }

    /// Replaces the durable entries of directory `ino`, whole: written aside and renamed, so they
    /// are never half old and half new even if this process dies meanwhile.
    pub(crate) fn write_dir(&self, ino: u64, entries: &[Entry]) -> io::Result<()> {
        let mut text = String::new();
        for (name, child, kind, perm) in entries {
            let k = if *kind == Kind::Dir { "d" } else { "f" };
            text.push_str(&format!("{k} {child} {perm:o} {}\n", hex(name)));
        }
        let tmp = self.root.join("dirs").join(format!("{ino}.tmp"));
        let mut out = File::create(&tmp)?;
        out.write_all(text.as_bytes())?;
        drop(out);
        std::fs::rename(tmp, self.dir_path(ino))
    }

    /// Deletes what belongs to no inode `keep` accepts: inodes the power cut freed.
    pub(crate) fn free_unreachable(&self, keep: impl Fn(u64, Kind) -> bool) -> io::Result<usize> {
        let mut freed = 0;
        for (sub, kind) in [("files", Kind::File), ("dirs", Kind::Dir)] {
            for entry in std::fs::read_dir(self.root.join(sub))? {
                let entry = entry?;
                let wanted = entry
                    .file_name()
                    .to_str()
                    .and_then(|n| n.parse::<u64>().ok())
                    .is_some_and(|ino| keep(ino, kind));
                if !wanted {
                    std::fs::remove_file(entry.path())?;
                    freed += 1;
                }
            }
        }
        Ok(freed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_any_name() {
        let dir = tempfile::tempdir().unwrap();
        let b = Backing::open(dir.path()).unwrap();
        let odd = OsString::from_vec(vec![b'a', b' ', b'\n', 0xff]);
        let entries = vec![
            (OsString::from("x=1"), 5, Kind::Dir, 0o700),
            (odd, 6, Kind::File, 0o600),
        ];
        b.write_dir(3, &entries).unwrap();
        assert_eq!(b.read_dir(3).unwrap(), entries);
        assert!(b.read_dir(4).unwrap().is_empty());
    }

    #[test]
    fn a_shrink_since_the_last_sync_zeroes_the_old_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let b = Backing::open(dir.path()).unwrap();
        b.write_file(7, b"abcdef", 0, [(0, 6)].into_iter()).unwrap();
        // Truncated to 2 bytes, then extended to 8 with one byte written at 7.
        b.write_file(7, b"ab\0\0\0\0\0z", 2, [(7, 8)].into_iter())
            .unwrap();
        assert_eq!(b.read_file(7).unwrap(), b"ab\0\0\0\0\0z");
    }
}
