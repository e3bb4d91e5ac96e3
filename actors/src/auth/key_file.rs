//! The token signing key lives in its own file in the data folder (mode 0600), not in the catalog,
//! so a copy of the catalog (a backup) cannot forge tokens.
//!
//! Installs from before kept it in the catalog's `settings` table: at start it is moved to the
//! file (same key, so issued tokens stay valid), then deleted from the catalog with SQLite's
//! `secure_delete` and a WAL checkpoint, so its bytes do not linger in the catalog files.

use std::io::Write;
use std::path::Path;

use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine;

use super::secrets;
use crate::catalog::Catalog;
use crate::error::{Error, Result};

const KEY_BYTES: usize = 32;

/// The key: read from `path`; else moved there from the catalog; else created there.
pub fn load_or_create(catalog: &dyn Catalog, path: &Path) -> Result<Vec<u8>> {
    let in_catalog = catalog.legacy_signing_key()?;
    let key = match read(path)? {
        Some(key) => key,
        None => {
            let key = in_catalog
                .clone()
                .unwrap_or_else(|| secrets::random_bytes::<KEY_BYTES>().to_vec());
            create(path, &key)?
        }
    };
    if in_catalog.is_some() {
        catalog.erase_legacy_signing_key()?;
        tracing::info!(file = %path.display(), "moved the token signing key out of the catalog");
    }
    Ok(key)
}

/// Creates the key file with `key` unless one appeared meanwhile, and returns the key the file
/// holds. Nodes sharing one key file (`RAPID_KEY_FILE`) may start at the same moment: the file
/// is linked into place only if absent, so they all end up with the same key.
fn create(path: &Path, key: &[u8]) -> Result<Vec<u8>> {
    let tmp = path.with_extension(format!("new-{}", uuid::Uuid::new_v4().simple()));
    write_synced(&tmp, key)?;
    let linked = std::fs::hard_link(&tmp, path);
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Ok(()) => {
            sync_parent(path)?;
            Ok(key.to_vec())
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => read(path)?
            .ok_or_else(|| Error::internal(format!("the key file {} vanished", path.display()))),
        // A filesystem without hard links (some FUSE and network ones): write it in place by
        // rename, as before; nodes on such a filesystem must not make their first start at once.
        Err(_) => {
            write(path, key)?;
            Ok(key.to_vec())
        }
    }
}

/// Writes a new random key to `path` (rotation: tokens signed with the old key stop verifying).
pub fn replace(path: &Path) -> Result<()> {
    write(path, &secrets::random_bytes::<KEY_BYTES>())
}

fn read(path: &Path) -> Result<Option<Vec<u8>>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    match B64.decode(text.trim()) {
        Ok(key) if key.len() >= KEY_BYTES => Ok(Some(key)),
        _ => Err(Error::internal(format!(
            "the token signing key file {} is not a valid key; restore it from a backup, or delete \
             it to create a new key (every issued token then stops working)",
            path.display()
        ))),
    }
}

/// Writes the key durably and readable by the owner only: a temporary file, fsync, rename.
fn write(path: &Path, key: &[u8]) -> Result<()> {
    let tmp = path.with_extension("tmp");
    write_synced(&tmp, key)?;
    std::fs::rename(&tmp, path)?;
    sync_parent(path)
}

/// A new file at `path` holding the key, 0600, fsynced.
fn write_synced(path: &Path, key: &[u8]) -> Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path)?;
    writeln!(file, "{}", B64.encode(key))?;
    file.sync_all()?;
    Ok(())
}

fn sync_parent(path: &Path) -> Result<()> {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => Ok(std::fs::File::open(dir)?.sync_all()?),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::sqlite::SqliteCatalog;

    fn key_in_catalog(catalog: &dyn Catalog) -> Option<Vec<u8>> {
        catalog.legacy_signing_key().unwrap()
    }

    #[test]
    fn a_key_in_the_catalog_moves_to_the_file_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let catalog = SqliteCatalog::open(dir.path()).unwrap();
        let old = vec![42u8; 32];
        catalog.store_legacy_signing_key(&old).unwrap();
        let path = dir.path().join("token-signing.key");
        assert_eq!(load_or_create(&catalog, &path).unwrap(), old);
        assert_eq!(key_in_catalog(&catalog), None);
        assert_eq!(load_or_create(&catalog, &path).unwrap(), old);
        let catalog_bytes = std::fs::read(dir.path().join("catalog.sqlite")).unwrap();
        assert!(
            !catalog_bytes.windows(32).any(|w| w == old.as_slice()),
            "the deleted key must not linger in the catalog file"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

    #[test]
    fn a_new_install_creates_a_key_once() {
        let dir = tempfile::tempdir().unwrap();
        let catalog = SqliteCatalog::open(dir.path()).unwrap();
        let path = dir.path().join("k");
        let first = load_or_create(&catalog, &path).unwrap();
        assert_eq!(first.len(), 32);
        assert_eq!(load_or_create(&catalog, &path).unwrap(), first);
        std::fs::write(&path, "not base64 !!").unwrap();
        assert!(load_or_create(&catalog, &path).is_err());
    }

    #[test]
    fn nodes_starting_together_on_one_key_file_agree_on_the_key() {
        let dir = tempfile::tempdir().unwrap();
        let shared = dir.path().join("shared.key");
        let nodes: Vec<_> = (0..8)
            .map(|n| {
                let node_dir = dir.path().join(format!("node{n}"));
                let path = shared.clone();
                std::thread::spawn(move || {
                    let catalog = SqliteCatalog::open(&node_dir).unwrap();
                    load_or_create(&catalog, &path).unwrap()
                })
            })
            .collect();
        let keys: Vec<Vec<u8>> = nodes.into_iter().map(|t| t.join().unwrap()).collect();
        assert!(
            keys.iter().all(|k| k == &keys[0]),
            "every node has the same key"
        );
        assert_eq!(
            read(&shared).unwrap().unwrap(),
            keys[0],
            "the one in the file"
        );
        let leftovers: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().contains(".new-"))
            .collect();
        assert!(leftovers.is_empty(), "no temporary key files left");
    }
}
