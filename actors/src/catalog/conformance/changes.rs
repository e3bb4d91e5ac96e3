//! What each version's Delta Lake log is derived from (`crate::delta_log`): each commit's added
//! and removed files, read by range, exact after the history floor.

use super::history::five_commits;
use crate::catalog::{Catalog, DataFile, Retention};

/// What each commit added and removed (what its Delta log version is derived from), by range,
/// and exact after the floor once retention dropped older retired rows.
pub(super) fn commit_changes_list_what_each_commit_added_and_removed(c: &dyn Catalog) {
    let record = five_commits(c);
    assert_eq!(c.history_bounds(record.id, 1).unwrap(), (1, 5));
    let paths =
        |files: &[DataFile]| -> Vec<String> { files.iter().map(|f| f.path.clone()).collect() };
    let summary: Vec<(i64, String, Vec<String>, Vec<String>)> = c
        .commit_changes(record.id, 1, 1, 5)
        .unwrap()
        .iter()
        .map(|ch| {
            (
                ch.commit,
                ch.operation.clone(),
                paths(&ch.added),
                paths(&ch.removed),
            )
        })
        .collect();
    let s = |v: &[&str]| -> Vec<String> { v.iter().map(|p| p.to_string()).collect() };
    assert_eq!(
        summary,
        vec![
            (
                1,
                "APPEND".into(),
                s(&["p=a/1.parquet", "p=b/1.parquet"]),
                s(&[])
            ),
            (2, "APPEND".into(), s(&["p=a/2.parquet"]), s(&[])),
            (
                3,
                "OVERWRITE".into(),
                s(&["p=b/3.parquet"]),
                s(&["p=b/1.parquet"])
            ),
            (4, "DELETE".into(), s(&[]), s(&["p=a/2.parquet"])),
            (
                5,
                "COMPACT".into(),
                s(&["p=a/merged.parquet"]),
                s(&["p=a/1.parquet"])
            ),
        ]
    );
    let range = c.commit_changes(record.id, 1, 3, 4).unwrap();
    assert_eq!(range.iter().map(|ch| ch.commit).collect::<Vec<_>>(), [3, 4]);
    let keep_one = Retention {
        keep_commits: 1,
        keep_since: "9999".into(),
    };
    c.expire_commits(record.id, 1, &keep_one).unwrap();
    assert_eq!(c.history_bounds(record.id, 1).unwrap(), (5, 5));
    let last = c.commit_changes(record.id, 1, 5, 5).unwrap();
    assert_eq!(paths(&last[0].added), ["p=a/merged.parquet"]);
}
