//! The manifest and the upload commit.

use super::{dataset, kind_of, upload, upload_job};
use crate::catalog::{Catalog, DataFile};
use crate::error::ErrorKind;
use crate::job_state::JobStatus;

fn ids(files: &[DataFile]) -> Vec<i64> {
    files.iter().map(|f| f.id).collect()
}

fn paths(files: &[DataFile]) -> Vec<&str> {
    files.iter().map(|f| f.path.as_str()).collect()
}

pub(super) fn commit_round_trip(c: &dyn Catalog) {
    let record = dataset(c, "sales");
    let job = upload_job(c, &record, "s1", "r1.csv");
    let commit = upload(
        &record,
        &job,
        "r1.csv",
        &["data/p=b/1.parquet", "data/p=a/2.parquet"],
    );
    c.commit_upload(&commit).unwrap();
    let files = c.data_files(record.id, 1).unwrap();
    assert_eq!(
        paths(&files),
        ["data/p=b/1.parquet", "data/p=a/2.parquet"],
        "recorded order"
    );
    assert_eq!(files[0].partition_path, "data/p=b");
    assert_eq!((files[0].rows, files[0].bytes), (2, 10));
    assert_eq!(
        files[1].stats.as_deref(),
        Some(r#"{"path": ["data/p=a/2.parquet", "data/p=a/2.parquet", 0]}"#),
        "bounds kept as they were given"
    );
    assert!(files.iter().all(|f| f.raw_filename == "r1.csv"));
    assert_ne!(files[0].id, files[1].id);
    let raw = c.raw_files(record.id, 1).unwrap();
    assert_eq!(raw.len(), 1);
    assert_eq!(raw[0].raw_filename, "r1.csv");
    assert_eq!(raw[0].original_filename, "upload.csv");
    assert_eq!((raw[0].rows, raw[0].bytes), (4, 100));
    let job = c.job(&job).unwrap().unwrap();
    assert_eq!(
        job.status,
        JobStatus::Success,
        "the job succeeds with the commit"
    );
    assert!(job.finished_at.is_some());
    assert!(
        c.data_files(record.id, 2).unwrap().is_empty(),
        "other versions are apart"
    );
}

pub(super) fn overwrite_replaces_files(c: &dyn Catalog) {
    let record = dataset(c, "sales");
    let job = upload_job(c, &record, "s1", "r1.csv");
    c.commit_upload(&upload(
        &record,
        &job,
        "r1.csv",
        &["data/a.parquet", "data/b.parquet"],
    ))
    .unwrap();
    let before = c.data_files(record.id, 1).unwrap();
    let job = upload_job(c, &record, "s1", "r2.csv");
    let mut second = upload(&record, &job, "r2.csv", &["data/c.parquet"]);
    second.based_on = Some(c.manifest_generation(record.id, 1).unwrap());
    second.replaced = vec![before[0].id];
    c.commit_upload(&second).unwrap();
    let after = c.data_files(record.id, 1).unwrap();
    assert_eq!(paths(&after), ["data/b.parquet", "data/c.parquet"]);
    assert_eq!(
        c.raw_files(record.id, 1).unwrap().len(),
        2,
        "raw files stay"
    );
}

/// A commit whose checks saw other files than the version has now records nothing.
pub(super) fn stale_commit_leaves_nothing(c: &dyn Catalog) {
    let record = dataset(c, "sales");
    let job = upload_job(c, &record, "s1", "r1.csv");
    c.commit_upload(&upload(&record, &job, "r1.csv", &["data/a.parquet"]))
        .unwrap();
    let job = upload_job(c, &record, "s1", "r2.csv");
    let stale = upload(&record, &job, "r2.csv", &["data/b.parquet"]); // based_on: nothing
    assert_eq!(kind_of(c.commit_upload(&stale)), ErrorKind::Conflict);
    assert_nothing_of(c, &record, &job, "r2.csv");
    let mut extra = stale.clone();
    extra.based_on = Some(c.manifest_generation(record.id, 1).unwrap() + 1);
    assert_eq!(kind_of(c.commit_upload(&extra)), ErrorKind::Conflict);
    assert_nothing_of(c, &record, &job, "r2.csv");
}

/// A failing unique check (a data path recorded already) leaves nothing behind.
pub(super) fn duplicate_path_leaves_nothing(c: &dyn Catalog) {
    let record = dataset(c, "sales");
    let job = upload_job(c, &record, "s1", "r1.csv");
    c.commit_upload(&upload(&record, &job, "r1.csv", &["data/a.parquet"]))
        .unwrap();
    let before = c.data_files(record.id, 1).unwrap();
    let job = upload_job(c, &record, "s1", "r2.csv");
    let mut clash = upload(
        &record,
        &job,
        "r2.csv",
        &["data/new.parquet", "data/a.parquet"],
    );
    clash.based_on = Some(c.manifest_generation(record.id, 1).unwrap());
    clash.replaced = ids(&before);
    assert!(c.commit_upload(&clash).is_err());
    assert_nothing_of(c, &record, &job, "r2.csv");
    assert_eq!(
        c.data_files(record.id, 1).unwrap(),
        before,
        "replaced files stay"
    );
}

pub(super) fn duplicate_raw_file_leaves_nothing(c: &dyn Catalog) {
    let record = dataset(c, "sales");
    let job = upload_job(c, &record, "s1", "r1.csv");
    c.commit_upload(&upload(&record, &job, "r1.csv", &["data/a.parquet"]))
        .unwrap();
    let before = c.data_files(record.id, 1).unwrap();
    let job = upload_job(c, &record, "s1", "r1.csv");
    let mut clash = upload(&record, &job, "r1.csv", &["data/b.parquet"]);
    clash.based_on = Some(c.manifest_generation(record.id, 1).unwrap());
    assert!(c.commit_upload(&clash).is_err());
    assert_eq!(c.data_files(record.id, 1).unwrap(), before);
    assert_eq!(c.raw_files(record.id, 1).unwrap().len(), 1);
    assert_eq!(c.job(&job).unwrap().unwrap().status, JobStatus::InProgress);
}

fn assert_nothing_of(c: &dyn Catalog, record: &crate::key::DatasetRecord, job: &str, raw: &str) {
    let files = c.data_files(record.id, 1).unwrap();
    assert!(
        files.iter().all(|f| f.raw_filename != raw),
        "no data file of {raw}"
    );
    let raws = c.raw_files(record.id, 1).unwrap();
    assert!(
        raws.iter().all(|f| f.raw_filename != raw),
        "no raw file {raw}"
    );
    let job = c.job(job).unwrap().unwrap();
    assert_eq!(
        job.status,
        JobStatus::InProgress,
        "the job is not marked SUCCESS"
    );
}

pub(super) fn delete_raw_file(c: &dyn Catalog) {
    let record = dataset(c, "sales");
    let job = upload_job(c, &record, "s1", "r1.csv");
    c.commit_upload(&upload(
        &record,
        &job,
        "r1.csv",
        &["data/a.parquet", "data/b.parquet"],
    ))
    .unwrap();
    let job = upload_job(c, &record, "s1", "r2.csv");
    let mut second = upload(&record, &job, "r2.csv", &["data/c.parquet"]);
    second.based_on = Some(c.manifest_generation(record.id, 1).unwrap());
    c.commit_upload(&second).unwrap();
    let mut removed = c
        .delete_raw_file(record.id, 1, "r1.csv", None)
        .unwrap()
        .expect("found");
    removed.sort();
    assert_eq!(removed, ["data/a.parquet", "data/b.parquet"]);
    assert_eq!(
        paths(&c.data_files(record.id, 1).unwrap()),
        ["data/c.parquet"]
    );
    let raw = c.raw_files(record.id, 1).unwrap();
    assert_eq!(raw.len(), 1);
    assert_eq!(raw[0].raw_filename, "r2.csv");
    assert_eq!(
        c.delete_raw_file(record.id, 1, "r1.csv", None).unwrap(),
        None
    );
    assert_eq!(
        c.delete_raw_file(record.id, 2, "r2.csv", None).unwrap(),
        None
    );
}

pub(super) fn held_files_and_listing(c: &dyn Catalog) {
    let record = dataset(c, "sales");
    let job = upload_job(c, &record, "s1", "r1.csv");
    c.commit_upload(&upload(
        &record,
        &job,
        "r1.csv",
        &["data/z.parquet", "data/a.parquet"],
    ))
    .unwrap();
    let mut held = Vec::new();
    let files = c
        .data_files_held(record.id, 1, &mut |f| held = f.to_vec())
        .unwrap();
    assert_eq!(files, held, "hold sees exactly the files returned");
    assert_eq!(files, c.data_files(record.id, 1).unwrap());
    let stored = c.stored_files().unwrap();
    assert_eq!(
        paths(&stored.data),
        ["data/a.parquet", "data/z.parquet"],
        "by path"
    );
    assert_eq!(stored.raw.len(), 1);
    let raw = &stored.raw[0];
    assert_eq!((raw.key.clone(), raw.version), (record.key.clone(), 1));
    assert_eq!((raw.raw_filename.as_str(), raw.bytes), ("r1.csv", 100));
}

/// A commit whose job was failed meanwhile (a stop, or another node after its lease) is refused
/// and records nothing: a FAILED job never has data stored.
pub(super) fn commit_of_a_failed_job_leaves_nothing(c: &dyn Catalog) {
    let record = dataset(c, "sales");
    let job = upload_job(c, &record, "s1", "r1.csv");
    c.fail_job(&job, &["stopped".to_string()]).unwrap();
    let commit = upload(&record, &job, "r1.csv", &["data/a.parquet"]);
    assert_eq!(kind_of(c.commit_upload(&commit)), ErrorKind::Conflict);
    assert!(c.data_files(record.id, 1).unwrap().is_empty());
    assert!(c.raw_files(record.id, 1).unwrap().is_empty());
    assert_eq!(c.job(&job).unwrap().unwrap().status, JobStatus::Failed);
    let unknown = upload(&record, "no-such-job", "r2.csv", &["data/b.parquet"]);
    assert_eq!(kind_of(c.commit_upload(&unknown)), ErrorKind::Conflict);
    assert!(c.stored_files().unwrap().data.is_empty());
}

/// The cheap reads a commit makes: the ids of the version's files, and the files of some
/// partitions.
pub(super) fn ids_and_files_of_partitions(c: &dyn Catalog) {
    let record = dataset(c, "sales");
    let job = upload_job(c, &record, "s1", "r1.csv");
    let commit = upload(
        &record,
        &job,
        "r1.csv",
        &[
            "p=a/1.parquet",
            "p=b/2.parquet",
            "p=a/3.parquet",
            "4.parquet",
        ],
    );
    c.commit_upload(&commit).unwrap();
    let files = c.data_files(record.id, 1).unwrap();
    assert_eq!(
        c.manifest_generation(record.id, 1).unwrap(),
        files.len() as i64
    );
    assert_eq!(c.manifest_generation(record.id, 2).unwrap(), 0);
    let of = |partitions: &[&str]| {
        let partitions: Vec<String> = partitions.iter().map(|p| p.to_string()).collect();
        let found = c.data_files_in(record.id, 1, &partitions).unwrap();
        paths(&found)
            .into_iter()
            .map(String::from)
            .collect::<Vec<_>>()
    };
    assert_eq!(of(&["p=a"]), ["p=a/1.parquet", "p=a/3.parquet"]);
    assert_eq!(of(&["p=b", ""]), ["p=b/2.parquet", "4.parquet"]);
    assert!(of(&["p=c"]).is_empty());
    assert!(of(&[]).is_empty());
}
