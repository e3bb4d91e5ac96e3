//! The HTTP crate's floors (written at the top of `src/lib.rs`), the PostgreSQL front's
//! (`sqlwire/`) and the tools' module graphs, read by the same checker as the engine's
//! (`rapid_testkit::module_graph`): no import cycle between files, and no module of `src/`
//! importing from a floor above its own. A new top-level module
//! must be placed on a floor before this test passes.

use std::path::{Path, PathBuf};

use rapid_testkit::module_graph::graph;

/// Top-level modules of `src/`, bottom floor first. A module may import from its own floor or any
/// floor below.
const FLOORS: &[&[&str]] = &[
    // Shared pieces: error rendering, the client address and link origin, file modes, the
    // answers the API documents.
    &["error", "client_addr", "origin", "file_modes", "answers"],
    // Settings, and what every handler shares.
    &[
        "config",
        "config_limits",
        "config_ops",
        "config_mcp",
        "state",
    ],
    // Plumbing: the HTTP/1 server, authentication and the permission extractors, multipart
    // uploads, request parameters, operations.
    &["connection", "auth", "upload", "params", "ops"],
    // The three fronts, siblings that never import each other: the API, the web pages and the
    // MCP endpoint.
    &["routes", "web", "mcp"],
    // Assembly: the command line, start-up, the OpenAPI document, the admin commands.
    &[
        "cli",
        "server",
        "side_listeners",
        "openapi",
        "admin",
        "admin_client",
    ],
];

/// The fronts, which may not import each other although they share a floor.
const SIBLINGS: &[&str] = &["routes", "web", "mcp"];

fn dir(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn assert_no_tangles(src: &Path, at_least: usize) {
    let g = graph(src);
    assert!(
        g.edges.len() >= at_least,
        "the walk found {}",
        src.display()
    );
    let tangles = g.tangles();
    assert!(
        tangles.is_empty(),
        "files of {} importing each other (directly or around a cycle):\n{}",
        src.display(),
        tangles.join("\n")
    );
    if let Some(cycle) = g.top_level_cycle() {
        panic!("import cycle between modules: {}", cycle.join(" -> "));
    }
}

#[test]
fn the_http_crate_imports_without_cycles() {
    assert_no_tangles(&dir("src"), 50);
}

#[test]
fn no_module_of_the_http_crate_imports_from_a_floor_above() {
    let wrong = graph(&dir("src")).layer_violations(FLOORS);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_fronts_do_not_import_each_other() {
    let g = graph(&dir("src"));
    let top = |m: &str| m.split("::").next().unwrap_or(m).to_string();
    let crossing: Vec<String> = g
        .edges
        .iter()
        .flat_map(|(from, to)| to.iter().map(move |t| (from, t)))
        .filter(|(from, to)| {
            let (f, t) = (top(from), top(to));
            f != t && SIBLINGS.contains(&f.as_str()) && SIBLINGS.contains(&t.as_str())
        })
        .map(|(from, to)| format!("{from} imports {to}"))
        .collect();
    assert!(crossing.is_empty(), "{}", crossing.join("\n"));
}

/// The PostgreSQL front is a protocol adapter over the engine's SQL session: its files form no
/// circle (the sign-in opens the session, the statements use it, the connection holds both).
#[test]
fn the_pg_front_imports_without_cycles() {
    assert_no_tangles(&dir("sqlwire/src"), 15);
}

#[test]
fn the_tools_import_without_cycles() {
    for tool in ["tools/bench/src", "tools/crashfs/src", "tools/testkit/src"] {
        assert_no_tangles(&dir(tool), 3);
    }
}
