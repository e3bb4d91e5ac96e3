//! Commits as versions: every change numbered in its own transaction, replaced files retired
//! (still read as of the commits that listed them), as-of refusals, and retention.

use super::{dataset, upload, upload_job};
use crate::catalog::{
    AsOf, Catalog, CommitOperation, FilePart, FileSwap, PartsOf, Retention, RetiredRewrite,
    SwapFile,
};
use crate::error::ErrorKind;
use crate::key::DatasetRecord;

/// The paths of the files live at commit `at`, sorted.
fn paths_at(c: &dyn Catalog, record: &DatasetRecord, at: AsOf) -> (i64, Vec<String>) {
    let mut held = Vec::new();
    let read = c
        .files_at_held(record.id, 1, &at, &mut |files| {
            held = files.iter().map(|f| f.path.clone()).collect()
        })
        .unwrap();
    let mut paths: Vec<String> = read.files.iter().map(|f| f.path.clone()).collect();
    assert_eq!(held, paths, "hold sees exactly the files answered");
    paths.sort();
    (read.commit, paths)
}

/// Five commits: append r1 (p=a, p=b), append r2 (p=a), overwrite r3 of p=b, delete r2, compact
/// p=a. Returns the dataset.
pub(super) fn five_commits(c: &dyn Catalog) -> DatasetRecord {
    let record = dataset(c, "history");
    for (raw, paths) in [
        ("r1.csv", &["p=a/1.parquet", "p=b/1.parquet"][..]),
        ("r2.csv", &["p=a/2.parquet"][..]),
    ] {
        let job = upload_job(c, &record, "s1", raw);
        let mut commit = upload(&record, &job, raw, paths);
        commit.based_on = None;
        c.commit_upload(&commit).unwrap();
    }
    let replaced: Vec<i64> = c
        .data_files_in(record.id, 1, &["p=b".to_string()])
        .unwrap()
        .iter()
        .map(|f| f.id)
        .collect();
    let job = upload_job(c, &record, "s2", "r3.csv");
    let mut overwrite = upload(&record, &job, "r3.csv", &["p=b/3.parquet"]);
    overwrite.files[0].rows = 5;
    overwrite.based_on = None;
    overwrite.replaced = replaced;
    overwrite.operation = CommitOperation::Overwrite;
    c.commit_upload(&overwrite).unwrap();
    let gone = c
        .delete_raw_file(record.id, 1, "r2.csv", Some("s3"))
        .unwrap();
    assert_eq!(gone.unwrap(), ["p=a/2.parquet"]);
    let left = c.data_files_in(record.id, 1, &["p=a".to_string()]).unwrap();
    let swap = FileSwap {
        dataset_id: record.id,
        version: 1,
        removed: left.iter().map(|f| f.id).collect(),
        added: vec![SwapFile {
            partition_path: "p=a".into(),
            path: "p=a/merged.parquet".into(),
            rows: 2,
            bytes: 10,
            stats: None,
            parts: vec![FilePart {
                raw_filename: "r1.csv".into(),
                first_row: 0,
                rows: 2,
            }],
        }],
        raw_deleted: None,
        subject: None,
    };
    c.swap_files(&swap).unwrap().unwrap();
    record
}

pub(super) fn every_change_is_a_numbered_readable_commit(c: &dyn Catalog) {
    let record = five_commits(c);
    let commits = c.commits(record.id, 1, 0, 100).unwrap();
    type Listed<'a> = (i64, &'a str, Option<&'a str>, Option<&'a str>, i64, i64);
    let seen: Vec<Listed<'_>> = commits
        .iter()
        .map(|k| {
            (
                k.commit,
                k.operation.as_str(),
                k.subject.as_deref(),
                k.raw_filename.as_deref(),
                k.rows_added,
                k.rows_removed,
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            (5, "COMPACT", None, None, 0, 0),
            (4, "DELETE", Some("s3"), Some("r2.csv"), 0, 2),
            (3, "OVERWRITE", Some("s2"), Some("r3.csv"), 5, 2),
            (2, "APPEND", Some("s1"), Some("r2.csv"), 2, 0),
            (1, "APPEND", Some("s1"), Some("r1.csv"), 4, 0),
        ]
    );
    let net: i64 = commits.iter().map(|k| k.rows_added - k.rows_removed).sum();
    let live: i64 = c
        .data_files(record.id, 1)
        .unwrap()
        .iter()
        .map(|f| f.rows)
        .sum();
    assert_eq!(net, live, "the history adds up to the current rows");
    assert!(commits
        .windows(2)
        .all(|w| w[0].committed_at >= w[1].committed_at));
    let page: Vec<i64> = c
        .commits(record.id, 1, 1, 2)
        .unwrap()
        .iter()
        .map(|k| k.commit)
        .collect();
    assert_eq!(page, [4, 3], "offset and limit page newest first");
    files_of_each_commit(c, &record);
}

