//! The CSV validation path of an upload: any bytes as the uploaded file, against a schema with
//! every type, check, `unique` and a partition column. Must end in Ok or an error, never a panic.
#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use rapid_actors::ingest::{ingest_csv, IngestPlan};
use rapid_actors::schema::ValidSchema;

#[path = "common.rs"]
mod common;

static SCHEMA: LazyLock<ValidSchema> = LazyLock::new(common::upload_schema);

fuzz_target!(|data: &[u8]| {
    let dir = tempfile::tempdir().expect("tempdir");
    let progress = |_: u64| {};
    let plan = IngestPlan {
        schema: &SCHEMA,
        staging: dir.path(),
        progress: &progress,
        // Small, so that short inputs reach the value-length refusal too.
        max_value_bytes: 256,
        on_error: Default::default(),
        profile: true,
    };
    let _ = ingest_csv(data, &plan);
});
