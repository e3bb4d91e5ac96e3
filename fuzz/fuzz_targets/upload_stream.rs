//! The upload stream path: the body as it arrives from the HTTP edge, split into chunks at
//! fuzzer-chosen points, through the channel into the blocking ingest (CSV parsed while it
//! streams, Parquet written then read), sometimes broken off mid-way. Must end in Ok or an error.
#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use rapid_actors::file_kind::FileKind;
use rapid_actors::ingest::{ingest_stream, Chunk, IngestPlan};
use rapid_actors::schema::ValidSchema;
use rapid_actors::storage::Durability;

#[path = "common.rs"]
mod common;

static SCHEMA: LazyLock<ValidSchema> = LazyLock::new(common::upload_schema);

static DEFAULT_PANIC_HOOK: std::sync::Once = std::sync::Once::new();

fuzz_target!(|data: &[u8]| {
    // libfuzzer-sys's panic hook aborts on every panic, even one the ingest catches (Parquet
    // decoding runs under catch_unwind: the parquet crate panics on some malformed pages). The
    // default hook lets a caught panic pass; an uncaught one still ends in libFuzzer's abort.
    DEFAULT_PANIC_HOOK.call_once(|| drop(std::panic::take_hook()));
    // Byte 0: file kind and whether the body breaks off; byte 1: chunk size seed.
    let (Some(&mode), Some(&seed)) = (data.first(), data.get(1)) else {
        return;
    };
    let body = &data[2..];
    let kind = if mode & 1 == 0 {
        FileKind::Csv
    } else {
        FileKind::Parquet
    };
    let abort = mode & 2 != 0;
    let chunk = 1 + (seed as usize % 64);
    let (tx, rx) = tokio::sync::mpsc::channel::<Chunk>(4);
    let owned = body.to_vec();
    let sender = std::thread::spawn(move || {
        for part in owned.chunks(chunk) {
            if tx
                .blocking_send(Chunk::Data(bytes::Bytes::copy_from_slice(part)))
                .is_err()
            {
                return;
            }
        }
        if abort {
            let _ = tx.blocking_send(Chunk::Abort("client went away".into()));
        }
    });
    let dir = tempfile::tempdir().expect("tempdir");
    let progress = |_: u64| {};
    let plan = IngestPlan {
        schema: &SCHEMA,
        staging: &dir.path().join("data"),
        progress: &progress,
        // Small, so that short inputs reach the value-length refusal too.
        max_value_bytes: 256,
        on_error: Default::default(),
        profile: true,
    };
    let raw = dir.path().join("raw");
    let _ = ingest_stream(kind, rx, &raw, &plan, Durability::Full);
    let _ = sender.join();
});
