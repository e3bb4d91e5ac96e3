//! The engine's module graph, read from the `use` lines and `crate::` / `super::` paths of
//! `actors/src` (by `rapid_testkit::module_graph`): no import cycle between files, and no module importing from a layer above its own.
//! The layers are written down here (see the crate docs in `src/lib.rs`); a new top-level module
//! must be placed in one before this test passes.

use std::path::Path;

use rapid_testkit::module_graph::{graph_with_reexports, Graph};

/// Top-level modules, bottom layer first. A module may import from its own layer or any layer
/// below; the import graph must still be acyclic (between files and between top-level modules).
const LAYERS: &[&[&str]] = &[
    // Shared types: permits, the job record and its states, actor messages with their span;
    // walks over SQL syntax trees. (The dataset key, errors, sensitivity and file kinds are
    // rapid-rows', below every layer here.)
    &["work_permits", "job_state", "traced", "sql_walk"],
    // Where things are kept beside the data folder (rapid-rows' `storage`): the audit log and
    // the catalog, each behind one interface.
    &["audit", "catalog"],
    // Rules and the catalog's tables: jobs, subjects and permissions, dataset records and schema
    // versions, the manifest of files. (Schemas and profiles are rapid-rows'.)
    &[
        "jobs",
        "auth",
        "events",
        "records",
        "manifest",
        "history",
        "delta_log",
    ],
    // The work: inferring drafts, running queries, merging small files. (The ingest is
    // rapid-rows'.)
    &["infer", "query", "compaction"],
    // The actors that serialise changes.
    &["dataset", "registry"],
    // The facade the edges (HTTP, web pages, CLI) call, and the admin CLI's commands on a
    // stopped (or backed-up) data folder.
    &["engine", "admin"],
];

/// The modules lib.rs re-exports from rapid-rows under their own names: imports of them are
/// imports from that crate (its own tests/module_graph.rs checks them).
const FROM_ROWS: &[&str] = &[
    "allocator",
    "error",
    "file_kind",
    "ingest",
    "key",
    "profile",
    "schema",
    "sensitivity",
    "storage",
];

fn engine() -> Graph {
    graph_with_reexports(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        FROM_ROWS,
    )
}

#[test]
fn files_import_without_cycles() {
    engine().assert_files_acyclic(50);
}

#[test]
fn top_level_modules_import_without_cycles() {
    engine().assert_top_level_acyclic();
}

#[test]
fn no_module_imports_from_a_layer_above() {
    engine().assert_layers(LAYERS);
}
