//! Swapping data files (compaction, and rewrites that drop a raw file's rows): parts recorded,
//! unique keys untouched by merging and dropped with their raw file, stale swaps refused.

use super::{dataset, upload, upload_job};
use crate::catalog::{Catalog, ColumnKeys, FilePart, FileSwap, PartsOf, SwapFile};
use crate::error::ErrorKind;
use crate::key::DatasetRecord;

fn keys(values: &[&str]) -> ColumnKeys {
    ColumnKeys {
        column: "id".into(),
        keys: values
            .iter()
            .map(|v| v.as_bytes().to_vec())
            .collect::<crate::catalog::KeyList>()
            .into(),
    }
}

fn stored(c: &dyn Catalog, record: &DatasetRecord, values: &[&str]) -> Vec<String> {
    let mut hits: Vec<String> = c
        .stored_keys(record.id, 1, "id", &[keys(values).keys.as_ref()])
        .unwrap()
        .unwrap()
        .into_iter()
        .map(|h| String::from_utf8(h.key).unwrap())
        .collect();
    hits.sort();
    hits
}

fn part(raw: &str, first_row: i64, rows: i64) -> FilePart {
    FilePart {
        raw_filename: raw.into(),
        first_row,
        rows,
    }
}

/// Two appends of one partition merged into one file, then one of them deleted by a rewrite.
pub(super) fn merged_files_keep_keys_and_lose_a_raw_file_exactly(c: &dyn Catalog) {
    let record = dataset(c, "sales");
    for (raw, path, values) in [
        ("r1.csv", "p=a/1.parquet", ["a"]),
        ("r2.csv", "p=a/2.parquet", ["b"]),
    ] {
        let job = upload_job(c, &record, "s1", raw);
        let mut commit = upload(&record, &job, raw, &[path]);
        commit.files[0].unique_keys = vec![keys(&values)];
        commit.based_on = None;
        c.commit_upload(&commit).unwrap();
    }
    let before = c.data_files(record.id, 1).unwrap();
    let generation = c.manifest_generation(record.id, 1).unwrap();
    let merged = SwapFile {
        partition_path: "p=a".into(),
        path: "p=a/merged.parquet".into(),
        rows: 4,
        bytes: 20,
        stats: Some(r#"{"n": [1, 4, 0]}"#.into()),
        parts: vec![part("r1.csv", 0, 2), part("r2.csv", 2, 2)],
    };
    let swap = FileSwap {
        dataset_id: record.id,
        version: 1,
        removed: before.iter().map(|f| f.id).collect(),
        added: vec![merged],
        raw_deleted: None,
        subject: None,
    };
    let dropped = c.swap_files(&swap).unwrap().unwrap();
    assert_eq!(dropped, ["p=a/1.parquet", "p=a/2.parquet"]);
    let after = c.data_files(record.id, 1).unwrap();
    assert_eq!(after.len(), 1);
    assert_eq!((after[0].raw_filename.as_str(), after[0].rows), ("", 4));
    assert_eq!(after[0].stats.as_deref(), Some(r#"{"n": [1, 4, 0]}"#));
    assert!(c.manifest_generation(record.id, 1).unwrap() > generation);
    assert_eq!(
        stored(c, &record, &["a", "b"]),
        ["a", "b"],
        "merging moves no key"
    );
    let holding = |raw_filename| PartsOf::Holding {
        dataset_id: record.id,
        version: 1,
        raw_filename,
    };
    let parts = c.file_parts(holding("r2.csv")).unwrap();
    let expected = [part("r1.csv", 0, 2), part("r2.csv", 2, 2)];
    assert_eq!(
        parts.iter().map(|(_, p)| p.clone()).collect::<Vec<_>>(),
        expected
    );
    assert!(c.file_parts(holding("r9.csv")).unwrap().is_empty());
    let of_files = c
        .file_parts(PartsOf::Files(&[after[0].id, before[0].id]))
        .unwrap();
    assert_eq!(of_files, parts, "by id; a file no longer there has none");
    assert_eq!(
        c.raw_files(record.id, 1).unwrap().len(),
        2,
        "raw files stay"
    );

    rewrite_drops_a_raw_file(c, &record, &swap, &after);
}

/// After the merge: the same swap again is refused; a rewrite swap deletes r1 exactly.
fn rewrite_drops_a_raw_file(
    c: &dyn Catalog,
    record: &DatasetRecord,
    swap: &FileSwap,
    after: &[crate::catalog::DataFile],
) {
    // The same swap again: its files are gone, so it is refused and records nothing.
    let err = c.swap_files(swap).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Conflict);
    assert_eq!(c.data_files(record.id, 1).unwrap(), after);

    // r1 deleted: the merged file is swapped for one holding r2's rows only.
    let rewrite = FileSwap {
        dataset_id: record.id,
        version: 1,
        removed: vec![after[0].id],
        added: vec![SwapFile {
            partition_path: "p=a".into(),
            path: "p=a/rewritten.parquet".into(),
            rows: 2,
            bytes: 10,
            stats: None,
            parts: vec![part("r2.csv", 0, 2)],
        }],
        raw_deleted: Some("r1.csv".into()),
        subject: None,
    };
    let unknown = FileSwap {
        raw_deleted: Some("nope.csv".into()),
        ..rewrite.clone()
    };
    assert_eq!(c.swap_files(&unknown).unwrap(), None, "no such raw file");
    assert_eq!(
        c.data_files(record.id, 1).unwrap(),
        after,
        "nothing recorded"
    );
    assert_eq!(
        c.swap_files(&rewrite).unwrap().unwrap(),
        ["p=a/merged.parquet"]
    );
    assert_eq!(
        stored(c, record, &["a", "b"]),
        ["b"],
        "r1's key went with it"
    );
    let raws: Vec<String> = c
        .raw_files(record.id, 1)
        .unwrap()
        .into_iter()
        .map(|r| r.raw_filename)
        .collect();
    assert_eq!(raws, ["r2.csv"]);
    let files = c.data_files(record.id, 1).unwrap();
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].path, "p=a/rewritten.parquet");
    c.delete_dataset(record.id).unwrap();
}

