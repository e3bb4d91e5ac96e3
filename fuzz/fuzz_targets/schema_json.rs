//! Schema JSON as a client sends it to POST/PUT /schema: parsed, then every rule judged (store and
//! generated-draft rules). Must end in Ok or an error, never a panic.
#![no_main]

use std::collections::BTreeSet;

use libfuzzer_sys::fuzz_target;
use rapid_actors::schema::{validate, validate_generated, validate_stored, Schema, SchemaContext};

fuzz_target!(|data: &[u8]| {
    let Ok(schema) = serde_json::from_slice::<Schema>(data) else {
        return;
    };
    let layers = vec!["default".to_string(), "raw".to_string()];
    let protected: BTreeSet<String> = ["secret".to_string()].into_iter().collect();
    let ctx = SchemaContext {
        layers: &layers,
        protected_domains: &protected,
    };
    let _ = validate(&schema, &ctx);
    let _ = validate_generated(&schema, &ctx);
    let _ = validate_stored(&schema);
});
