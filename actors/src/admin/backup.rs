//! Online backup and restore.
//!
//! Backup, while the service runs:
//! 1. the catalog is copied with SQLite's online backup API in one step: one read transaction,
//!    so the copy is one committed state, and the service's writers (WAL) are not blocked;
//! 2. every file that copy lists is copied. Data and raw files are immutable once in place (a
//!    commit writes new names; OVERWRITE and deletions remove files only after their
//!    transaction), so a file that can be opened is copied whole. A file the copy lists may
//!    be gone by then, removed by a commit that came after the catalog copy: the catalog is then
//!    copied again and the missing files fetched, until one catalog copy has all its files;
//! 3. files copied for an earlier catalog copy but not listed in the last one are removed, so the
//!    backup holds exactly the last copy's files; everything is fsynced; `backup.json` last.
//!
//! Files outside the manifest (uploads still committing) are never copied, so a restored store
//! holds exactly the uploads whose commit came before the catalog copy. The signing key and the
//! admin credentials file are left out: a restore starts with a new key (tokens issued before
//! stop working; client secrets and user passwords are in the catalog and keep working).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::{listed_files, ListedFile};
use crate::audit::store::{SqliteAudit, AUDIT_FILE};
use crate::catalog::sqlite::SqliteCatalog;
use crate::error::{Error, Result};
use crate::storage::{
    is_missing, keys, Durability, LocalFolder, ObjectStorage, StagedObject, Storage, CATALOG_FILE,
};

/// Rounds of "copy the catalog, copy its files" before giving up (a store rewritten faster than
/// it can be copied).
const ROUNDS: usize = 20;

/// What a backup holds.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BackupSummary {
    pub files: usize,
    pub bytes: u64,
    pub rounds: usize,
    pub created_at: String,
}

/// Copies the store in `data_dir` (running or not) into `dest`, a new or empty folder.
pub fn backup(data_dir: &Path, dest: &Path) -> Result<BackupSummary> {
    prepare_empty(dest)?;
    let source = SqliteCatalog::open_existing(data_dir)?;
    let objects = Storage::new(data_dir).objects().clone();
    let (copy, folder) = (Storage::new(dest), LocalFolder::new(dest));
    let mut copied: HashSet<String> = HashSet::new();
    for round in 1..=ROUNDS {
        source.copy_to(&copy.catalog_file())?;
        let listed = listed_files(&SqliteCatalog::open_existing(dest)?)?;
        let mut missing = 0;
        for file in &listed {
            if copied.contains(&file.rel) {
                continue;
            }
            match copy_object(objects.as_ref(), &file.rel, &folder.file(&file.rel)?) {
                Ok(()) => {
                    copied.insert(file.rel.clone());
                }
                Err(e) if is_missing(&e) => missing += 1,
                Err(e) => return Err(e.context(format!("copying {}", file.rel))),
            }
        }
        if missing == 0 {
            copy_audit_log(data_dir, dest)?;
            return finish(dest, &listed, &copied, round);
        }
        tracing::info!(
            round,
            missing,
            "files removed during the backup: copying the catalog again"
        );
    }
    Err(Error::internal(format!(
        "the store changed faster than it could be copied ({ROUNDS} rounds); try again when it is quieter"
    )))
}

/// The audit log as one committed state, when the folder has one (it is written while the
/// service runs; rows after the copy are not in the backup, as commits after the catalog copy).
fn copy_audit_log(data_dir: &Path, dest: &Path) -> Result<()> {
    let file = data_dir.join(AUDIT_FILE);
    if !file.is_file() {
        return Ok(());
    }
    SqliteAudit::open(&file, Durability::Full)?.copy_to(&dest.join(AUDIT_FILE))
}

fn finish(
    dest: &Path,
    listed: &[ListedFile],
    copied: &HashSet<String>,
    rounds: usize,
) -> Result<BackupSummary> {
    let keep: HashSet<&str> = listed.iter().map(|f| f.rel.as_str()).collect();
    let folder = LocalFolder::new(dest);
    for rel in copied.iter().filter(|r| !keep.contains(r.as_str())) {
        folder.delete(rel)?;
    }
    let mut dirs: HashSet<PathBuf> = HashSet::new();
    for file in listed {
        let path = folder.file(&file.rel)?;
        std::fs::File::open(&path)?.sync_all()?;
        let mut dir = path.parent();
        while let Some(d) = dir.filter(|d| d.starts_with(dest)) {
            dirs.insert(d.to_path_buf());
            dir = d.parent();
        }
    }
    for d in dirs {
        std::fs::File::open(&d)?.sync_all()?;
    }
    let summary = BackupSummary {
        files: listed.len(),
        bytes: listed.iter().map(|f| f.bytes).sum(),
        rounds,
        created_at: crate::catalog::now_text(),
    };
    let body = serde_json::json!({"rapid_rs_backup": 1, "summary": summary});
    let summary_file = Storage::new(dest).backup_summary_file();
    std::fs::write(&summary_file, format!("{body:#}\n"))?;
    std::fs::File::open(&summary_file)?.sync_all()?;
    std::fs::File::open(dest)?.sync_all()?;
    Ok(summary)
}

