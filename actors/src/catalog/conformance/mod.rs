//! The catalog conformance suite: every method of the [`Catalog`] interface, written once against
//! `&dyn Catalog`, so that every implementation runs the same cases. An implementation's test
//! calls [`suite`] with a function that makes a fresh, empty catalog per case (SQLite: a new temp
//! folder, `catalog/sqlite/tests.rs`; PostgreSQL: a new database or schema).

mod appends;
mod auth_version;
mod changes;
mod datasets;
mod events;
mod history;
mod ids;
mod jobs;
mod key_runs;
mod manifest;
mod policies;
mod profiles;
mod subjects;
mod swaps;
mod unique_keys;

use crate::catalog::{Catalog, NewDataFile, SchemaVersion, SharedCatalog, UploadCommit};
use crate::error::{ErrorKind, Result};
use crate::job_state::{JobKind, NewJob};
use crate::key::{DatasetKey, DatasetRecord};
use crate::sensitivity::Sensitivity;

type Case = fn(&dyn Catalog);

/// The node the cases' jobs run on.
const NODE: &str = "node-a";

/// Every case, by name.
const CASES: &[(&str, Case)] = &[
    (
        "events::outbox_follows_changes",
        events::outbox_follows_changes,
    ),
    (
        "events::deliveries_are_leased_retried_and_redelivered",
        events::deliveries_are_leased_retried_and_redelivered,
    ),
    (
        "datasets::create_find_and_list",
        datasets::create_find_and_list,
    ),
    (
        "datasets::protected_schema_needs_its_domain",
        datasets::protected_schema_needs_its_domain,
    ),
    ("datasets::schema_versions", datasets::schema_versions),
    (
        "datasets::delete_removes_everything",
        datasets::delete_removes_everything,
    ),
    (
        "datasets::last_update_and_uploader",
        datasets::last_update_and_uploader,
    ),
    ("manifest::commit_round_trip", manifest::commit_round_trip),
    (
        "manifest::overwrite_replaces_files",
        manifest::overwrite_replaces_files,
    ),
    (
        "manifest::stale_commit_leaves_nothing",
        manifest::stale_commit_leaves_nothing,
    ),
    (
        "manifest::duplicate_path_leaves_nothing",
        manifest::duplicate_path_leaves_nothing,
    ),
    (
        "manifest::duplicate_raw_file_leaves_nothing",
        manifest::duplicate_raw_file_leaves_nothing,
    ),
    ("manifest::delete_raw_file", manifest::delete_raw_file),
    (
        "manifest::commit_of_a_failed_job_leaves_nothing",
        manifest::commit_of_a_failed_job_leaves_nothing,
    ),
    (
        "manifest::held_files_and_listing",
        manifest::held_files_and_listing,
    ),
    ("jobs::upload_job_life", jobs::upload_job_life),
    ("jobs::quarantine_links", jobs::quarantine_links),
    ("policies::policy_per_version", policies::policy_per_version),
    ("policies::subject_attributes", policies::subject_attributes),
    (
        "profiles::profiles_go_with_their_raw_files",
        profiles::profiles_go_with_their_raw_files,
    ),
    (
        "jobs::query_job_succeeds_with_url",
        jobs::query_job_succeeds_with_url,
    ),
    (
        "jobs::listing_newest_first_per_subject",
        jobs::listing_newest_first_per_subject,
    ),
    ("jobs::fail_in_progress_jobs", jobs::fail_in_progress_jobs),
    (
        "jobs::nodes_fail_only_their_own_jobs",
        jobs::nodes_fail_only_their_own_jobs,
    ),
    (
        "jobs::expired_heartbeats_fail_jobs",
        jobs::expired_heartbeats_fail_jobs,
    ),
    (
        "subjects::create_and_read_back",
        subjects::create_and_read_back,
    ),
    (
        "subjects::names_and_emails_are_unique",
        subjects::names_and_emails_are_unique,
    ),
    ("subjects::delete_subjects", subjects::delete_subjects),
    ("subjects::credentials_change", subjects::credentials_change),
    (
        "subjects::permissions_are_replaced",
        subjects::permissions_are_replaced,
    ),
    ("subjects::protected_domains", subjects::protected_domains),
    ("subjects::admin_bootstrap", subjects::admin_bootstrap),
    (
        "subjects::legacy_key_and_ping",
        subjects::legacy_key_and_ping,
    ),
    (
        "subjects::figures_count_objects",
        subjects::figures_count_objects,
    ),
    (
        "auth_version::grows_with_every_change",
        auth_version::grows_with_every_change,
    ),
    (
        "ids::dataset_ids_are_never_reused",
        ids::dataset_ids_are_never_reused,
    ),
    (
        "appends::unchecked_appends_never_conflict",
        appends::unchecked_appends_never_conflict,
    ),
    (
        "manifest::ids_and_files_of_partitions",
        manifest::ids_and_files_of_partitions,
    ),
    (
        "unique_keys::keys_follow_their_files",
        unique_keys::keys_follow_their_files,
    ),
    (
        "unique_keys::backfill_and_refusals",
        unique_keys::backfill_and_refusals,
    ),
    (
        "key_runs::runs_merge_and_forget_dead_keys",
        key_runs::runs_merge_and_forget_dead_keys,
    ),
    (
        "key_runs::large_runs_span_blocks",
        key_runs::large_runs_span_blocks,
    ),
    (
        "key_runs::checks_meet_the_runs_written_since",
        key_runs::checks_meet_the_runs_written_since,
    ),
    (
        "swaps::merged_files_keep_keys_and_lose_a_raw_file_exactly",
        swaps::merged_files_keep_keys_and_lose_a_raw_file_exactly,
    ),
    (
        "swaps::overwrite_of_a_merged_partition_drops_its_keys",
        swaps::overwrite_of_a_merged_partition_drops_its_keys,
    ),
    (
        "history::every_change_is_a_numbered_readable_commit",
        history::every_change_is_a_numbered_readable_commit,
    ),
    (
        "history::as_of_refusals_and_retention",
        history::as_of_refusals_and_retention,
    ),
    (
        "history::rollback_relists_files_and_is_undone",
        history::rollback_relists_files_and_is_undone,
    ),
    (
        "history::erasure_rewrites_retired_files_and_marks_the_commit",
        history::erasure_rewrites_retired_files_and_marks_the_commit,
    ),
    (
        "changes::commit_changes_list_what_each_commit_added_and_removed",
        changes::commit_changes_list_what_each_commit_added_and_removed,
    ),
];

