//! The refusals catalog operations answer with, built here so every implementation words them
//! the same (clients see them).

use crate::error::Error;
use crate::key::DatasetKey;

/// Creating a dataset that exists (409).
pub(crate) fn dataset_exists(key: &DatasetKey) -> Error {
    Error::conflict(format!(
        "Schema already exists for dataset layer [{}], domain [{}] and dataset [{}]",
        key.layer, key.domain, key.dataset
    ))
}

/// Storing a PROTECTED schema whose protected domain does not exist (any more) (400).
pub(crate) fn no_protected_domain(domain: &str) -> Error {
    Error::invalid(format!("The protected domain '{domain}' does not exist."))
}

/// An upload commit whose version changed after its checks read it (409; the dataset's actor
/// serialises commits, so only another node can cause this).
pub(crate) fn commit_conflict(dataset_id: i64, version: i64) -> Error {
    Error::conflict(format!(
        "The files of dataset {dataset_id} version {version} {CHANGED}: upload it again"
    ))
}

const CHANGED: &str = "changed while this upload was checked";

/// Whether `e` is [`commit_conflict`]: the commit can be checked again on the new files.
pub(crate) fn is_commit_conflict(e: &Error) -> bool {
    e.kind == crate::error::ErrorKind::Conflict
        && matches!(&e.details, crate::error::Details::One(text) if text.contains(CHANGED))
}

/// An upload commit whose job is no longer IN PROGRESS (failed by a stop, or by another node
/// after its heartbeat lapsed): nothing is recorded, so a job never ends FAILED with its data
/// stored (409).
pub(crate) fn job_not_running(job_id: &str) -> Error {
    Error::conflict(format!(
        "Job {job_id} is no longer in progress (it was failed meanwhile): nothing was stored"
    ))
}

/// An as-of read of a commit the version does not have (404): `latest` is its newest (0: none).
pub(crate) fn no_such_commit(asked: &str, latest: i64) -> Error {
    match latest {
        0 => Error::not_found(format!(
            "There is no commit {asked}: this version has no commit yet"
        )),
        _ => Error::not_found(format!(
            "There is no commit {asked} of this version: its commits are 1 to {latest}"
        )),
    }
}

/// An as-of read of a commit past retention (404): its files may be gone.
pub(crate) fn commit_expired(commit: i64, oldest: i64) -> Error {
    Error::not_found(format!(
        "Commit {commit} is past the history's retention (RAPID_HISTORY_KEEP_COMMITS, \
         RAPID_HISTORY_KEEP_SECONDS) and can no longer be read: the oldest readable commit is {oldest}"
    ))
}

/// A rollback across a raw file deletion (409): the deleted upload is gone, so its rows could
/// come back without a raw file to delete them by.
pub(crate) fn rollback_past_deletion(commit: i64, raw_filename: &str) -> Error {
    Error::conflict(format!(
        "Cannot roll back past commit {commit}, which deleted the raw file [{raw_filename}]: \
         deleted uploads are not kept; roll back to commit {commit} or later"
    ))
}