/// An OVERWRITE replacing a merged file drops the keys of every raw file merged into it.
pub(super) fn overwrite_of_a_merged_partition_drops_its_keys(c: &dyn Catalog) {
    let record = dataset(c, "sales");
    for (raw, path, value) in [
        ("r1.csv", "p=a/1.parquet", "a"),
        ("r2.csv", "p=a/2.parquet", "b"),
        ("r3.csv", "p=b/3.parquet", "c"),
    ] {
        let job = upload_job(c, &record, "s1", raw);
        let mut commit = upload(&record, &job, raw, &[path]);
        commit.files[0].unique_keys = vec![keys(&[value])];
        commit.based_on = None;
        c.commit_upload(&commit).unwrap();
    }
    let files = c.data_files(record.id, 1).unwrap();
    let swap = FileSwap {
        dataset_id: record.id,
        version: 1,
        removed: vec![files[0].id, files[1].id],
        added: vec![SwapFile {
            partition_path: "p=a".into(),
            path: "p=a/merged.parquet".into(),
            rows: 4,
            bytes: 20,
            stats: None,
            parts: vec![part("r1.csv", 0, 2), part("r2.csv", 2, 2)],
        }],
        raw_deleted: None,
        subject: None,
    };
    c.swap_files(&swap).unwrap().unwrap();
    let merged = c
        .data_files(record.id, 1)
        .unwrap()
        .into_iter()
        .find(|f| f.partition_path == "p=a")
        .unwrap();
    let job = upload_job(c, &record, "s1", "r4.csv");
    let mut overwrite = upload(&record, &job, "r4.csv", &["p=a/4.parquet"]);
    overwrite.files[0].unique_keys = vec![keys(&["a"])];
    overwrite.based_on = Some(c.manifest_generation(record.id, 1).unwrap());
    overwrite.replaced = vec![merged.id];
    c.commit_upload(&overwrite).unwrap();
    assert_eq!(
        stored(c, &record, &["a", "b", "c"]),
        ["a", "c"],
        "b went with p=a; c stays in p=b"
    );
    c.delete_dataset(record.id).unwrap();
}