/// Runs every case, each on a fresh catalog from `make`; a failing case panics naming itself.
pub(crate) fn suite(make: &dyn Fn() -> SharedCatalog) {
    for (name, case) in CASES {
        let catalog = make();
        let outcome =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| case(catalog.as_ref())));
        if let Err(panic) = outcome {
            let what = crate::error::panic_message(&*panic).unwrap_or_default();
            panic!("catalog conformance case {name} failed: {what}");
        }
    }
}

// ---- shared helpers ------------------------------------------------------------------------

fn key(dataset: &str) -> DatasetKey {
    DatasetKey::new("raw", "sales", dataset)
}

fn schema(version: i64) -> SchemaVersion {
    SchemaVersion {
        version,
        json: format!("{{\"version\":{version}}}"),
        protected_domain: None,
    }
}

/// A PUBLIC dataset `name` in raw/sales at version 1.
fn dataset(c: &dyn Catalog, name: &str) -> DatasetRecord {
    c.create_dataset(&key(name), name, Sensitivity::Public, &schema(1))
        .expect("create dataset")
}

/// A new upload job of `subject` on `record`'s version 1; returns its id.
fn upload_job(c: &dyn Catalog, record: &DatasetRecord, subject: &str, raw: &str) -> String {
    let id = uuid::Uuid::new_v4().to_string();
    let job = NewJob {
        kind: JobKind::Upload,
        key: &record.key,
        version: 1,
        subject_id: subject,
        filename: Some("upload.csv"),
        raw_filename: Some(raw),
    };
    c.create_job(&id, NODE, &job).expect("create job");
    id
}

/// An upload commit of raw file `raw` with one data file per path (2 rows, 10 bytes and bounds
/// naming the path, each).
fn upload(record: &DatasetRecord, job_id: &str, raw: &str, paths: &[&str]) -> UploadCommit {
    UploadCommit {
        dataset_id: record.id,
        version: 1,
        job_id: job_id.to_string(),
        raw_filename: raw.to_string(),
        original_filename: "upload.csv".to_string(),
        uploaded_by: "uploader".to_string(),
        rows: 2 * paths.len() as i64,
        raw_bytes: 100,
        files: paths
            .iter()
            .map(|p| NewDataFile {
                partition_path: p.rsplit_once('/').map_or("", |(dir, _)| dir).to_string(),
                path: p.to_string(),
                rows: 2,
                bytes: 10,
                stats: Some(format!(r#"{{"path": ["{p}", "{p}", 0]}}"#)),
                unique_keys: Vec::new(),
            })
            .collect(),
        based_on: Some(0),
        replaced: Vec::new(),
        backfill: None,
        keys_checked_at: None,
        operation: crate::catalog::CommitOperation::Append,
        profile: None,
    }
}

/// The error kind of a result that must have failed.
fn kind_of<T: std::fmt::Debug>(r: Result<T>) -> ErrorKind {
    match r {
        Ok(v) => panic!("expected an error, got {v:?}"),
        Err(e) => e.kind,
    }
}

// ---- for the implementations' own tests ----------------------------------------------------

/// The version-`n` schema the cases store.
pub(crate) fn schema_of(version: i64) -> SchemaVersion {
    schema(version)
}

/// A new upload job of raw file `raw` on `record`; returns its id.
pub(crate) fn new_upload_job(c: &dyn Catalog, record: &DatasetRecord, raw: &str) -> String {
    upload_job(c, record, "s1", raw)
}

/// The mean wall time of one `commit_upload`, over `n` commits in a row to one new dataset (each
/// based on the files before it, as the dataset actor does; only the commit call is timed).
pub(crate) fn commit_latency(c: &dyn Catalog, n: usize) -> std::time::Duration {
    let record = dataset(c, "latency");
    let mut spent = std::time::Duration::ZERO;
    for i in 0..n {
        let raw = format!("r{i}.csv");
        let job = upload_job(c, &record, "s1", &raw);
        let mut commit = upload(&record, &job, &raw, &[&format!("data/latency/{i}.parquet")]);
        commit.based_on = Some(c.manifest_generation(record.id, 1).expect("generation"));
        let started = std::time::Instant::now();
        c.commit_upload(&commit).expect("commit");
        spent += started.elapsed();
    }
    assert_eq!(c.data_files(record.id, 1).unwrap().len(), n);
    spent / n.max(1) as u32
}
