//! Files and secrets: only the service's own account may read the data folder.
//!
//! The process umask is 0o077 from the first line of `main`, so everything the service creates
//! (the data folder and its subfolders 0700, the catalog and SQLite's WAL/SHM files, the signing
//! key, the admin credentials, uploads, Parquet files 0600) is private from creation. An install
//! made before that is tightened at start; when that is impossible (the folder belongs to another
//! account, a read-only mount) the service refuses to start and says what to change.

use std::path::Path;

/// The token signing key's file in the data folder.
pub use rapid_actors::storage::KEY_FILE;

/// Sets the process umask so new files are 0600 and new folders 0700. Call before any thread
/// starts or any file is created.
pub fn private_umask() {
    #[cfg(unix)]
    // SAFETY: umask only swaps the process's file mode mask; it cannot fail or touch memory.
    unsafe {
        libc::umask(0o077);
    }
}

/// Creates the data folder (0700) or tightens an existing one and its secret files. Returns what
/// was changed, for the log; an error says what the operator must fix.
pub fn secure_data_dir(dir: &Path) -> Result<Vec<String>, String> {
    let mut changed = Vec::new();
    if !dir.exists() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create the data folder {}: {e}", dir.display()))?;
    }
    tighten(dir, 0o700, &mut changed)?;
    // The files that hold secrets, tightened to 0600 at start (their paths: storage/).
    for path in rapid_actors::storage::Storage::new(dir).secret_files() {
        if path.exists() {
            tighten(&path, 0o600, &mut changed)?;
        }
    }
    Ok(changed)
}

#[cfg(unix)]
fn tighten(path: &Path, mode: u32, changed: &mut Vec<String>) -> Result<(), String> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let meta =
        std::fs::metadata(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    if meta.uid() != me {
        return Err(format!(
            "{} belongs to user id {}, not to the account running rapid-rs (user id {me}): \
             start rapid-rs as its owner, or `chown -R` the data folder to this account",
            path.display(),
            meta.uid()
        ));
    }
    let current = meta.permissions().mode() & 0o777;
    if current & !mode == 0 {
        return Ok(());
    }
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).map_err(|e| {
        format!(
            "{} is mode {current:04o}, readable by other accounts, and could not be changed to \
             {mode:04o} ({e}): run `chmod {mode:o} {}` and start again",
            path.display(),
            path.display()
        )
    })?;
    changed.push(format!("{} {current:04o} -> {mode:04o}", path.display()));
    Ok(())
}

#[cfg(not(unix))]
fn tighten(_: &Path, _: u32, _: &mut Vec<String>) -> Result<(), String> {
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn a_loose_install_is_tightened_and_reported() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("data");
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        let catalog = dir.join("catalog.sqlite");
        std::fs::write(&catalog, b"x").unwrap();
        std::fs::set_permissions(&catalog, std::fs::Permissions::from_mode(0o644)).unwrap();
        let changed = secure_data_dir(&dir).unwrap();
        assert_eq!(changed.len(), 2, "{changed:?}");
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&catalog), 0o600);
        assert!(secure_data_dir(&dir).unwrap().is_empty());
    }

    #[test]
    fn a_stricter_mode_is_left_alone() {
        let root = tempfile::tempdir().unwrap();
        let key = root.path().join(KEY_FILE);
        std::fs::write(&key, b"k").unwrap();
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o400)).unwrap();
        std::fs::set_permissions(root.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        assert!(secure_data_dir(root.path()).unwrap().is_empty());
        assert_eq!(mode(&key), 0o400);
    }
}