/// Copies the object `key` into the local file `to` (NotFound when the object is gone).
fn copy_object(from: &dyn ObjectStorage, key: &str, to: &Path) -> Result<()> {
    let mut src = from.open(key)?;
    copy_into(&mut src, to)?;
    Ok(())
}

fn copy_file(from: &Path, to: &Path) -> std::io::Result<()> {
    copy_into(&mut std::fs::File::open(from)?, to)
}

fn copy_into(src: &mut impl std::io::Read, to: &Path) -> std::io::Result<()> {
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let mut out = std::fs::File::create(to)?;
    std::io::copy(src, &mut out)?;
    Ok(())
}

fn prepare_empty(dest: &Path) -> Result<()> {
    if dest.exists() {
        let mut entries = std::fs::read_dir(dest)?;
        if entries.next().is_some() {
            return Err(Error::conflict(format!(
                "{} is not empty: back up into a new or empty folder",
                dest.display()
            )));
        }
    } else {
        std::fs::create_dir_all(dest)?;
    }
    Ok(())
}

/// Restores a backup made by [`backup`] into `data_dir` (the service stopped): the folder must be
/// new or hold no catalog and no data (a signing key and credentials file there are kept).
/// The backup is checked first: every file its catalog lists, with its recorded size.
pub fn restore(src: &Path, data_dir: &Path) -> Result<usize> {
    let backup = Storage::new(src);
    if !backup.backup_summary_file().is_file() || !backup.catalog_file().is_file() {
        return Err(Error::invalid(format!(
            "{} is not a finished rapid-rs backup (no backup.json or catalog.sqlite)",
            src.display()
        )));
    }
    let listed = listed_files(&SqliteCatalog::open_existing(src)?)?;
    for f in &listed {
        if backup.objects().size(&f.rel).is_err() {
            return Err(Error::invalid(format!("the backup lacks {}", f.rel)));
        }
    }
    std::fs::create_dir_all(data_dir)?;
    let target = Storage::new(data_dir);
    let taken = std::iter::once(CATALOG_FILE)
        .filter(|_| target.catalog_file().exists())
        .chain(
            keys::LISTED_PREFIXES
                .into_iter()
                .filter(|p| target.objects().list(p).map_or(true, |o| !o.is_empty())),
        )
        .next();
    if let Some(name) = taken {
        return Err(Error::conflict(format!(
            "{} already holds a store ({name}): restore into a new folder, or move it away first",
            data_dir.display()
        )));
    }
    restore_objects(backup.objects().as_ref(), &listed, &target)?;
    // The audit log before the catalog, for the same reason; a folder's own log is kept.
    let audit = (src.join(AUDIT_FILE), data_dir.join(AUDIT_FILE));
    if audit.0.is_file() && !audit.1.exists() {
        copy_file(&audit.0, &audit.1)?;
        std::fs::File::open(&audit.1)?.sync_all()?;
    }
    // The catalog last: a restore cut short leaves no catalog, so it cannot start half-restored.
    let tmp = target.restoring_catalog_file();
    copy_file(&backup.catalog_file(), &tmp)?;
    std::fs::File::open(&tmp)?.sync_all()?;
    std::fs::rename(&tmp, target.catalog_file())?;
    std::fs::File::open(data_dir)?.sync_all()?;
    Ok(listed.len())
}

/// Copies every listed object into staging (each synced), then puts them all as one group.
fn restore_objects(from: &dyn ObjectStorage, listed: &[ListedFile], to: &Storage) -> Result<()> {
    let staging = to.staging_dir("restore");
    std::fs::create_dir_all(&staging)?;
    let mut group = Vec::with_capacity(listed.len());
    for (n, f) in listed.iter().enumerate() {
        let staged = to.staged_copy(n);
        copy_object(from, &f.rel, &staged)?;
        to.durability().sync_file(&std::fs::File::open(&staged)?)?;
        group.push(StagedObject {
            staged,
            key: f.rel.clone(),
        });
    }
    to.objects().put(&group)?;
    let _ = std::fs::remove_dir_all(&staging);
    Ok(())
}
