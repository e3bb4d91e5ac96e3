//! Mounting: the durable state is loaded, and what no durable name reaches is freed (as fsck would).

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::io;
use std::path::Path;

use super::{dir_node, new_attr, Body, FileBody, Kind, Model, Node, ROOT};
use crate::backing::Backing;

impl Model {
    /// Loads the durable state of `backing` (created empty if new) and frees unreachable inodes.
    pub(crate) fn load(backing: &Path) -> io::Result<Model> {
        let mut model = Model {
            backing: Backing::open(backing)?,
            nodes: HashMap::new(),
            next_ino: ROOT + 1,
            last_write: None,
        };
        let mut root = new_attr(ROOT, Kind::Dir, 0o755, (0, 0));
        root.nlink = 2;
        model.nodes.insert(ROOT, dir_node(root, ROOT));
        let mut queue = VecDeque::from([(ROOT, model.backing.read_dir(ROOT)?)]);
        while let Some((dir, entries)) = queue.pop_front() {
            for (name, ino, kind, perm) in entries {
                match (kind, model.nodes.get_mut(&ino)) {
                    // A second name of a file: a hard link.
                    (Kind::File, Some(n)) if n.attr.kind == Kind::File => n.attr.nlink += 1,
                    // A directory reached twice (or a kind mismatch): dropped, as fsck would.
                    (_, Some(_)) => continue,
                    (Kind::Dir, None) => {
                        let mut attr = new_attr(ino, Kind::Dir, perm, (0, 0));
                        attr.nlink = 2;
                        model.nodes.insert(ino, dir_node(attr, dir));
                        queue.push_back((ino, model.backing.read_dir(ino)?));
                    }
                    (Kind::File, None) => {
                        let mut attr = new_attr(ino, Kind::File, perm, (0, 0));
                        let (size, mtime) = model.backing.file_meta(ino);
                        attr.size = size;
                        attr.mtime = mtime.unwrap_or(attr.mtime);
                        let body = Body::File(FileBody {
                            data: None,
                            size,
                            dirty: BTreeSet::new(),
                            floor: size,
                        });
                        let node = Node {
                            attr,
                            body,
                            opens: 0,
                        };
                        model.nodes.insert(ino, node);
                    }
                }
                if let Ok(d) = model.dir_mut(dir) {
                    d.entries.insert(name, ino);
                }
            }
        }
        model.next_ino = model.nodes.keys().max().copied().unwrap_or(ROOT) + 1;
        let nodes = &model.nodes;
        model
            .backing
            .free_unreachable(|ino, kind| nodes.get(&ino).is_some_and(|n| n.attr.kind == kind))?;
        model.persist_dir(ROOT)?;
        Ok(model)
    }
}
