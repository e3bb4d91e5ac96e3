//! The filesystem as two states: the current one, in this process's memory (what programs see),
//! and the durable one, in the backing folder (what a power cut leaves).
//!
//! Only two calls move state from the first to the second:
//! - `fsync` of a file makes its current contents and size durable (under its inode, not under
//!   any name);
//! - `fsync` of a directory makes its current entries durable: each name and the inode it points
//!   to, whether that inode's contents were ever synced or not.
//!
//! Everything else (writes, creates, renames, unlinks, mkdir, truncates) changes only the current
//! state. A power cut is the end of this process: the next mount loads the durable state, keeps
//! what is reachable from the root through durable entries, and frees the rest (as fsck would).
//! A file reachable that way has its last synced contents, or is empty if it never was synced.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ffi::{OsStr, OsString};
use std::io;
use std::time::SystemTime;

use crate::backing::{Backing, Entry};
pub(crate) use crate::kind::Kind;

mod files;
mod load;
mod rename;

pub(crate) const ROOT: u64 = 1;
const PAGE: u64 = 4096;

/// An error for the kernel: a positive errno.
pub(crate) type Errno = i32;

/// A directory's entries: inode, kind, name.
pub(crate) type Listing = Vec<(u64, Kind, OsString)>;

#[derive(Debug, Clone)]
pub(crate) struct Attr {
    pub ino: u64,
    pub kind: Kind,
    pub size: u64,
    pub perm: u16,
    pub nlink: u32,
    pub uid: u32,
    pub gid: u32,
    pub atime: SystemTime,
    pub mtime: SystemTime,
    pub ctime: SystemTime,
}

#[derive(Debug)]
struct FileBody {
    /// None until first used: then the durable contents, read from the backing folder.
    data: Option<Vec<u8>>,
    size: u64,
    /// Pages written since the last sync.
    dirty: BTreeSet<u64>,
    /// The smallest size since the last sync: bytes past it are not the durable ones any more.
    floor: u64,
}

#[derive(Debug)]
struct DirBody {
    entries: BTreeMap<OsString, u64>,
    parent: u64,
}

#[derive(Debug)]
enum Body {
    File(FileBody),
    Dir(DirBody),
}

#[derive(Debug)]
struct Node {
    attr: Attr,
    body: Body,
    opens: u32,
}

/// The last write not yet synced: what a power cut may tear.
#[derive(Debug, Clone)]
pub(crate) struct LastWrite {
    pub ino: u64,
    pub offset: u64,
    pub data: Vec<u8>,
}

pub(crate) struct Model {
    backing: Backing,
    nodes: HashMap<u64, Node>,
    next_ino: u64,
    last_write: Option<LastWrite>,
}

fn dir_node(attr: Attr, parent: u64) -> Node {
    Node {
        attr,
        body: Body::Dir(DirBody {
            entries: BTreeMap::new(),
            parent,
        }),
        opens: 0,
    }
}

fn new_attr(ino: u64, kind: Kind, perm: u16, (uid, gid): (u32, u32)) -> Attr {
    let now = SystemTime::now();
    Attr {
        ino,
        kind,
        size: 0,
        perm,
        nlink: 1,
        uid,
        gid,
        atime: now,
        mtime: now,
        ctime: now,
    }
}

impl Model {
    fn node(&self, ino: u64) -> Result<&Node, Errno> {
        self.nodes.get(&ino).ok_or(libc::ENOENT)
    }

    fn node_mut(&mut self, ino: u64) -> Result<&mut Node, Errno> {
        self.nodes.get_mut(&ino).ok_or(libc::ENOENT)
    }

    fn dir(&self, ino: u64) -> Result<&DirBody, Errno> {
        match &self.node(ino)?.body {
            Body::Dir(d) => Ok(d),
            Body::File(_) => Err(libc::ENOTDIR),
        }
    }

    fn dir_mut(&mut self, ino: u64) -> Result<&mut DirBody, Errno> {
        match &mut self.node_mut(ino)?.body {
            Body::Dir(d) => Ok(d),
            Body::File(_) => Err(libc::ENOTDIR),
        }
    }

    pub(crate) fn attr(&self, ino: u64) -> Result<Attr, Errno> {
        Ok(self.node(ino)?.attr.clone())
    }

    pub(crate) fn lookup(&self, parent: u64, name: &OsStr) -> Result<Attr, Errno> {
        let ino = *self.dir(parent)?.entries.get(name).ok_or(libc::ENOENT)?;
        self.attr(ino)
    }

    /// The entries of a directory as they are now (a directory handle reads this copy).
    pub(crate) fn list(&self, ino: u64) -> Result<Listing, Errno> {
        let dir = self.dir(ino)?;
        let mut out = vec![
            (ino, Kind::Dir, OsString::from(".")),
            (dir.parent, Kind::Dir, OsString::from("..")),
        ];
        for (name, child) in &dir.entries {
            out.push((*child, self.node(*child)?.attr.kind, name.clone()));
        }
        Ok(out)
    }

    fn add_entry(
        &mut self,
        parent: u64,
        name: &OsStr,
        kind: Kind,
        perm: u16,
        ids: (u32, u32),
    ) -> Result<Attr, Errno> {
        if name.len() > 255 {
            return Err(libc::ENAMETOOLONG);
        }
        if self.dir(parent)?.entries.contains_key(name) {
            return Err(libc::EEXIST);
        }
        let ino = self.next_ino;
        self.next_ino += 1;
        let mut attr = new_attr(ino, kind, perm, ids);
        let body = match kind {
            Kind::File => Body::File(FileBody {
                data: Some(Vec::new()),
                size: 0,
                dirty: BTreeSet::new(),
                floor: 0,
            }),
            Kind::Dir => {
                attr.nlink = 2;
                Body::Dir(DirBody {
                    entries: BTreeMap::new(),
                    parent,
                })
            }
        };
        self.nodes.insert(
            ino,
            Node {
                attr: attr.clone(),
                body,
                opens: 0,
            },
        );
        self.dir_mut(parent)?
            .entries
            .insert(name.to_os_string(), ino);
        self.touch(parent);
        Ok(attr)
    }

