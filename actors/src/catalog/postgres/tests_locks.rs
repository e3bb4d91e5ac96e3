//! Locking across connections (as several nodes hold them): upload commits to one dataset are
//! serialised, and failing the jobs a stop left running keeps manifest writers out until its
//! callback returns.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};

use super::tests::{server_url, Schemas};
use crate::catalog::conformance::{new_upload_job, schema_of};
use crate::catalog::interface::{DatasetCatalog, JobCatalog, ManifestCatalog};
use crate::catalog::{NewDataFile, UploadCommit};
use crate::error::ErrorKind;
use crate::job_state::JobStatus;
use crate::key::DatasetKey;
use crate::sensitivity::Sensitivity;

fn commit_of(
    record: &crate::key::DatasetRecord,
    job: &str,
    raw: &str,
    based_on: i64,
) -> UploadCommit {
    UploadCommit {
        dataset_id: record.id,
        version: 1,
        job_id: job.to_string(),
        raw_filename: raw.to_string(),
        original_filename: "u.csv".into(),
        uploaded_by: "node".into(),
        rows: 1,
        raw_bytes: 1,
        files: vec![NewDataFile {
            partition_path: String::new(),
            path: format!("data/{raw}.parquet"),
            rows: 1,
            bytes: 1,
            stats: None,
            unique_keys: Vec::new(),
        }],
        based_on: Some(based_on),
        replaced: Vec::new(),
        backfill: None,
        keys_checked_at: None,
        operation: crate::catalog::CommitOperation::Append,
        profile: None,
    }
}

/// Two catalogs on one database (two nodes' connections) commit, at the same moment, uploads
/// that both checked the same files: each round exactly one wins and the other is refused as a
/// conflict, so the version only ever holds one of the two.
#[test]
fn two_nodes_committing_to_one_dataset_are_serialised() {
    let Some(url) = server_url("two_nodes_committing_to_one_dataset_are_serialised") else {
        return;
    };
    let schemas = Schemas::new(url);
    let schema = schemas.schema();
    let nodes = [
        Arc::new(schemas.catalog_in(&schema)),
        Arc::new(schemas.catalog_in(&schema)),
    ];
    let key = DatasetKey::new("raw", "sales", "shared");
    let record = nodes[0]
        .create_dataset(&key, "shared", Sensitivity::Public, &schema_of(1))
        .unwrap();
    const ROUNDS: usize = 20;
    for round in 0..ROUNDS {
        let based_on = nodes[0].manifest_generation(record.id, 1).unwrap();
        let barrier = Arc::new(Barrier::new(2));
        let outcomes: Vec<_> = nodes
            .iter()
            .enumerate()
            .map(|(n, node)| {
                let (node, barrier, record, based_on) =
                    (node.clone(), barrier.clone(), record.clone(), based_on);
                std::thread::spawn(move || {
                    let raw = format!("r{round}n{n}");
                    let job = new_upload_job(node.as_ref(), &record, &raw);
                    barrier.wait();
                    node.commit_upload(&commit_of(&record, &job, &raw, based_on))
                })
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|t| t.join().unwrap())
            .collect();
        let won = outcomes.iter().filter(|o| o.is_ok()).count();
        let conflicts = outcomes
            .iter()
            .filter(|o| matches!(o, Err(e) if e.kind == ErrorKind::Conflict))
            .count();
        assert_eq!((won, conflicts), (1, 1), "round {round}: {outcomes:?}");
    }
    let files = nodes[1].data_files(record.id, 1).unwrap();
    assert_eq!(files.len(), ROUNDS, "one file per round");
}

/// `fail_in_progress_jobs` commits the FAILED jobs before its callback runs (the callback may end
/// the process), and an upload commit made meanwhile by another connection waits for the
/// callback, then finds its job FAILED and records nothing.
#[test]
fn failed_jobs_are_committed_and_manifest_writers_wait_for_the_callback() {
    let Some(url) =
        server_url("failed_jobs_are_committed_and_manifest_writers_wait_for_the_callback")
    else {
        return;
    };
    let schemas = Schemas::new(url);
    let schema = schemas.schema();
    let (node, other) = (
        schemas.catalog_in(&schema),
        Arc::new(schemas.catalog_in(&schema)),
    );
    let key = DatasetKey::new("raw", "sales", "stopping");
    let record = node
        .create_dataset(&key, "stopping", Sensitivity::Public, &schema_of(1))
        .unwrap();
    let running = new_upload_job(&node, &record, "r1");
    let late = new_upload_job(&node, &record, "r2");
    let after_returned = Arc::new(AtomicBool::new(false));
    let mut writer = None;
    let failed = node
        .fail_in_progress_jobs("node-a", &["stopped".to_string()], &mut |n, listed| {
            assert_eq!(n, 2);
            let seen = other.job(&running).unwrap().unwrap().status;
            assert_eq!(seen, JobStatus::Failed, "committed before the callback");
            let (other, record, late, returned) = (
                other.clone(),
                record.clone(),
                late.clone(),
                after_returned.clone(),
            );
            writer = Some(std::thread::spawn(move || {
                let outcome = other.commit_upload(&commit_of(&record, &late, "r2", 0));
                (outcome, returned.load(Ordering::SeqCst))
            }));
            // Time for the writer to reach its insert (it must wait there, however long).
            std::thread::sleep(std::time::Duration::from_millis(300));
            assert!(
                listed()?.data.is_empty(),
                "nothing committed under the callback"
            );
            after_returned.store(true, Ordering::SeqCst);
            Ok(())
        })
        .unwrap();
    assert_eq!(failed, 2);
    let (outcome, after_callback) = writer.unwrap().join().unwrap();
    assert!(
        after_callback,
        "the commit ended only after the callback returned"
    );
    assert_eq!(outcome.err().map(|e| e.kind), Some(ErrorKind::Conflict));
    assert_eq!(node.job(&late).unwrap().unwrap().status, JobStatus::Failed);
    assert!(
        node.data_files(record.id, 1).unwrap().is_empty(),
        "nothing recorded"
    );
    assert!(node.raw_files(record.id, 1).unwrap().is_empty());
}
