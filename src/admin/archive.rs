//! Backups as one `.tar` file: the backup is made into a folder beside the archive, packed,
//! fsynced and renamed into place (so a `.tar` that exists is whole), and unpacked beside the data
//! folder for a restore.

use std::fs::File;
use std::path::{Path, PathBuf};

use rapid_actors::admin::backup::{self, BackupSummary};

/// Whether DEST or SRC names an archive rather than a folder.
pub fn is_archive(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "tar")
}

fn beside(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    path.with_file_name(name)
}

fn io(what: &str, path: &Path, e: std::io::Error) -> String {
    format!("{what} {}: {e}", path.display())
}

/// Backs `data_dir` up into the archive `dest` (which must not exist).
pub fn backup_to_archive(data_dir: &Path, dest: &Path) -> Result<BackupSummary, String> {
    if dest.exists() {
        return Err(format!("{} exists already", dest.display()));
    }
    let folder = beside(dest, ".partial");
    if folder.exists() {
        return Err(format!(
            "{} is left from an earlier backup that did not finish: remove it first",
            folder.display()
        ));
    }
    let summary = backup::backup(data_dir, &folder).map_err(|e| e.to_string())?;
    let tmp = beside(dest, ".tmp");
    let file = File::create(&tmp).map_err(|e| io("creating", &tmp, e))?;
    let mut builder = tar::Builder::new(file);
    builder
        .append_dir_all(".", &folder)
        .map_err(|e| io("packing", &folder, e))?;
    let file = builder.into_inner().map_err(|e| io("writing", &tmp, e))?;
    file.sync_all().map_err(|e| io("syncing", &tmp, e))?;
    std::fs::rename(&tmp, dest).map_err(|e| io("renaming", &tmp, e))?;
    if let Some(parent) = dest.parent().filter(|p| !p.as_os_str().is_empty()) {
        File::open(parent)
            .and_then(|d| d.sync_all())
            .map_err(|e| io("syncing", parent, e))?;
    }
    std::fs::remove_dir_all(&folder).map_err(|e| io("removing", &folder, e))?;
    Ok(summary)
}

/// Unpacks the archive `src` beside `data_dir`, restores from it, removes the unpacked copy.
pub fn restore_from_archive(src: &Path, data_dir: &Path) -> Result<usize, String> {
    let folder = beside(data_dir, ".unpacked");
    if folder.exists() {
        std::fs::remove_dir_all(&folder).map_err(|e| io("removing", &folder, e))?;
    }
    let file = File::open(src).map_err(|e| io("opening", src, e))?;
    tar::Archive::new(file)
        .unpack(&folder)
        .map_err(|e| io("unpacking", src, e))?;
    let restored = backup::restore(&folder, data_dir).map_err(|e| e.to_string());
    let _ = std::fs::remove_dir_all(&folder);
    restored
}
