//! Commits that depend on no file (APPEND with no unique column, `based_on: None`) land on any
//! state of the version: nodes appending to one dataset at once never refuse each other.

use super::{dataset, upload, upload_job};
use crate::catalog::Catalog;

pub(super) fn unchecked_appends_never_conflict(c: &dyn Catalog) {
    let record = dataset(c, "appends");
    // Both were "checked" on an empty version; the first commit changes it under the second.
    let jobs: Vec<String> = (0..2)
        .map(|i| upload_job(c, &record, "s1", &format!("r{i}.csv")))
        .collect();
    for (i, job) in jobs.iter().enumerate() {
        let mut commit = upload(
            &record,
            job,
            &format!("r{i}.csv"),
            &[&format!("data/{i}.parquet")],
        );
        commit.based_on = None;
        c.commit_upload(&commit)
            .expect("an unchecked append commits");
    }
    assert_eq!(c.data_files(record.id, 1).unwrap().len(), 2);
    assert_eq!(c.raw_files(record.id, 1).unwrap().len(), 2);
    // The same stale view with a check is refused.
    let job = upload_job(c, &record, "s1", "r9.csv");
    let mut checked = upload(&record, &job, "r9.csv", &["data/9.parquet"]);
    checked.based_on = Some(0);
    assert!(crate::catalog::refusal::is_commit_conflict(
        &c.commit_upload(&checked).unwrap_err()
    ));
}
