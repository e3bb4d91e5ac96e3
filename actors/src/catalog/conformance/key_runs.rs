//! The unique index's runs through many commits: tiers merged, entries of dropped origins dead
//! (and left out by merges), runs of several blocks, and the commit's own refusal of a stored key.

use super::{dataset, upload, upload_job};
use crate::catalog::{Catalog, ColumnKeys};
use crate::key::DatasetRecord;

/// Index keys of `int` values (the engine's encoding: tag 1, then 8 bytes big-endian).
fn int_keys(values: impl Iterator<Item = i64>) -> ColumnKeys {
    ColumnKeys {
        column: "id".into(),
        keys: values
            .map(|v| {
                let mut key = vec![1];
                key.extend_from_slice(&v.to_be_bytes());
                key
            })
            .collect::<crate::catalog::KeyList>()
            .into(),
    }
}

/// How many of `values` the index holds (live).
fn count_found(
    c: &dyn Catalog,
    record: &DatasetRecord,
    values: impl Iterator<Item = i64>,
) -> usize {
    c.stored_keys(record.id, 1, "id", &[int_keys(values).keys.as_ref()])
        .unwrap()
        .expect("indexed")
        .len()
}

/// Commits raw file `raw` with `keys` in the files at `paths` (split in turn); the outcome.
fn commit(
    c: &dyn Catalog,
    record: &DatasetRecord,
    raw: &str,
    paths: &[&str],
    keys: ColumnKeys,
) -> crate::error::Result<()> {
    commit_checked_at(c, record, (raw, paths), keys, None)
}

/// [`commit`], its keys checked by the engine as of generation `checked_at`.
fn commit_checked_at(
    c: &dyn Catalog,
    record: &DatasetRecord,
    (raw, paths): (&str, &[&str]),
    keys: ColumnKeys,
    checked_at: Option<i64>,
) -> crate::error::Result<()> {
    let job = upload_job(c, record, "s1", raw);
    let mut commit = upload(record, &job, raw, paths);
    for (n, file) in commit.files.iter_mut().enumerate() {
        let mine = keys.keys.iter().skip(n).step_by(paths.len());
        file.unique_keys = vec![ColumnKeys {
            column: keys.column.clone(),
            keys: mine.collect::<crate::catalog::KeyList>().into(),
        }];
    }
    commit.based_on = Some(c.manifest_generation(record.id, 1).unwrap());
    commit.keys_checked_at = checked_at;
    c.commit_upload(&commit)
}

/// A commit whose keys the engine checked at generation G probes only the runs written since,
/// and a key stored since refuses it, also when it landed in a run merged since; a key in an
/// older run is the engine's check's to find (trusted, as documented).
pub(super) fn checks_meet_the_runs_written_since(c: &dyn Catalog) {
    let record = dataset(c, "since");
    let append = |n: i64, keys, checked_at| {
        let (raw, path) = (format!("r{n}.csv"), format!("p=a/{n}.parquet"));
        commit_checked_at(c, &record, (&raw, &[&path]), keys, checked_at)
    };
    for n in 0..7 {
        append(n, int_keys(n * 100..n * 100 + 100), None).unwrap();
    }
    let checked = c.manifest_generation(record.id, 1).unwrap();
    // The eighth run of the tier: merged with the seven into a run written after the check.
    append(7, int_keys([9_999].into_iter()), None).unwrap();
    let late = append(8, int_keys([10_000, 9_999].into_iter()), Some(checked));
    assert_eq!(
        late.map_err(|e| e.kind),
        Err(crate::error::ErrorKind::Conflict),
        "a key stored after the check refuses the commit"
    );
    append(9, int_keys([10_000].into_iter()), Some(checked)).unwrap();
    assert_eq!(count_found(c, &record, 10_000..10_001), 1);
    // Checked as of the newest generation: no stored run is probed.
    let now = c.manifest_generation(record.id, 1).unwrap();
    append(10, int_keys([50].into_iter()), Some(now)).unwrap();
    assert_eq!(
        append(11, int_keys([50].into_iter()), Some(now)).map_err(|e| e.kind),
        Err(crate::error::ErrorKind::Conflict),
        "checked before commit 10: its run is probed"
    );
}

