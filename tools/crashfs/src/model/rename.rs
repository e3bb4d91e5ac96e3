//! rename(2) on the current state (the durable one changes only when the folders are synced).

use std::ffi::OsStr;

use super::{Body, Errno, Kind, Model, ROOT};

impl Model {
    fn is_ancestor(&self, maybe_ancestor: u64, mut ino: u64) -> bool {
        loop {
            if ino == maybe_ancestor {
                return true;
            }
            match self.dir(ino) {
                Ok(d) if ino != ROOT => ino = d.parent,
                _ => return false,
            }
        }
    }

    pub(crate) fn rename(
        &mut self,
        parent: u64,
        name: &OsStr,
        new_parent: u64,
        new_name: &OsStr,
        no_replace: bool,
    ) -> Result<(), Errno> {
        let ino = *self.dir(parent)?.entries.get(name).ok_or(libc::ENOENT)?;
        let kind = self.node(ino)?.attr.kind;
        if new_name.len() > 255 {
            return Err(libc::ENAMETOOLONG);
        }
        if kind == Kind::Dir && self.is_ancestor(ino, new_parent) {
            return Err(libc::EINVAL);
        }
        if let Some(&target) = self.dir(new_parent)?.entries.get(new_name) {
            if target == ino {
                return Ok(());
            }
            if no_replace {
                return Err(libc::EEXIST);
            }
            match (kind, self.node(target)?.attr.kind) {
                (Kind::File, Kind::Dir) => return Err(libc::EISDIR),
                (Kind::Dir, Kind::File) => return Err(libc::ENOTDIR),
                (Kind::Dir, Kind::Dir) if !self.dir(target)?.entries.is_empty() => {
                    return Err(libc::ENOTEMPTY)
                }
                _ => {}
            }
            self.dir_mut(new_parent)?.entries.remove(new_name);
            self.unlinked(target);
        }
        self.dir_mut(parent)?.entries.remove(name);
        self.dir_mut(new_parent)?
            .entries
            .insert(new_name.to_os_string(), ino);
        if let Body::Dir(d) = &mut self.node_mut(ino)?.body {
            d.parent = new_parent;
        }
        self.touch(parent);
        self.touch(new_parent);
        Ok(())
    }
}
