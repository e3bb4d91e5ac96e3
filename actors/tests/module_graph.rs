//! The engine's module graph, read from the `use` lines and `crate::` / `super::` paths of
//! `actors/src` (by `rapid_testkit::module_graph`): no import cycle between files, and no module importing from a layer above its own.
//! The layers are written down here (see the crate docs in `src/lib.rs`); a new top-level module
//! must be placed in one before this test passes.

use std::path::Path;

use rapid_testkit::module_graph::{graph, Graph};

/// Top-level modules, bottom layer first. A module may import from its own layer or any layer
/// below; the import graph must still be acyclic (between files and between top-level modules).
const LAYERS: &[&[&str]] = &[
    // Shared types: the dataset key and records, errors, sensitivity, file kinds, permits, the
    // job record and its states; the process's allocator settings; walks over SQL syntax trees.
    &[
        "allocator",
        "error",
        "key",
        "sensitivity",
        "file_kind",
        "work_permits",
        "job_state",
        "traced",
        "sql_walk",
    ],
    // Where things are kept: the data folder, the audit log and the catalog, each behind one
    // interface.
    &["storage", "audit", "catalog"],
    // Rules and the catalog's tables: schemas, jobs, subjects and permissions, dataset records
    // and schema versions, the manifest of files.
    &[
        "schema",
        "jobs",
        "auth",
        "events",
        "records",
        "manifest",
        "history",
        "delta_log",
        "profile",
    ],
    // The work: ingesting uploads, inferring drafts, running queries, merging small files.
    &["ingest", "infer", "query", "compaction"],
    // The actors that serialise changes.
    &["dataset", "registry"],
    // The facade the edges (HTTP, web pages, CLI) call, and the admin CLI's commands on a
    // stopped (or backed-up) data folder.
    &["engine", "admin"],
];

fn engine() -> Graph {
    graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"))
}

#[test]
fn files_import_without_cycles() {
    let g = engine();
    assert!(g.edges.len() > 50, "the walk found the sources");
    let tangles = g.tangles();
    assert!(
        tangles.is_empty(),
        "files importing each other (directly or around a cycle):\n{}",
        tangles.join("\n")
    );
}

#[test]
fn top_level_modules_import_without_cycles() {
    if let Some(cycle) = engine().top_level_cycle() {
        panic!("import cycle between modules: {}", cycle.join(" -> "));
    }
}

#[test]
fn no_module_imports_from_a_layer_above() {
    let wrong = engine().layer_violations(LAYERS);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
