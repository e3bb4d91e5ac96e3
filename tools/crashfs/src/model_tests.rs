//! The power-cut rules, checked without the kernel: every "cut" is a reload of the backing folder.

use std::ffi::OsStr;
use std::path::Path;

use crate::model::{Model, ROOT};

const IDS: (u32, u32) = (0, 0);

fn name(s: &str) -> &OsStr {
    OsStr::new(s)
}

fn cut(dir: &Path) -> Model {
    Model::load(dir).unwrap()
}

/// Inode of `path` (a/b/c) in the current state, if it resolves.
fn resolve(m: &Model, path: &str) -> Option<u64> {
    let mut ino = ROOT;
    for part in path.split('/') {
        ino = m.lookup(ino, name(part)).ok()?.ino;
    }
    Some(ino)
}

fn contents(m: &mut Model, path: &str) -> Option<Vec<u8>> {
    let ino = resolve(m, path)?;
    Some(m.read(ino, 0, 1 << 20).unwrap())
}

fn new_file(m: &mut Model, parent: u64, n: &str, bytes: &[u8]) -> u64 {
    let ino = m.create(parent, name(n), 0o600, IDS).unwrap().ino;
    m.write(ino, 0, bytes).unwrap();
    ino
}

#[test]
fn nothing_unsynced_survives() {
    let dir = tempfile::tempdir().unwrap();
    let mut m = cut(dir.path());
    let d = m.mkdir(ROOT, name("d"), 0o700, IDS).unwrap().ino;
    new_file(&mut m, d, "f", b"hello");
    assert_eq!(contents(&mut m, "d/f").unwrap(), b"hello");
    let m = cut(dir.path());
    assert!(resolve(&m, "d").is_none());
}

#[test]
fn a_synced_file_without_a_synced_name_is_lost() {
    let dir = tempfile::tempdir().unwrap();
    let mut m = cut(dir.path());
    let f = new_file(&mut m, ROOT, "f", b"hello");
    m.sync(f).unwrap();
    let m = cut(dir.path());
    assert!(resolve(&m, "f").is_none());
    // Its orphaned contents were freed, and the number may be used again safely.
    assert!(!dir.path().join("files").join(f.to_string()).exists());
}

#[test]
fn a_synced_name_without_synced_contents_is_an_empty_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut m = cut(dir.path());
    new_file(&mut m, ROOT, "f", b"hello");
    m.sync(ROOT).unwrap();
    let mut m = cut(dir.path());
    assert_eq!(contents(&mut m, "f").unwrap(), b"");
}

#[test]
fn contents_and_name_synced_survive_and_later_writes_do_not() {
    let dir = tempfile::tempdir().unwrap();
    let mut m = cut(dir.path());
    let f = new_file(&mut m, ROOT, "f", b"hello");
    m.sync(f).unwrap();
    m.sync(ROOT).unwrap();
    m.write(f, 5, b" world").unwrap();
    m.write(f, 0, b"J").unwrap();
    let mut m = cut(dir.path());
    assert_eq!(contents(&mut m, "f").unwrap(), b"hello");
}

#[test]
fn a_new_directory_needs_its_parent_synced() {
    let dir = tempfile::tempdir().unwrap();
    let mut m = cut(dir.path());
    let a = m.mkdir(ROOT, name("a"), 0o700, IDS).unwrap().ino;
    let b = m.mkdir(a, name("b"), 0o700, IDS).unwrap().ino;
    let f = new_file(&mut m, b, "f", b"x");
    m.sync(f).unwrap();
    m.sync(b).unwrap();
    m.sync(ROOT).unwrap();
    // a is durable in root, but a's own entries (b) were never synced.
    let m2 = cut(dir.path());
    assert!(resolve(&m2, "a").is_some());
    assert!(resolve(&m2, "a/b").is_none());
    drop(m2);
    // The current state of the first model is gone with it; start again and sync all levels.
    let mut m = cut(dir.path());
    let a = resolve(&m, "a").unwrap();
    let b = m.mkdir(a, name("b"), 0o700, IDS).unwrap().ino;
    let f = new_file(&mut m, b, "f", b"x");
    for ino in [f, b, a] {
        m.sync(ino).unwrap();
    }
    let mut m = cut(dir.path());
    assert_eq!(contents(&mut m, "a/b/f").unwrap(), b"x");
}

