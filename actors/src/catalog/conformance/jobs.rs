//! Jobs: creation, steps, progress, endings, listings, failing what a stop left running.

use super::{dataset, upload, upload_job, NODE};
use crate::catalog::Catalog;
use crate::job_state::{JobKind, JobReport, JobStatus, JobStep, NewJob};
use crate::key::DatasetRecord;

pub(super) fn upload_job_life(c: &dyn Catalog) {
    let record = dataset(c, "sales");
    assert!(c.job("no-such-job").unwrap().is_none());
    let id = upload_job(c, &record, "s1", "r1.csv");
    let job = c.job(&id).unwrap().expect("created");
    assert_eq!(
        (job.kind, job.status, job.step),
        (JobKind::Upload, JobStatus::InProgress, JobStep::Validation)
    );
    assert_eq!(
        (
            job.layer.as_str(),
            job.domain.as_str(),
            job.dataset.as_str()
        ),
        ("raw", "sales", "sales")
    );
    assert_eq!(
        (job.filename.as_deref(), job.raw_filename.as_deref()),
        (Some("upload.csv"), Some("r1.csv"))
    );
    assert_eq!(
        (job.version, job.rows_processed, job.subject_id.as_str()),
        (1, 0, "s1")
    );
    assert!(job.errors.is_none() && job.finished_at.is_none() && job.result_url.is_none());
    assert!(c
        .advance_job(&id, JobStep::Validation, JobStep::Commit)
        .unwrap());
    assert!(
        !c.advance_job(&id, JobStep::Validation, JobStep::Commit)
            .unwrap(),
        "not there any more"
    );
    assert_eq!(c.job(&id).unwrap().unwrap().step, JobStep::Commit);
    c.set_job_progress(&id, 42).unwrap();
    assert_eq!(c.job(&id).unwrap().unwrap().rows_processed, 42);
    let errors = vec!["first".to_string(), "second".to_string()];
    c.fail_job(&id, &errors).unwrap();
    let failed = c.job(&id).unwrap().unwrap();
    assert_eq!(failed.status, JobStatus::Failed);
    assert_eq!(failed.errors.as_deref(), Some(errors.as_slice()));
    assert!(failed.finished_at.is_some());
    c.fail_job(&id, &["later".to_string()]).unwrap();
    c.succeed_job_with_url(&id, "http://x").unwrap();
    let after = c.job(&id).unwrap().unwrap();
    assert_eq!(
        after.errors.as_deref(),
        Some(errors.as_slice()),
        "a finished job stays as it ended"
    );
    assert_eq!((after.status, after.result_url), (JobStatus::Failed, None));
    assert!(!c.advance_job(&id, JobStep::Commit, JobStep::Done).unwrap());
    // A refused upload fails with the link to its report; only a running job takes it.
    let refused = upload_job(c, &record, "s1", "refused.csv");
    assert_eq!(c.job(&refused).unwrap().unwrap().rows_rejected, 0);
    let report = JobReport {
        url: Some("http://report".into()),
        rows_rejected: 7,
        quarantine_url: None,
    };
    c.fail_job_with_report(&refused, &errors, &report).unwrap();
    let view = c.job(&refused).unwrap().unwrap();
    assert_eq!(view.status, JobStatus::Failed);
    assert_eq!(view.errors.as_deref(), Some(errors.as_slice()));
    assert_eq!(view.report_url.as_deref(), Some("http://report"));
    assert_eq!((view.rows_rejected, view.result_url), (7, None));
    c.fail_job_with_report(&id, &errors, &report).unwrap();
    let late = c.job(&id).unwrap().unwrap();
    assert_eq!((late.report_url, late.rows_rejected), (None, 0));
    // A committed upload cannot fail afterwards.
    let done = upload_job(c, &record, "s1", "r2.csv");
    c.commit_upload(&upload(&record, &done, "r2.csv", &["data/a.parquet"]))
        .unwrap();
    c.fail_job(&done, &errors).unwrap();
    assert_eq!(c.job(&done).unwrap().unwrap().status, JobStatus::Success);
}

pub(super) fn query_job_succeeds_with_url(c: &dyn Catalog) {
    let record = dataset(c, "sales");
    let job = NewJob {
        kind: JobKind::Query,
        key: &record.key,
        version: 1,
        subject_id: "s1",
        filename: None,
        raw_filename: None,
    };
    c.create_job("q1", NODE, &job).unwrap();
    let started = c.job("q1").unwrap().unwrap();
    assert_eq!(
        (started.kind, started.step),
        (JobKind::Query, JobStep::Running)
    );
    assert!(
        c.create_job("q1", NODE, &job).is_err(),
        "a job id is used once"
    );
    c.succeed_job_with_url("q1", "http://host/api/results/q1.csv")
        .unwrap();
    let done = c.job("q1").unwrap().unwrap();
    assert_eq!(
        (done.status, done.step),
        (JobStatus::Success, JobStep::Done)
    );
    assert_eq!(
        done.result_url.as_deref(),
        Some("http://host/api/results/q1.csv")
    );
    assert!(done.finished_at.is_some());
}

pub(super) fn listing_newest_first_per_subject(c: &dyn Catalog) {
    let record = dataset(c, "sales");
    let mut made = Vec::new();
    for (n, subject) in ["a", "b", "a", "a"].iter().enumerate() {
        made.push(upload_job(c, &record, subject, &format!("r{n}.csv")));
    }
    let all: Vec<String> = c
        .jobs(None, 100)
        .unwrap()
        .into_iter()
        .map(|j| j.job_id)
        .collect();
    let newest_first: Vec<String> = made.iter().rev().cloned().collect();
    assert_eq!(all, newest_first);
    let of_a: Vec<String> = c
        .jobs(Some("a"), 100)
        .unwrap()
        .into_iter()
        .map(|j| j.job_id)
        .collect();
    assert_eq!(of_a, [made[3].clone(), made[2].clone(), made[0].clone()]);
    assert_eq!(c.jobs(Some("a"), 2).unwrap().len(), 2, "limit");
    assert!(c.jobs(Some("nobody"), 100).unwrap().is_empty());
}

