//! Read leases on data files. A query leases the files of the manifest it read; a commit that
//! replaces files retires them, and a retired file is deleted only once no lease holds it. So a
//! query running while an OVERWRITE commits reads the old files to the end, and the data folder
//! still ends up holding exactly the manifest's files.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use super::ObjectStorage;

#[derive(Debug, Default)]
struct State {
    counts: HashMap<String, usize>,
    retired: HashSet<String>,
}

#[derive(Debug, Clone)]
pub struct Leases {
    objects: Arc<dyn ObjectStorage>,
    state: Arc<Mutex<State>>,
}

/// Held for as long as the leased files are being read.
#[derive(Debug)]
pub struct LeaseGuard {
    leases: Leases,
    paths: Vec<String>,
}

impl Leases {
    pub fn new(objects: Arc<dyn ObjectStorage>) -> Leases {
        Leases {
            objects,
            state: Arc::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A poisoned lock still holds consistent counts: every update is a single step.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Leases `paths` (object keys).
    pub fn lease(&self, paths: Vec<String>) -> LeaseGuard {
        let mut state = self.lock();
        for p in &paths {
            *state.counts.entry(p.clone()).or_default() += 1;
        }
        LeaseGuard {
            leases: self.clone(),
            paths,
        }
    }

    /// Whether a query of this process holds a lease on `path` (a retired file waiting for its
    /// readers is no longer in the catalog, and a sweep must leave it to them).
    pub fn held(&self, path: &str) -> bool {
        self.lock().counts.contains_key(path)
    }

    /// Deletes `path` now, or when its last lease ends.
    pub fn retire(&self, path: &str) {
        let mut state = self.lock();
        if state.counts.contains_key(path) {
            state.retired.insert(path.to_string());
        } else {
            drop(state);
            self.delete(path);
        }
    }

    fn delete(&self, path: &str) {
        if let Err(e) = self.objects.delete(path) {
            tracing::warn!(path, error = %e, "could not delete a retired file; start-up will");
        }
    }
}

impl Drop for LeaseGuard {
    fn drop(&mut self) {
        let mut to_delete = Vec::new();
        {
            let mut state = self.leases.lock();
            for p in &self.paths {
                if let Some(n) = state.counts.get_mut(p) {
                    *n -= 1;
                    if *n == 0 {
                        state.counts.remove(p);
                        if state.retired.remove(p) {
                            to_delete.push(p.clone());
                        }
                    }
                }
            }
        }
        for p in to_delete {
            self.leases.delete(&p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_retired_file_lives_until_its_last_lease_ends() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a"), b"x").unwrap();
        std::fs::write(dir.path().join("b"), b"x").unwrap();
        let leases = Leases::new(Arc::new(super::super::LocalFolder::new(dir.path())));
        let first = leases.lease(vec!["a".into()]);
        let second = leases.lease(vec!["a".into()]);
        leases.retire("a");
        leases.retire("b");
        assert!(!dir.path().join("b").exists(), "unleased: deleted at once");
        drop(first);
        assert!(dir.path().join("a").exists(), "still leased once");
        drop(second);
        assert!(!dir.path().join("a").exists());
    }
}
