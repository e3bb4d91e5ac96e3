//! What is particular to the SQLite implementation (the interface itself is covered by the
//! conformance suite, run here).

use super::*;

#[test]
fn reopening_keeps_rows_and_does_not_reapply_migrations() {
    let dir = tempfile::tempdir().unwrap();
    let cat = SqliteCatalog::open(dir.path()).unwrap();
    cat.with(|c| {
        c.execute(
            "INSERT INTO protected_domains (domain, created_at) VALUES ('land', 'now')",
            [],
        )?;
        Ok(())
    })
    .unwrap();
    drop(cat);
    let cat = SqliteCatalog::open(dir.path()).unwrap();
    let n: i64 = cat
        .with(|c| Ok(c.query_row("SELECT count(*) FROM protected_domains", [], |r| r.get(0))?))
        .unwrap();
    assert_eq!(n, 1);
}

#[test]
fn commits_are_synced_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let cat = SqliteCatalog::open(dir.path()).unwrap();
    let level: i64 = cat
        .with(|c| Ok(c.query_row("PRAGMA synchronous", [], |r| r.get(0))?))
        .unwrap();
    assert_eq!(level, 2, "synchronous=FULL");
}

#[test]
fn catalog_uses_wal_journal() {
    let dir = tempfile::tempdir().unwrap();
    let cat = SqliteCatalog::open(dir.path()).unwrap();
    let mode: String = cat
        .with(|c| Ok(c.query_row("PRAGMA journal_mode", [], |r| r.get(0))?))
        .unwrap();
    assert_eq!(mode.to_lowercase(), "wal");
}

#[test]
fn sqlite_passes_the_catalog_conformance_suite() {
    let dirs = std::cell::RefCell::new(Vec::new());
    let started = std::time::Instant::now();
    crate::catalog::conformance::suite(&|| {
        let dir = tempfile::tempdir().unwrap();
        let catalog = SqliteCatalog::open(dir.path()).unwrap();
        dirs.borrow_mut().push(dir);
        std::sync::Arc::new(catalog)
    });
    println!(
        "catalog conformance suite on SQLite: {:?} (a new catalog file per case)",
        started.elapsed()
    );
}

#[test]
fn sqlite_commit_latency() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = SqliteCatalog::open(dir.path()).unwrap();
    let per_commit = crate::catalog::conformance::commit_latency(&catalog, 200);
    println!("commit_upload on SQLite: {per_commit:?} per commit (200 in a row, debug build)");
}
