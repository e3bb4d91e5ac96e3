//! Upload profiles: kept per committed raw file, in order, and gone with their raw file.

use super::{dataset, upload, upload_job};
use crate::catalog::Catalog;

pub(super) fn profiles_go_with_their_raw_files(c: &dyn Catalog) {
    let record = dataset(c, "profiled");
    for (raw, path) in [("r1.csv", "data/p1.parquet"), ("r2.csv", "data/p2.parquet")] {
        let job = upload_job(c, &record, "s1", raw);
        let mut commit = upload(&record, &job, raw, &[path]);
        commit.based_on = Some(c.manifest_generation(record.id, 1).unwrap());
        c.commit_upload(&commit).unwrap();
    }
    assert!(c.profiles(record.id, 1).unwrap().is_empty());
    c.record_profile(record.id, 1, "r2.csv", "{\"second\":1}")
        .unwrap();
    c.record_profile(record.id, 1, "r1.csv", "{\"first\":1}")
        .unwrap();
    // A second profile of a raw file changes nothing; one of an unknown raw file is not kept.
    c.record_profile(record.id, 1, "r1.csv", "{\"again\":1}")
        .unwrap();
    c.record_profile(record.id, 1, "nope.csv", "{}").unwrap();
    c.record_profile(record.id, 2, "r1.csv", "{}").unwrap();
    assert_eq!(
        c.profiles(record.id, 1).unwrap(),
        ["{\"second\":1}", "{\"first\":1}"],
        "in the order recorded"
    );
    assert!(c.profiles(record.id, 2).unwrap().is_empty());
    c.delete_raw_file(record.id, 1, "r2.csv", None)
        .unwrap()
        .expect("found");
    assert_eq!(c.profiles(record.id, 1).unwrap(), ["{\"first\":1}"]);
}
