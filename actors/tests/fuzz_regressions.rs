//! Inputs the fuzz targets (fuzz/) found crashing, kept as tests: each must now end in an error
//! (the client's 422), never a panic.

use rapid_actors::error::Error;
use rapid_actors::file_kind::FileKind;
use rapid_actors::ingest::{ingest_stream, messages, Chunk, IngestPlan};
use rapid_actors::storage::Durability;

// The fuzz targets' schema (every type, check and `unique`), so an input replays as it crashed.
#[path = "../../fuzz/fuzz_targets/common.rs"]
mod common;

/// `body` streamed in 33-byte chunks into a Parquet upload, as the fuzz target sent it.
fn ingest_parquet_body(body: &'static [u8], max_value_bytes: usize) -> Result<(), Error> {
    let schema = common::upload_schema();
    let dir = tempfile::tempdir().unwrap();
    let (tx, rx) = tokio::sync::mpsc::channel::<Chunk>(4);
    let sender = std::thread::spawn(move || {
        for part in body.chunks(33) {
            tx.blocking_send(Chunk::Data(bytes::Bytes::copy_from_slice(part)))
                .unwrap();
        }
    });
    let progress = |_: u64| {};
    let plan = IngestPlan {
        schema: &schema,
        staging: &dir.path().join("data"),
        progress: &progress,
        max_value_bytes,
        on_error: Default::default(),
        profile: true,
    };
    let raw = dir.path().join("raw");
    let result = ingest_stream(FileKind::Parquet, rx, &raw, &plan, Durability::Full);
    sender.join().unwrap();
    result.map(|_| ())
}

/// upload_stream: a Parquet file whose embedded Arrow schema (footer metadata `ARROW:schema`)
/// names an unknown type id made arrow-ipc panic (`not implemented: Type <UNKNOWN 109>`).
#[test]
fn a_parquet_file_with_a_malformed_embedded_arrow_schema_is_refused() {
    let err = ingest_parquet_body(include_bytes!("data/parquet-bad-arrow-schema.parquet"), 256)
        .expect_err("the file does not match the schema");
    assert!(!messages(&err).is_empty(), "{err}");
}

/// upload_stream: a data page whose definition levels run past the page made the parquet
/// crate panic while decoding (`offset + len out of bounds` in arrow-buffer's bit iterator).
#[test]
fn a_parquet_page_with_definition_levels_past_its_end_is_refused() {
    let err = ingest_parquet_body(include_bytes!("data/parquet-bad-def-levels.parquet"), 256)
        .expect_err("the file cannot be decoded");
    let shown = messages(&err).join("; ");
    assert!(shown.contains("cannot be read"), "{shown}");
}

/// upload_stream: a footer declaring a column chunk at a negative offset made the parquet
/// crate's `byte_range` assert while the pages were being checked.
#[test]
fn a_parquet_column_chunk_at_a_negative_offset_is_refused() {
    let err = ingest_parquet_body(
        include_bytes!("data/parquet-negative-chunk-offset.parquet"),
        256,
    )
    .expect_err("the file cannot be read");
    let shown = messages(&err).join("; ");
    assert!(shown.contains("negative offset"), "{shown}");
}