/// The five commits' files, read as of each; the live manifest and the listing.
fn files_of_each_commit(c: &dyn Catalog, record: &DatasetRecord) {
    let record = record.clone();
    let expected: [(i64, &[&str]); 5] = [
        (1, &["p=a/1.parquet", "p=b/1.parquet"]),
        (2, &["p=a/1.parquet", "p=a/2.parquet", "p=b/1.parquet"]),
        (3, &["p=a/1.parquet", "p=a/2.parquet", "p=b/3.parquet"]),
        (4, &["p=a/1.parquet", "p=b/3.parquet"]),
        (5, &["p=a/merged.parquet", "p=b/3.parquet"]),
    ];
    for (n, files) in expected {
        assert_eq!(
            paths_at(c, &record, AsOf::Commit(n)),
            (n, files.iter().map(|s| s.to_string()).collect())
        );
    }
    assert_eq!(
        paths_at(c, &record, AsOf::Latest),
        paths_at(c, &record, AsOf::Commit(5))
    );
    let mut live: Vec<String> = c
        .data_files(record.id, 1)
        .unwrap()
        .into_iter()
        .map(|f| f.path)
        .collect();
    live.sort();
    assert_eq!(
        live,
        ["p=a/merged.parquet", "p=b/3.parquet"],
        "the live manifest is the newest commit's"
    );
    let figures = c.figures().unwrap().counts;
    let retained: Vec<i64> = ["retained_files", "retained_bytes"]
        .iter()
        .map(|name| figures.iter().find(|(n, _)| n == name).unwrap().1)
        .collect();
    assert_eq!(
        retained,
        [3, 30],
        "three files of 10 bytes kept for earlier commits"
    );
    let stored = c.stored_files().unwrap();
    assert_eq!(
        stored.data.len(),
        5,
        "retired files stay listed while a retained commit needs them"
    );
    assert_eq!(c.versions_with_retired_files().unwrap(), [(record.id, 1)]);
}

pub(super) fn as_of_refusals_and_retention(c: &dyn Catalog) {
    let empty = dataset(c, "empty");
    let read = c
        .files_at_held(empty.id, 1, &AsOf::Latest, &mut |_| {})
        .unwrap();
    assert_eq!(
        (read.commit, read.files.len()),
        (0, 0),
        "no commit yet: commit 0, no files"
    );
    let record = five_commits(c);
    refusals(c, &record);
    retention(c, &record);
}

fn refused(c: &dyn Catalog, record: &DatasetRecord, at: AsOf) -> ErrorKind {
    c.files_at_held(record.id, 1, &at, &mut |_| {
        panic!("nothing is held when refused")
    })
    .unwrap_err()
    .kind
}

/// Unknown commits and times before the first are refused; times read the commit then.
fn refusals(c: &dyn Catalog, record: &DatasetRecord) {
    let record = record.clone();
    let refused = |at: AsOf| refused(c, &record, at);
    assert_eq!(refused(AsOf::Commit(0)), ErrorKind::NotFound);
    assert_eq!(refused(AsOf::Commit(6)), ErrorKind::NotFound);
    assert_eq!(
        refused(AsOf::Time("2000-01-01T00:00:00.000Z".into())),
        ErrorKind::NotFound
    );
    let later = AsOf::Time("2999-01-01T00:00:00.000Z".into());
    assert_eq!(
        paths_at(c, &record, later).0,
        5,
        "a time after the last commit reads the last"
    );
    let commits = c.commits(record.id, 1, 0, 100).unwrap();
    let second = AsOf::Time(commits[3].committed_at.clone());
    assert!(
        paths_at(c, &record, second).0 >= 2,
        "a commit's own time reads it (or a later one in the same millisecond)"
    );
}