/// 30 appends (runs merged 8 at a time); a deleted raw file's keys are gone and may be stored
/// again; a live key refuses the whole commit.
pub(super) fn runs_merge_and_forget_dead_keys(c: &dyn Catalog) {
    let record = dataset(c, "runs");
    for n in 0..20i64 {
        let raw = format!("r{n}.csv");
        let path = format!("p=a/{n}.parquet");
        commit(c, &record, &raw, &[&path], int_keys(n * 100..n * 100 + 100)).unwrap();
    }
    assert_eq!(count_found(c, &record, 0..2_000), 2_000);
    assert_eq!(count_found(c, &record, 2_000..2_100), 0);
    assert!(c
        .delete_raw_file(record.id, 1, "r3.csv", None)
        .unwrap()
        .is_some());
    assert_eq!(
        count_found(c, &record, 300..400),
        0,
        "deleted with their file"
    );
    assert_eq!(count_found(c, &record, 0..2_000), 1_900);
    // Stored again (a dead entry refuses nothing), through more merges.
    for n in 20..30i64 {
        let raw = format!("r{n}.csv");
        let path = format!("p=a/{n}.parquet");
        let keys = if n == 20 {
            300..400
        } else {
            n * 100..n * 100 + 100
        };
        commit(c, &record, &raw, &[&path], int_keys(keys)).unwrap();
    }
    assert_eq!(count_found(c, &record, 0..3_000), 2_900);
    assert_eq!(count_found(c, &record, 2_000..2_100), 0);
    let clash = commit(
        c,
        &record,
        "x.csv",
        &["p=a/x.parquet"],
        int_keys([50, 5_000].into_iter()),
    );
    assert!(clash.is_err(), "a stored key refuses the commit");
    assert_eq!(
        count_found(c, &record, 5_000..5_001),
        0,
        "nothing of it stays"
    );
}

/// 100,000 keys in two partitions (several blocks): every stored key found with its partition,
/// none of 70,000 others in the same range, and a key deep in the run refuses a commit.
pub(super) fn large_runs_span_blocks(c: &dyn Catalog) {
    let record = dataset(c, "large");
    let evens = (0..100_000i64).map(|v| v * 2);
    commit(
        c,
        &record,
        "big.csv",
        &["p=x/1.parquet", "p=y/2.parquet"],
        int_keys(evens),
    )
    .unwrap();
    let hits = c
        .stored_keys(
            record.id,
            1,
            "id",
            &[int_keys((0..200_000).step_by(7)).keys.as_ref()],
        )
        .unwrap()
        .unwrap();
    let expected: Vec<i64> = (0..200_000).step_by(7).filter(|v| v % 2 == 0).collect();
    assert_eq!(hits.len(), expected.len());
    for hit in &hits {
        let value = i64::from_be_bytes(hit.key[1..].try_into().unwrap());
        // The files took the keys in turn: 0, 4, 8.. in p=x; 2, 6, 10.. in p=y.
        let partition = if value % 4 == 0 { "p=x" } else { "p=y" };
        assert_eq!(hit.partition_path, partition, "key {value}");
    }
    let odds = (0..70_000i64).map(|v| v * 2 + 1);
    commit(c, &record, "odd.csv", &["p=x/3.parquet"], int_keys(odds)).unwrap();
    assert_eq!(count_found(c, &record, 0..200_000), 170_000);
    let clash = commit(
        c,
        &record,
        "c.csv",
        &["p=z/4.parquet"],
        int_keys([123_456, -1].into_iter()),
    );
    assert!(
        clash.is_err(),
        "a key in the middle of the run refuses the commit"
    );
    assert_eq!(count_found(c, &record, -1..0), 0);
}
