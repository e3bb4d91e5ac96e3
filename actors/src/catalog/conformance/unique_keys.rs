//! The unique index: keys recorded with their files, looked up, and gone with their files.

use super::{dataset, upload, upload_job};
use crate::catalog::{Catalog, ColumnKeys, KeyHit, StoredKeys};
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

/// Which of `values` the index of column `id` holds, with their partitions, sorted.
fn found(c: &dyn Catalog, record: &DatasetRecord, values: &[&str]) -> Vec<(String, String)> {
    let probe = keys(values).keys;
    let hits: Vec<KeyHit> = c
        .stored_keys(record.id, 1, "id", &[probe.as_ref()])
        .unwrap()
        .expect("a version created with the index is indexed");
    let mut hits: Vec<(String, String)> = hits
        .into_iter()
        .map(|h| (String::from_utf8(h.key).unwrap(), h.partition_path))
        .collect();
    hits.sort();
    hits
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(k, p)| (k.to_string(), p.to_string()))
        .collect()
}

/// Keys follow their files through APPEND, OVERWRITE (which may store a replaced value again)
/// and the deletion of a raw file; other columns and versions are apart.
pub(super) fn keys_follow_their_files(c: &dyn Catalog) {
    let record = dataset(c, "sales");
    assert!(found(c, &record, &["a"]).is_empty());
    let job = upload_job(c, &record, "s1", "r1.csv");
    let mut first = upload(&record, &job, "r1.csv", &["p=x/1.parquet", "p=y/2.parquet"]);
    first.files[0].unique_keys = vec![keys(&["a", "b"])];
    first.files[1].unique_keys = vec![keys(&["c"])];
    c.commit_upload(&first).unwrap();
    assert_eq!(
        found(c, &record, &["a", "c", "z"]),
        pairs(&[("a", "p=x"), ("c", "p=y")])
    );
    assert!(c
        .stored_keys(record.id, 1, "other", &[keys(&["a"]).keys.as_ref()])
        .unwrap()
        .unwrap()
        .is_empty());
    assert!(c
        .stored_keys(record.id, 2, "id", &[keys(&["a"]).keys.as_ref()])
        .unwrap()
        .unwrap()
        .is_empty());

    // OVERWRITE of p=x: "a" is stored again, "b" is gone with the file it was in.
    let before = c.data_files(record.id, 1).unwrap();
    let job = upload_job(c, &record, "s1", "r2.csv");
    let mut second = upload(&record, &job, "r2.csv", &["p=x/3.parquet"]);
    second.files[0].unique_keys = vec![keys(&["a", "d"])];
    second.based_on = Some(c.manifest_generation(record.id, 1).unwrap());
    second.replaced = vec![before[0].id];
    c.commit_upload(&second).unwrap();
    assert_eq!(
        found(c, &record, &["a", "b", "c", "d"]),
        pairs(&[("a", "p=x"), ("c", "p=y"), ("d", "p=x")])
    );

    assert!(c
        .delete_raw_file(record.id, 1, "r2.csv", None)
        .unwrap()
        .is_some());
    assert_eq!(
        found(c, &record, &["a", "b", "c", "d"]),
        pairs(&[("c", "p=y")])
    );
}

/// A commit's backfill records the keys of files stored earlier; a duplicate key refuses the
/// whole commit; deleting the dataset removes its keys.
pub(super) fn backfill_and_refusals(c: &dyn Catalog) {
    let record = dataset(c, "sales");
    let job = upload_job(c, &record, "s1", "r1.csv");
    c.commit_upload(&upload(&record, &job, "r1.csv", &["1.parquet"]))
        .unwrap();
    let stored = c.data_files(record.id, 1).unwrap();
    let job = upload_job(c, &record, "s1", "r2.csv");
    let mut second = upload(&record, &job, "r2.csv", &["2.parquet"]);
    second.files[0].unique_keys = vec![keys(&["b"])];
    second.based_on = Some(c.manifest_generation(record.id, 1).unwrap());
    second.backfill = Some(vec![StoredKeys {
        raw_filename: stored[0].raw_filename.clone(),
        partition_path: stored[0].partition_path.clone(),
        keys: keys(&["a"]),
    }]);
    c.commit_upload(&second).unwrap();
    assert_eq!(
        found(c, &record, &["a", "b"]),
        pairs(&[("a", ""), ("b", "")])
    );

    let job = upload_job(c, &record, "s1", "r3.csv");
    let mut clash = upload(&record, &job, "r3.csv", &["3.parquet"]);
    clash.files[0].unique_keys = vec![keys(&["c", "a"])];
    clash.based_on = Some(c.manifest_generation(record.id, 1).unwrap());
    assert!(c.commit_upload(&clash).is_err());
    assert_eq!(c.data_files(record.id, 1).unwrap().len(), 2);
    assert!(found(c, &record, &["c"]).is_empty(), "nothing of it stays");

    c.delete_dataset(record.id).unwrap();
    assert!(c
        .stored_keys(record.id, 1, "id", &[keys(&["a", "b"]).keys.as_ref()])
        .unwrap()
        .unwrap_or_default()
        .is_empty());
}
