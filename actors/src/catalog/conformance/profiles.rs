//! Upload profiles: kept by the upload's commit, in order, and gone with their raw file.

use super::{dataset, upload, upload_job};
use crate::catalog::Catalog;
use crate::job_state::JobStatus;

pub(super) fn profiles_go_with_their_raw_files(c: &dyn Catalog) {
    let record = dataset(c, "profiled");
    let uploads = [
        ("r2.csv", Some("{\"second\":1}")),
        ("r1.csv", Some("{\"first\":1}")),
        ("r3.csv", None),
    ];
    let mut done_job = String::new();
    for (raw, profile) in uploads {
        let job = upload_job(c, &record, "s1", raw);
        let mut commit = upload(&record, &job, raw, &[&format!("data/{raw}.parquet")]);
        commit.based_on = Some(c.manifest_generation(record.id, 1).unwrap());
        commit.profile = profile.map(str::to_string);
        c.commit_upload(&commit).unwrap();
        // The commit that makes the job SUCCESS has kept the profile already.
        assert_eq!(c.job(&job).unwrap().unwrap().status, JobStatus::Success);
        if let Some(profile) = profile {
            assert!(c
                .profiles(record.id, 1)
                .unwrap()
                .iter()
                .any(|(r, p)| p == profile && r == raw));
        }
        done_job = job;
    }
    assert_eq!(
        texts(c, record.id),
        ["{\"second\":1}", "{\"first\":1}"],
        "in the order committed, none for an upload without one"
    );
    assert!(c.profiles(record.id, 2).unwrap().is_empty());

    // A refused commit (its job is SUCCESS already) keeps no profile.
    let mut refused = upload(&record, &done_job, "r4.csv", &["data/r4.csv.parquet"]);
    refused.based_on = Some(c.manifest_generation(record.id, 1).unwrap());
    refused.profile = Some("{\"refused\":1}".into());
    assert!(c.commit_upload(&refused).is_err());
    assert_eq!(c.profiles(record.id, 1).unwrap().len(), 2);

    c.delete_raw_file(record.id, 1, "r2.csv", None)
        .unwrap()
        .expect("found");
    assert_eq!(
        c.profiles(record.id, 1).unwrap(),
        [("r1.csv".to_string(), "{\"first\":1}".to_string())]
    );
}

fn texts(c: &dyn Catalog, id: i64) -> Vec<String> {
    c.profiles(id, 1)
        .unwrap()
        .into_iter()
        .map(|(_, p)| p)
        .collect()
}