pub(super) fn fail_in_progress_jobs(c: &dyn Catalog) {
    let record = dataset(c, "sales");
    let running = [
        upload_job(c, &record, "s1", "r1.csv"),
        upload_job(c, &record, "s1", "r2.csv"),
    ];
    let done = upload_job(c, &record, "s1", "r3.csv");
    c.commit_upload(&upload(&record, &done, "r3.csv", &["data/a.parquet"]))
        .unwrap();
    let errors = vec!["stopped".to_string()];
    let mut seen = None;
    let failed = c
        .fail_in_progress_jobs(NODE, &errors, &mut |n, listed| {
            seen = Some((n, listed()?.data.len()));
            Ok(())
        })
        .unwrap();
    assert_eq!(failed, 2);
    assert_eq!(
        seen,
        Some((2, 1)),
        "after sees the count and can read the manifest"
    );
    for id in &running {
        let job = c.job(id).unwrap().unwrap();
        assert_eq!(job.status, JobStatus::Failed);
        assert_eq!(job.errors.as_deref(), Some(errors.as_slice()));
    }
    assert_eq!(c.job(&done).unwrap().unwrap().status, JobStatus::Success);
    assert_eq!(
        c.fail_in_progress_jobs(NODE, &errors, &mut |_, _| Ok(()))
            .unwrap(),
        0
    );
}

/// A new upload job of `record` run by `node`; returns its id.
fn job_on(c: &dyn Catalog, record: &DatasetRecord, node: &str) -> String {
    let id = uuid::Uuid::new_v4().to_string();
    let job = NewJob {
        kind: JobKind::Upload,
        key: &record.key,
        version: 1,
        subject_id: "s1",
        filename: Some("upload.csv"),
        raw_filename: Some("raw.csv"),
    };
    c.create_job(&id, node, &job).expect("create job");
    id
}

fn status(c: &dyn Catalog, id: &str) -> JobStatus {
    c.job(id).unwrap().expect("job").status
}

/// A node's stop or start fails its own running jobs, not those of the other nodes.
pub(super) fn nodes_fail_only_their_own_jobs(c: &dyn Catalog) {
    let record = dataset(c, "sales");
    let (mine, theirs) = (job_on(c, &record, "node-a"), job_on(c, &record, "node-b"));
    let errors = vec!["stopped".to_string()];
    let failed = c
        .fail_in_progress_jobs("node-a", &errors, &mut |n, _| {
            assert_eq!(n, 1);
            Ok(())
        })
        .unwrap();
    assert_eq!(failed, 1);
    assert_eq!(status(c, &mine), JobStatus::Failed);
    assert_eq!(status(c, &theirs), JobStatus::InProgress);
    assert_eq!(
        c.fail_in_progress_jobs("node-b", &errors, &mut |_, _| Ok(()))
            .unwrap(),
        1
    );
    assert_eq!(status(c, &theirs), JobStatus::Failed);
}

/// Jobs whose heartbeat is older than the lease fail, whichever node ran them; a node's
/// heartbeat keeps its running jobs alive.
pub(super) fn expired_heartbeats_fail_jobs(c: &dyn Catalog) {
    let record = dataset(c, "sales");
    let (silent, beating) = (job_on(c, &record, "node-a"), job_on(c, &record, "node-b"));
    let lease = std::time::Duration::from_secs(1);
    let errors = vec!["node gone".to_string()];
    assert_eq!(c.fail_expired_jobs(lease, &errors).unwrap(), 0, "fresh");
    std::thread::sleep(lease + std::time::Duration::from_millis(200));
    assert_eq!(c.heartbeat_jobs("node-b").unwrap(), 1);
    assert_eq!(c.fail_expired_jobs(lease, &errors).unwrap(), 1);
    let failed = c.job(&silent).unwrap().unwrap();
    assert_eq!(failed.status, JobStatus::Failed);
    assert_eq!(failed.errors.as_deref(), Some(errors.as_slice()));
    assert_eq!(status(c, &beating), JobStatus::InProgress);
    assert_eq!(
        c.heartbeat_jobs("node-a").unwrap(),
        0,
        "finished jobs beat no more"
    );
    assert_eq!(c.heartbeat_jobs("node-c").unwrap(), 0);
}

/// A quarantining upload links its report and quarantine while it commits, not after.
pub(super) fn quarantine_links(c: &dyn Catalog) {
    let record = dataset(c, "quarantined");
    let kept = upload_job(c, &record, "s1", "kept.csv");
    let quarantine = JobReport {
        url: Some("http://report".into()),
        rows_rejected: 3,
        quarantine_url: Some("http://quarantine".into()),
    };
    c.record_job_report(&kept, &quarantine).unwrap();
    let view = c.job(&kept).unwrap().unwrap();
    assert_eq!(view.status, JobStatus::InProgress);
    assert_eq!(view.quarantine_url.as_deref(), Some("http://quarantine"));
    assert_eq!(
        (view.rows_rejected, view.report_url.as_deref()),
        (3, Some("http://report"))
    );
    c.fail_job(&kept, &["late".into()]).unwrap();
    let failed = upload_job(c, &record, "s1", "failed.csv");
    c.fail_job(&failed, &["refused".into()]).unwrap();
    c.record_job_report(&failed, &quarantine).unwrap();
    assert_eq!(
        c.job(&failed).unwrap().unwrap().quarantine_url,
        None,
        "a finished job stays"
    );
}