/// Expiry by age and count: the files only expired commits list go, those commits are refused.
fn retention(c: &dyn Catalog, record: &DatasetRecord) {
    let record = record.clone();
    let refused = |at: AsOf| refused(c, &record, at);
    // Everything younger than a far past date is retained: nothing expires.
    let keep_all = Retention {
        keep_commits: 1,
        keep_since: "2000-01-01T00:00:00.000Z".into(),
    };
    assert!(c
        .expire_commits(record.id, 1, &keep_all)
        .unwrap()
        .is_empty());
    // The newest two commits only (4 and 5): files removed by commits up to 4 go.
    let two = Retention {
        keep_commits: 2,
        keep_since: "2999-01-01T00:00:00.000Z".into(),
    };
    let mut gone = c.expire_commits(record.id, 1, &two).unwrap();
    gone.sort();
    assert_eq!(gone, ["p=a/2.parquet", "p=b/1.parquet"]);
    assert_eq!(
        refused(AsOf::Commit(3)),
        ErrorKind::NotFound,
        "past retention"
    );
    assert_eq!(
        paths_at(c, &record, AsOf::Commit(4)).1,
        ["p=a/1.parquet", "p=b/3.parquet"]
    );
    assert!(
        c.expire_commits(record.id, 1, &two).unwrap().is_empty(),
        "expiring again does nothing"
    );
    let one = Retention {
        keep_commits: 1,
        keep_since: "2999-01-01T00:00:00.000Z".into(),
    };
    assert_eq!(
        c.expire_commits(record.id, 1, &one).unwrap(),
        ["p=a/1.parquet"]
    );
    assert_eq!(c.stored_files().unwrap().data.len(), 2);
    assert!(c.versions_with_retired_files().unwrap().is_empty());
    assert_eq!(
        c.commits(record.id, 1, 0, 100).unwrap().len(),
        5,
        "the history itself stays"
    );
}

/// Rollback lists an earlier commit's files again (a merged file with its parts), is undone by
/// another, is refused across a deletion, and leaves the unique index to be rebuilt.
pub(super) fn rollback_relists_files_and_is_undone(c: &dyn Catalog) {
    let record = five_commits(c);
    let err = c.rollback(record.id, 1, 3, Some("s4")).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Conflict, "commit 4 deleted r2.csv");
    assert_eq!(
        c.rollback(record.id, 1, 9, Some("s4")).unwrap_err().kind,
        ErrorKind::NotFound
    );
    assert_eq!(c.rollback(record.id, 1, 4, Some("s4")).unwrap(), 6);
    assert_eq!(
        paths_at(c, &record, AsOf::Latest),
        (6, vec!["p=a/1.parquet".into(), "p=b/3.parquet".into()])
    );
    assert_eq!(
        paths_at(c, &record, AsOf::Commit(5)).1,
        ["p=a/merged.parquet", "p=b/3.parquet"],
        "the commit rolled back from still reads as it was"
    );
    let newest = &c.commits(record.id, 1, 0, 1).unwrap()[0];
    assert_eq!(
        (newest.operation.as_str(), newest.subject.as_deref()),
        ("ROLLBACK", Some("s4"))
    );
    assert_eq!((newest.rows_added, newest.rows_removed), (2, 2));
    assert_eq!(
        c.stored_keys(record.id, 1, "id", &[&[b"x"].into_iter().collect()])
            .unwrap(),
        None,
        "the index is rebuilt by the next checked commit"
    );

    assert_eq!(c.rollback(record.id, 1, 5, None).unwrap(), 7, "undone");
    assert_eq!(
        paths_at(c, &record, AsOf::Latest).1,
        ["p=a/merged.parquet", "p=b/3.parquet"]
    );
    let holding = PartsOf::Holding {
        dataset_id: record.id,
        version: 1,
        raw_filename: "r1.csv",
    };
    let parts: Vec<FilePart> = c
        .file_parts(holding)
        .unwrap()
        .into_iter()
        .map(|(_, p)| p)
        .collect();
    assert_eq!(
        parts,
        [FilePart {
            raw_filename: "r1.csv".into(),
            first_row: 0,
            rows: 2
        }],
        "a merged file listed again keeps its parts"
    );
    let one = Retention {
        keep_commits: 1,
        keep_since: "2999-01-01T00:00:00.000Z".into(),
    };
    let mut gone = c.expire_commits(record.id, 1, &one).unwrap();
    gone.sort();
    assert_eq!(
        gone,
        ["p=a/1.parquet", "p=a/2.parquet", "p=b/1.parquet"],
        "the live merged file, retired before, is not given up"
    );
    assert_eq!(c.stored_files().unwrap().data.len(), 2);
}

