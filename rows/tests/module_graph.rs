//! The per-row crate's module graph, read from the `use` lines and `crate::` / `super::` paths
//! of `rows/src` (by `rapid_testkit::module_graph`): no import cycle between files, and no
//! module importing from a layer above its own. The layers are those of the crate docs in
//! `src/lib.rs`; a new top-level module must be placed in one before this test passes.

use std::path::Path;

use rapid_testkit::module_graph::{graph, Graph};

/// Top-level modules, bottom layer first. A module may import from its own layer or any layer
/// below; the import graph must still be acyclic (between files and between top-level modules).
const LAYERS: &[&[&str]] = &[
    // Shared types: errors, the dataset key, unique index keys, sensitivity, file kinds, the
    // allocator settings.
    &[
        "error",
        "key",
        "key_list",
        "sensitivity",
        "file_kind",
        "allocator",
    ],
    // The data folder and object storage.
    &["storage"],
    // Rules: schemas, column profiles, the manifest's column bounds.
    &["schema", "profile", "stats"],
    // The work per row: the ingest, a keyed upload's keys read back and sorted, the answers'
    // writers, the query session and its rewrites, the `hash` mask; tests' plan helpers.
    &[
        "ingest",
        "unique_index",
        "answers",
        "rewrites",
        "mask_hash",
        "test_plans",
    ],
];

fn rows() -> Graph {
    graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"))
}

#[test]
fn files_import_without_cycles() {
    rows().assert_files_acyclic(30);
}

#[test]
fn top_level_modules_import_without_cycles() {
    rows().assert_top_level_acyclic();
}

#[test]
fn no_module_imports_from_a_layer_above() {
    rows().assert_layers(LAYERS);
}