#[test]
fn a_rename_is_durable_where_the_directory_was_synced() {
    let dir = tempfile::tempdir().unwrap();
    let mut m = cut(dir.path());
    let staging = m.mkdir(ROOT, name("staging"), 0o700, IDS).unwrap().ino;
    let data = m.mkdir(ROOT, name("data"), 0o700, IDS).unwrap().ino;
    m.sync(ROOT).unwrap();
    let f = new_file(&mut m, staging, "0.parquet", b"PAR1");
    m.sync(f).unwrap();
    m.sync(staging).unwrap();
    m.rename(staging, name("0.parquet"), data, name("x.parquet"), false)
        .unwrap();
    m.sync(data).unwrap();
    // staging was not synced after the rename: the old name survives too, as a second link.
    let mut m = cut(dir.path());
    assert_eq!(contents(&mut m, "data/x.parquet").unwrap(), b"PAR1");
    assert_eq!(contents(&mut m, "staging/0.parquet").unwrap(), b"PAR1");
    let ino = resolve(&m, "data/x.parquet").unwrap();
    assert_eq!(m.attr(ino).unwrap().nlink, 2);
}

#[test]
fn an_unsynced_unlink_comes_back() {
    let dir = tempfile::tempdir().unwrap();
    let mut m = cut(dir.path());
    let f = new_file(&mut m, ROOT, "f", b"keep");
    m.sync(f).unwrap();
    m.sync(ROOT).unwrap();
    m.unlink(ROOT, name("f")).unwrap();
    assert!(resolve(&m, "f").is_none());
    let mut m = cut(dir.path());
    assert_eq!(contents(&mut m, "f").unwrap(), b"keep");
    m.unlink(ROOT, name("f")).unwrap();
    m.sync(ROOT).unwrap();
    let m = cut(dir.path());
    assert!(resolve(&m, "f").is_none());
}

#[test]
fn truncate_then_grow_syncs_zeros_not_old_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let mut m = cut(dir.path());
    let f = new_file(&mut m, ROOT, "f", &[7u8; 10_000]);
    m.sync(f).unwrap();
    m.sync(ROOT).unwrap();
    m.set_size(f, 3).unwrap();
    m.set_size(f, 9000).unwrap();
    m.write(f, 8999, b"z").unwrap();
    m.sync(f).unwrap();
    let mut m = cut(dir.path());
    let bytes = contents(&mut m, "f").unwrap();
    assert_eq!(bytes.len(), 9000);
    assert_eq!(&bytes[..3], &[7, 7, 7]);
    assert!(bytes[3..8999].iter().all(|b| *b == 0));
    assert_eq!(bytes[8999], b'z');
}

#[test]
fn a_torn_write_keeps_a_leading_part_of_the_last_unsynced_write() {
    let dir = tempfile::tempdir().unwrap();
    let mut m = cut(dir.path());
    let f = new_file(&mut m, ROOT, "wal", b"aaaa");
    m.sync(f).unwrap();
    m.sync(ROOT).unwrap();
    m.write(f, 4, b"bbbb").unwrap();
    let (w, kept) = m.tear_last_write(0.5).unwrap().unwrap();
    assert_eq!((w.ino, w.offset, kept), (f, 4, 2));
    let mut m = cut(dir.path());
    assert_eq!(contents(&mut m, "wal").unwrap(), b"aaaabb");
    // Once synced, there is nothing left to tear.
    let f = resolve(&m, "wal").unwrap();
    m.write(f, 0, b"c").unwrap();
    m.sync(f).unwrap();
    assert!(m.tear_last_write(0.5).unwrap().is_none());
}

#[test]
fn directory_reads_and_errors_follow_posix() {
    let dir = tempfile::tempdir().unwrap();
    let mut m = cut(dir.path());
    let a = m.mkdir(ROOT, name("a"), 0o700, IDS).unwrap().ino;
    new_file(&mut m, a, "f", b"");
    assert_eq!(m.rmdir(ROOT, name("a")), Err(libc::ENOTEMPTY));
    assert_eq!(
        m.create(a, name("f"), 0o600, IDS).map(|_| ()),
        Err(libc::EEXIST)
    );
    assert_eq!(
        m.rename(ROOT, name("a"), a, name("inside"), false),
        Err(libc::EINVAL)
    );
    let names: Vec<String> = m
        .list(a)
        .unwrap()
        .into_iter()
        .map(|(_, _, n)| n.to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, [".", "..", "f"]);
    m.unlink(a, name("f")).unwrap();
    m.rmdir(ROOT, name("a")).unwrap();
    assert_eq!(m.reachable().len(), 1);
}