/// Erasure's catalog step: the retired files holding a deleted raw file's rows, each replaced
/// by its rewrite (or dropped) in every commit that listed it, the DELETE commit marked ERASE,
/// the old paths given back; refused (and nothing changed) without a DELETE of that raw file.
pub(super) fn erasure_rewrites_retired_files_and_marks_the_commit(c: &dyn Catalog) {
    let record = five_commits(c);
    let held = c.retired_holding(record.id, 1, "r2.csv").unwrap();
    let held: Vec<(&str, usize)> = held
        .iter()
        .map(|h| (h.file.path.as_str(), h.parts.len()))
        .collect();
    assert_eq!(held, [("p=a/2.parquet", 0)], "its own data file");
    let refused = c
        .erase_retired(record.id, 1, "r1.csv", &[])
        .unwrap_err()
        .kind;
    assert_eq!(refused, ErrorKind::NotFound, "r1.csv was never deleted");
    let rewrite = RetiredRewrite {
        path: "p=a/2.parquet".into(),
        rewrite: Some(SwapFile {
            partition_path: "p=a".into(),
            path: "p=a/2-rewritten.parquet".into(),
            rows: 1,
            bytes: 7,
            stats: None,
            parts: vec![FilePart {
                raw_filename: "r9.csv".into(),
                first_row: 0,
                rows: 1,
            }],
        }),
    };
    let unneeded = c.erase_retired(record.id, 1, "r2.csv", &[rewrite]).unwrap();
    assert_eq!(unneeded, ["p=a/2.parquet"]);
    for n in [2, 3] {
        let (_, paths) = paths_at(c, &record, AsOf::Commit(n));
        assert!(
            paths.contains(&"p=a/2-rewritten.parquet".to_string()),
            "{n}: {paths:?}"
        );
        assert!(
            !paths.contains(&"p=a/2.parquet".to_string()),
            "{n}: {paths:?}"
        );
    }
    assert!(c
        .retired_holding(record.id, 1, "r2.csv")
        .unwrap()
        .is_empty());
    let held = c.retired_holding(record.id, 1, "r9.csv").unwrap();
    assert_eq!(held.len(), 1, "the rewrite's parts are kept");
    assert_eq!(held[0].file.rows, 1);
    let operations: Vec<String> = c
        .commits(record.id, 1, 0, 100)
        .unwrap()
        .into_iter()
        .map(|k| k.operation)
        .collect();
    assert_eq!(
        operations,
        ["COMPACT", "ERASE", "OVERWRITE", "APPEND", "APPEND"]
    );
    let err = c.rollback(record.id, 1, 3, Some("s4")).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Conflict, "commit 4 erased r2.csv");
    let dropped = RetiredRewrite {
        path: "p=a/2-rewritten.parquet".into(),
        rewrite: None,
    };
    let unneeded = c.erase_retired(record.id, 1, "r2.csv", &[dropped]).unwrap();
    assert_eq!(unneeded, ["p=a/2-rewritten.parquet"]);
    assert_eq!(
        paths_at(c, &record, AsOf::Commit(2)).1,
        ["p=a/1.parquet", "p=b/1.parquet"]
    );
}