    pub(crate) fn create(
        &mut self,
        parent: u64,
        name: &OsStr,
        perm: u16,
        ids: (u32, u32),
    ) -> Result<Attr, Errno> {
        self.add_entry(parent, name, Kind::File, perm, ids)
    }

    pub(crate) fn mkdir(
        &mut self,
        parent: u64,
        name: &OsStr,
        perm: u16,
        ids: (u32, u32),
    ) -> Result<Attr, Errno> {
        self.add_entry(parent, name, Kind::Dir, perm, ids)
    }

    fn touch(&mut self, ino: u64) {
        if let Some(n) = self.nodes.get_mut(&ino) {
            let now = SystemTime::now();
            n.attr.mtime = now;
            n.attr.ctime = now;
        }
    }

    /// Drops one name of `ino`; its memory goes once no name and no open handle is left.
    fn unlinked(&mut self, ino: u64) {
        if let Some(n) = self.nodes.get_mut(&ino) {
            n.attr.nlink = n.attr.nlink.saturating_sub(1);
            n.attr.ctime = SystemTime::now();
            self.release_if_gone(ino);
        }
    }

    fn release_if_gone(&mut self, ino: u64) {
        if let Some(n) = self.nodes.get_mut(&ino) {
            if let Body::File(f) = &mut n.body {
                if n.attr.nlink == 0 && n.opens == 0 {
                    // The inode number stays known (the kernel may still ask), its bytes go.
                    f.data = Some(Vec::new());
                    f.dirty.clear();
                }
            }
        }
    }

    pub(crate) fn unlink(&mut self, parent: u64, name: &OsStr) -> Result<(), Errno> {
        let ino = *self.dir(parent)?.entries.get(name).ok_or(libc::ENOENT)?;
        if self.node(ino)?.attr.kind == Kind::Dir {
            return Err(libc::EISDIR);
        }
        self.dir_mut(parent)?.entries.remove(name);
        self.touch(parent);
        self.unlinked(ino);
        Ok(())
    }

    pub(crate) fn rmdir(&mut self, parent: u64, name: &OsStr) -> Result<(), Errno> {
        let ino = *self.dir(parent)?.entries.get(name).ok_or(libc::ENOENT)?;
        if !self.dir(ino)?.entries.is_empty() {
            return Err(libc::ENOTEMPTY);
        }
        self.dir_mut(parent)?.entries.remove(name);
        self.touch(parent);
        if let Some(n) = self.nodes.get_mut(&ino) {
            n.attr.nlink = 0;
        }
        Ok(())
    }

    pub(crate) fn set_attr(
        &mut self,
        ino: u64,
        perm: Option<u16>,
        uid: Option<u32>,
        gid: Option<u32>,
        times: (Option<SystemTime>, Option<SystemTime>),
    ) -> Result<(), Errno> {
        let attr = &mut self.node_mut(ino)?.attr;
        if let Some(p) = perm {
            attr.perm = p;
        }
        if let Some(u) = uid {
            attr.uid = u;
        }
        if let Some(g) = gid {
            attr.gid = g;
        }
        if let Some(t) = times.0 {
            attr.atime = t;
        }
        if let Some(t) = times.1 {
            attr.mtime = t;
        }
        attr.ctime = SystemTime::now();
        Ok(())
    }

    pub(crate) fn opened(&mut self, ino: u64) -> Result<(), Errno> {
        self.node_mut(ino)?.opens += 1;
        Ok(())
    }

    pub(crate) fn released(&mut self, ino: u64) {
        if let Some(n) = self.nodes.get_mut(&ino) {
            n.opens = n.opens.saturating_sub(1);
        }
        self.release_if_gone(ino);
    }

    /// fsync: a file's contents, or a directory's entries, become durable.
    pub(crate) fn sync(&mut self, ino: u64) -> io::Result<()> {
        let kind = self.attr(ino).map_err(io::Error::from_raw_os_error)?.kind;
        match kind {
            Kind::Dir => self.persist_dir(ino),
            Kind::File => self.persist_file(ino),
        }
    }

    fn persist_dir(&self, ino: u64) -> io::Result<()> {
        let dir = self.dir(ino).map_err(io::Error::from_raw_os_error)?;
        let mut entries: Vec<Entry> = Vec::with_capacity(dir.entries.len());
        for (name, child) in &dir.entries {
            let attr = &self
                .node(*child)
                .map_err(io::Error::from_raw_os_error)?
                .attr;
            entries.push((name.clone(), *child, attr.kind, attr.perm));
        }
        self.backing.write_dir(ino, &entries)
    }

    /// Every inode number reachable now (for tests).
    #[cfg(test)]
    pub(crate) fn reachable(&self) -> std::collections::HashSet<u64> {
        let mut seen = std::collections::HashSet::from([ROOT]);
        let mut queue = vec![ROOT];
        while let Some(d) = queue.pop() {
            if let Ok(dir) = self.dir(d) {
                for child in dir.entries.values() {
                    if seen.insert(*child) {
                        queue.push(*child);
                    }
                }
            }
        }
        seen
    }
}
