//! One process at a time changes a data folder: the service holds an exclusive `flock` on
//! `{data-dir}/rapid-rs.lock` while it runs, and admin commands that need it stopped take the same
//! lock (so the service cannot start under them either). The kernel drops the lock when the
//! process ends, however it ends.

use std::fs::File;
use std::path::Path;

/// Held for as long as this process owns the data folder.
#[derive(Debug)]
pub struct DataLock {
    _file: File,
}

/// Why the lock was not taken.
#[derive(Debug)]
pub enum LockError {
    /// Another process (the service, or an admin command) holds it.
    Busy,
    Io(std::io::Error),
}

impl std::fmt::Display for LockError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LockError::Busy => write!(
                f,
                "another rapid-rs process (the service or an admin command) is using this data folder"
            ),
            LockError::Io(e) => write!(f, "cannot lock the data folder: {e}"),
        }
    }
}

impl DataLock {
    /// Takes the lock at once or fails with [`LockError::Busy`]. The folder must exist.
    pub fn acquire(data_dir: &Path) -> Result<DataLock, LockError> {
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(rapid_actors::storage::Storage::new(data_dir).lock_file())
            .map_err(LockError::Io)?;
        #[cfg(unix)]
        {
            use std::os::unix::io::AsRawFd;
            // SAFETY: flock on a descriptor we own; it has no memory effects.
            let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
            if rc != 0 {
                let e = std::io::Error::last_os_error();
                return Err(if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
                    LockError::Busy
                } else {
                    LockError::Io(e)
                });
            }
        }
        Ok(DataLock { _file: file })
    }
}
