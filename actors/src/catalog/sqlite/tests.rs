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
fn each_catalog_syncs_as_it_was_opened_to() {
    let (full, off) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let off = SqliteCatalog::open_with(off.path(), crate::storage::Durability::Off).unwrap();
    let full = SqliteCatalog::open_with(full.path(), crate::storage::Durability::Full).unwrap();
    let level = |cat: &SqliteCatalog| -> i64 {
        cat.with(|c| Ok(c.query_row("PRAGMA synchronous", [], |r| r.get(0))?))
            .unwrap()
    };
    // Opened after `off` in the same process, `full` does not change it.
    assert_eq!(level(&off), 1, "synchronous=NORMAL");
    assert_eq!(level(&full), 2, "synchronous=FULL");
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

/// A catalog whose unique keys named data files (migration 9) is brought to the newest schema:
/// its versions are indexed again from their files, and its history starts with a baseline.
#[test]
fn a_catalog_from_before_compaction_is_migrated_and_indexed_again() {
    use crate::catalog::interface::ManifestCatalog;
    let dir = tempfile::tempdir().unwrap();
    let file = crate::storage::Storage::new(dir.path()).catalog_file();
    {
        let mut conn = Connection::open(&file).unwrap();
        conn.pragma_update(None, "foreign_keys", "ON").unwrap();
        let tx = conn.transaction().unwrap();
        for sql in &migrations::MIGRATIONS[..9] {
            tx.execute_batch(sql).unwrap();
        }
        tx.execute_batch(
            "INSERT INTO datasets VALUES (7, 'default', 'd', 'S', 's', 'PUBLIC', 'now');
             INSERT INTO schema_versions (dataset_id, version, schema_json, created_at)
                 VALUES (7, 1, '{}', 'now');
             INSERT INTO raw_files (dataset_id, version, raw_filename, original_filename, rows,
                                    bytes, job_id, uploaded_at)
                 VALUES (7, 1, 'r1.csv', 'a.csv', 2, 9, 'j', 'now'),
                        (7, 1, 'r2.csv', 'b.csv', 1, 9, 'j', 'now');
             INSERT INTO data_files VALUES (1, 7, 1, 'r1.csv', 'p=a', 'x/1.parquet', 1, 9, 'now'),
                                           (2, 7, 1, 'r1.csv', 'p=b', 'x/2.parquet', 1, 9, 'now'),
                                           (3, 7, 1, 'r2.csv', 'p=a', 'x/3.parquet', 1, 9, 'now');
             INSERT INTO unique_keys VALUES (7, 1, 'id', X'01', 1), (7, 1, 'id', X'02', 2),
                                            (7, 1, 'id', X'03', 3);
             PRAGMA user_version = 9;",
        )
        .unwrap();
        tx.commit().unwrap();
    }
    let cat = SqliteCatalog::open(dir.path()).unwrap();
    // Keys of rows are kept as sorted runs since migration 17: the rows of a catalog before it
    // are dropped and the version marked pending, so the next checked commit reads the files.
    assert!(cat
        .stored_keys(7, 1, "id", &[&[[1u8]].into_iter().collect()])
        .unwrap()
        .is_none());
    assert!(cat.delete_raw_file(7, 1, "r1.csv", None).unwrap().is_some());
    assert!(cat
        .stored_keys(7, 1, "id", &[&[[3u8]].into_iter().collect()])
        .unwrap()
        .is_none());
    baseline_then_history(&cat);
}

/// The catalog above after migration 15: its files were one BASELINE commit, the deletion after
/// it commit 2, and commit 1 still reads every file.
fn baseline_then_history(cat: &SqliteCatalog) {
    use crate::catalog::interface::HistoryCatalog;
    use crate::catalog::AsOf;
    let commits = cat.commits(7, 1, 0, 10).unwrap();
    let seen: Vec<_> = commits
        .iter()
        .map(|c| (c.commit, c.operation.as_str(), c.rows_added, c.rows_removed))
        .collect();
    assert_eq!(seen, [(2, "DELETE", 0, 2), (1, "BASELINE", 3, 0)]);
    let at_one = cat
        .files_at_held(7, 1, &AsOf::Commit(1), &mut |_| {})
        .unwrap();
    assert_eq!(at_one.files.len(), 3);
}
