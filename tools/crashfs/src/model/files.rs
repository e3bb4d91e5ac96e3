//! File contents: reads and writes in memory, made durable page by page at fsync, torn at a cut.

use std::io;

use super::{Body, Errno, FileBody, LastWrite, Model, Node, PAGE};

impl Model {
    /// A file's bytes, read from the backing folder on first use.
    fn file_mut(&mut self, ino: u64) -> Result<&mut FileBody, Errno> {
        let Some(node) = self.nodes.get_mut(&ino) else {
            return Err(libc::ENOENT);
        };
        let Body::File(f) = &mut node.body else {
            return Err(libc::EISDIR);
        };
        if f.data.is_none() {
            let mut bytes = self.backing.read_file(ino).map_err(|_| libc::EIO)?;
            bytes.resize(f.size as usize, 0);
            f.data = Some(bytes);
        }
        Ok(f)
    }

    pub(crate) fn read(&mut self, ino: u64, offset: u64, size: u32) -> Result<Vec<u8>, Errno> {
        let f = self.file_mut(ino)?;
        let data = f.data.as_deref().unwrap_or_default();
        let start = (offset as usize).min(data.len());
        let end = (start + size as usize).min(data.len());
        Ok(data[start..end].to_vec())
    }

    pub(crate) fn write(&mut self, ino: u64, offset: u64, bytes: &[u8]) -> Result<u32, Errno> {
        let f = self.file_mut(ino)?;
        let data = f.data.get_or_insert_with(Vec::new);
        let end = offset as usize + bytes.len();
        if data.len() < end {
            data.resize(end, 0);
        }
        data[offset as usize..end].copy_from_slice(bytes);
        f.size = data.len() as u64;
        if !bytes.is_empty() {
            f.dirty.extend(offset / PAGE..=(end as u64 - 1) / PAGE);
        }
        let size = f.size;
        let node = self.node_mut(ino)?;
        node.attr.size = size;
        self.touch(ino);
        self.last_write = Some(LastWrite {
            ino,
            offset,
            data: bytes.to_vec(),
        });
        Ok(bytes.len() as u32)
    }

    pub(crate) fn set_size(&mut self, ino: u64, size: u64) -> Result<(), Errno> {
        let f = self.file_mut(ino)?;
        let data = f.data.get_or_insert_with(Vec::new);
        data.resize(size as usize, 0);
        f.size = size;
        f.floor = f.floor.min(size);
        self.node_mut(ino)?.attr.size = size;
        self.touch(ino);
        Ok(())
    }

    pub(super) fn persist_file(&mut self, ino: u64) -> io::Result<()> {
        self.file_mut(ino).map_err(io::Error::from_raw_os_error)?; // loaded
        let Some(Node {
            body: Body::File(f),
            ..
        }) = self.nodes.get_mut(&ino)
        else {
            return Err(io::Error::from_raw_os_error(libc::EISDIR));
        };
        let data = f.data.as_deref().unwrap_or_default();
        let pages = f.dirty.iter().map(|p| (p * PAGE, (p + 1) * PAGE));
        self.backing.write_file(ino, data, f.floor, pages)?;
        f.dirty.clear();
        f.floor = f.size;
        if self.last_write.as_ref().is_some_and(|w| w.ino == ino) {
            self.last_write = None;
        }
        Ok(())
    }

    /// The power cut tears the last unsynced write: a leading part of it reaches the disk.
    pub(crate) fn tear_last_write(
        &self,
        keep_fraction: f64,
    ) -> io::Result<Option<(LastWrite, usize)>> {
        let Some(w) = self.last_write.clone() else {
            return Ok(None);
        };
        let keep = ((w.data.len() as f64) * keep_fraction.clamp(0.0, 1.0)) as usize;
        self.backing.write_at(w.ino, w.offset, &w.data[..keep])?;
        Ok(Some((w, keep)))
    }
}
