//! Inputs the fuzz targets (fuzz/) found crashing, kept as tests: each must now end in an error
//! (the client's 422), never a panic.

use rapid_actors::file_kind::FileKind;
use rapid_actors::ingest::{ingest_stream, messages, Chunk, IngestPlan};
use rapid_actors::schema::{validate, Schema, SchemaContext, ValidSchema};

fn schema() -> ValidSchema {
    let schema: Schema = serde_json::from_value(serde_json::json!({
        "metadata": {"domain": "fuzz", "dataset": "upload", "sensitivity": "PUBLIC",
                     "owners": [{"name": "Fuzz", "email": "fuzz@example.com"}]},
        "columns": [
            {"name": "region", "partition_index": 0, "data_type": "string", "allow_null": false},
            {"name": "id", "data_type": "int", "allow_null": false},
            {"name": "score", "data_type": "double", "allow_null": true}
        ]
    }))
    .unwrap();
    let layers = vec!["default".to_string()];
    let ctx = SchemaContext {
        layers: &layers,
        protected_domains: &Default::default(),
    };
    validate(&schema, &ctx).unwrap()
}

/// upload_stream: a Parquet file whose embedded Arrow schema (footer metadata `ARROW:schema`)
/// names an unknown type id made arrow-ipc panic (`not implemented: Type <UNKNOWN 109>`).
#[test]
fn a_parquet_file_with_a_malformed_embedded_arrow_schema_is_refused() {
    let body = include_bytes!("data/parquet-bad-arrow-schema.parquet");
    let schema = schema();
    let dir = tempfile::tempdir().unwrap();
    let (tx, rx) = tokio::sync::mpsc::channel::<Chunk>(4);
    let sender = std::thread::spawn(move || {
        for part in body.chunks(512) {
            tx.blocking_send(Chunk::Data(bytes::Bytes::copy_from_slice(part)))
                .unwrap();
        }
    });
    let progress = |_: u64| {};
    let plan = IngestPlan {
        schema: &schema,
        staging: &dir.path().join("data"),
        progress: &progress,
        max_value_bytes: 1 << 20,
    };
    let err = ingest_stream(FileKind::Parquet, rx, &dir.path().join("raw"), &plan)
        .expect_err("the file does not match the schema");
    sender.join().unwrap();
    assert!(!messages(&err).is_empty(), "{err}");
}
