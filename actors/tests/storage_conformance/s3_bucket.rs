//! The conformance suite's S3 line: every check against the server `RAPID_TEST_S3_URL` names,
//! each under a fresh prefix of its bucket, and the checks only a remote store needs.

use std::sync::Arc;

use rapid_actors::storage::{ObjectStorage, S3Objects};

use super::{checks, Subject};

/// The S3 server's bucket URL, or `None` after saying why the S3 checks are skipped (a failure
/// instead when `RAPID_REQUIRE_S3=1`).
fn s3_url() -> Option<String> {
    match std::env::var("RAPID_TEST_S3_URL") {
        Ok(url) if !url.trim().is_empty() => Some(url.trim().trim_end_matches('/').to_string()),
        _ if std::env::var("RAPID_REQUIRE_S3").is_ok_and(|v| v == "1") => {
            panic!("RAPID_REQUIRE_S3=1 but RAPID_TEST_S3_URL is not set (scripts/garage.sh)")
        }
        _ => {
            eprintln!("skipped: RAPID_TEST_S3_URL is not set (source scripts/garage.sh to run the S3 checks)");
            None
        }
    }
}

/// Removes every object under its store's prefix when the check ends.
struct EmptyOnDrop(Arc<dyn ObjectStorage>);

impl Drop for EmptyOnDrop {
    fn drop(&mut self) {
        let _ = self.0.delete_prefix("");
    }
}

/// A store under a fresh prefix of the test bucket, so every check starts empty.
fn s3_bucket() -> Option<Subject> {
    let url = format!(
        "{}/conformance-{}",
        s3_url()?,
        uuid::Uuid::new_v4().simple()
    );
    let grace = std::time::Duration::from_secs(3600);
    let objects: Arc<dyn ObjectStorage> = Arc::new(S3Objects::from_url(&url, grace).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let staging = dir.path().to_path_buf();
    Some(Subject {
        _keep: vec![Box::new(EmptyOnDrop(objects.clone())), Box::new(dir)],
        objects,
        staging,
    })
}

conformance!(s3, s3_bucket);

/// The blocking methods bridge to the store's own runtime: they work from a plain thread, from
/// `spawn_blocking`, and even on an async worker thread (where `Handle::block_on` would panic),
/// and the store can be dropped inside async code.
#[test]
fn s3_blocking_calls_work_from_any_thread() {
    let Some(subject) = s3_bucket() else { return };
    subject.put("raw/l/d/s/1/a.csv", b"a,b\n1,2\n");
    let objects = subject.objects.clone();
    let from_thread = std::thread::spawn(move || objects.size("raw/l/d/s/1/a.csv").unwrap());
    assert_eq!(from_thread.join().unwrap(), 8);

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let objects = subject.objects.clone();
    let listed = rt.block_on(async move {
        tokio::task::spawn_blocking(move || objects.list("raw").unwrap())
            .await
            .unwrap()
    });
    assert_eq!(listed.len(), 1);

    let objects = subject.objects.clone();
    let on_worker = rt.block_on(async move {
        tokio::spawn(async move { objects.read_range("raw/l/d/s/1/a.csv", 0..3).unwrap() })
            .await
            .unwrap()
    });
    assert_eq!(on_worker.as_ref(), b"a,b");

    let url = s3_url().unwrap();
    rt.block_on(async move {
        let store = S3Objects::from_url(&url, std::time::Duration::ZERO).unwrap();
        assert!(store.exists("raw/none").is_ok());
        drop(store);
    });
}

/// Files larger than one part go up in parts and come back whole.
#[test]
fn s3_large_objects_are_put_in_parts() {
    let Some(subject) = s3_bucket() else { return };
    let bytes: Vec<u8> = (0..(20u32 << 20) + 17).map(|i| (i % 241) as u8).collect();
    subject.put("raw/l/d/s/1/big.csv", &bytes);
    assert_eq!(
        subject.objects.size("raw/l/d/s/1/big.csv").unwrap(),
        bytes.len() as u64
    );
    assert_eq!(subject.read("raw/l/d/s/1/big.csv"), bytes);
}
