//! The engine's module graph, read from the `use` lines and `crate::` / `super::` paths of
//! `actors/src`: no import cycle between files, and no module importing from a layer above its own.
//! The layers are written down here (see the crate docs in `src/lib.rs`); a new top-level module
//! must be placed in one before this test passes.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Top-level modules, bottom layer first. A module may import from its own layer or any layer
/// below; the import graph must still be acyclic (between files and between top-level modules).
const LAYERS: &[&[&str]] = &[
    // Shared types: the dataset key and records, errors, sensitivity, file kinds, permits, the
    // job record and its states; the process's allocator settings.
    &[
        "allocator",
        "error",
        "key",
        "sensitivity",
        "file_kind",
        "work_permits",
        "job_state",
        "traced",
    ],
    // Where things are kept: the data folder and the SQLite catalog, each behind one interface.
    &["storage", "catalog"],
    // Rules and the catalog's tables: schemas, jobs, subjects and permissions, dataset records
    // and schema versions, the manifest of files.
    &["schema", "jobs", "auth", "records", "manifest"],
    // The work: ingesting uploads, inferring drafts, running queries, merging small files.
    &["ingest", "infer", "query", "compaction"],
    // The actors that serialise changes.
    &["dataset", "registry"],
    // The facade the edges (HTTP, web pages, CLI) call, and the admin CLI's commands on a
    // stopped (or backed-up) data folder.
    &["engine", "admin"],
];

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Module path of a source file: `query/check.rs` -> `query::check`, `query/mod.rs` -> `query`.
fn module_of(rel: &Path) -> String {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" {
        parts.push(stem.to_string());
    }
    parts.join("::")
}

fn collect(dir: &Path, root: &Path, out: &mut Vec<(String, String)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("read src dir")
        .map(|e| e.expect("dir entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect(&path, root, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let name = path.file_name().unwrap().to_string_lossy();
            // Test-only modules may reach anywhere.
            if name.ends_with("_tests.rs") || name == "tests.rs" {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("read source");
            let rel = path.strip_prefix(root).unwrap();
            out.push((module_of(rel), strip(&text)));
        }
    }
}

/// The code without comments and without the in-file `#[cfg(test)] mod tests { .. }`.
fn strip(text: &str) -> String {
    let mut code = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let t = line.trim_start();
        if t.starts_with("#[cfg(test)]") {
            if let Some(next) = lines.peek() {
                let n = next.trim_start();
                if n.starts_with("mod ") && n.ends_with('{') {
                    break;
                }
            }
        }
        if t.starts_with("//") {
            continue;
        }
        let line = match line.find("//") {
            Some(i) if !line[..i].contains('"') => &line[..i],
            _ => line,
        };
        code.push_str(line);
        code.push('\n');
    }
    code
}

/// Expands a use tree (`a::{b, c::{d, e}}`) into full paths.
fn expand(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        let path = tree.split(" as ").next().unwrap_or(tree).trim();
        return vec![path.to_string()];
    };
    let prefix = tree[..open].trim_end_matches("::").trim();
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let mut items = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&inner[start..]);
    let mut out = Vec::new();
    for item in items.into_iter().filter(|s| !s.trim().is_empty()) {
        for sub in expand(item) {
            if sub == "self" {
                out.push(prefix.to_string());
            } else if prefix.is_empty() {
                out.push(sub);
            } else {
                out.push(format!("{prefix}::{sub}"));
            }
        }
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Every path a file names: the expanded `use` trees and `crate::` / `super::` paths in code.
fn paths_in(code: &str) -> Vec<String> {
    let mut paths = Vec::new();
    for (i, line) in code.lines().enumerate() {
        let t = line.trim_start();
        let t = t.strip_prefix("pub ").unwrap_or(t);
        let t = match t.strip_prefix("pub(") {
            Some(r) => r.split_once(") ").map_or(t, |(_, after)| after),
            None => t,
        };
        if let Some(tree) = t.strip_prefix("use ") {
            // A use statement may span lines: read on to its `;`.
            let whole: String = std::iter::once(tree)
                .chain(code.lines().skip(i + 1))
                .collect::<Vec<_>>()
                .join(" ");
            if let Some(end) = whole.find(';') {
                paths.extend(expand(&whole[..end]));
            }
        }
    }
    for anchor in ["crate::", "super::"] {
        let mut from = 0;
        while let Some(i) = code[from..].find(anchor) {
            let at = from + i;
            let boundary = code[..at].chars().last().is_none_or(|c| !is_ident(c));
            let end = code[at..]
                .find(|c: char| !(is_ident(c) || c == ':'))
                .map_or(code.len(), |e| at + e);
            if boundary {
                paths.push(code[at..end].trim_end_matches(':').to_string());
            }
            from = end.max(at + anchor.len());
        }
    }
    paths
}

/// The file module a path lands in, seen from `module`; None for other crates.
fn resolve(
    module: &str,
    is_mod_file: bool,
    path: &str,
    modules: &BTreeSet<String>,
) -> Option<String> {
    let segs: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
    let mut base: Vec<&str> = if module.is_empty() {
        vec![]
    } else {
        module.split("::").collect()
    };
    let mut i = 0;
    match segs.first().copied() {
        Some("crate") => {
            base.clear();
            i = 1;
        }
        Some("self") => i = 1,
        Some("super") => {
            // `super` of `query/check.rs` is `query`; of `query/mod.rs` it is the crate root.
            if is_mod_file {
                base.pop();
            }
            while segs.get(i) == Some(&"super") {
                base.pop();
                i += 1;
            }
        }
        Some(first) => {
            let child = join(&base, &[first]);
            if !modules.contains(&child) {
                return None;
            }
        }
        None => return None,
    }
    let mut full: Vec<&str> = base;
    full.extend(&segs[i..]);
    (0..=full.len())
        .rev()
        .map(|n| full[..n].join("::"))
        .find(|candidate| modules.contains(candidate))
}

fn join(base: &[&str], more: &[&str]) -> String {
    base.iter()
        .chain(more)
        .copied()
        .collect::<Vec<_>>()
        .join("::")
}

fn top(module: &str) -> &str {
    module.split("::").next().unwrap_or(module)
}

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&top(module)))
}

struct Graph {
    edges: BTreeMap<String, BTreeSet<String>>,
}

fn graph() -> Graph {
    let root = src_dir();
    let mut files = Vec::new();
    collect(&root, &root, &mut files);
    let modules: BTreeSet<String> = files.iter().map(|(m, _)| m.clone()).collect();
    let mod_files: BTreeSet<String> = {
        let mut set = BTreeSet::new();
        for m in &modules {
            if !m.is_empty() && modules.iter().any(|o| o.starts_with(&format!("{m}::"))) {
                set.insert(m.clone());
            }
        }
        set.insert(String::new());
        set
    };
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, code) in &files {
        let targets = edges.entry(module.clone()).or_default();
        for path in paths_in(code) {
            let Some(target) = resolve(module, mod_files.contains(module), &path, &modules) else {
                continue;
            };
            // A module re-exporting its own children is their facade, not a dependency.
            let own_child = module.is_empty() || target.starts_with(&format!("{module}::"));
            if target != *module && !own_child {
                targets.insert(target);
            }
        }
    }
    Graph { edges }
}

/// A cycle in `edges`, if any, as the list of nodes around it.
fn find_cycle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(node.to_string(), 1);
        stack.push(node.to_string());
        for next in edges.get(node).into_iter().flatten() {
            match state.get(next.as_str()).copied().unwrap_or(0) {
                1 => {
                    let from = stack.iter().position(|n| n == next).unwrap_or(0);
                    let mut cycle = stack[from..].to_vec();
                    cycle.push(next.clone());
                    return Some(cycle);
                }
                0 => {
                    if let Some(c) = visit(next, edges, state, stack) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(node.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for node in edges.keys() {
        if state.get(node).copied().unwrap_or(0) == 0 {
            let mut stack = Vec::new();
            if let Some(c) = visit(node, edges, &mut state, &mut stack) {
                return Some(c);
            }
        }
    }
    None
}

fn reachable(from: &str, edges: &BTreeMap<String, BTreeSet<String>>) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![from.to_string()];
    while let Some(n) = todo.pop() {
        for next in edges.get(&n).into_iter().flatten() {
            if seen.insert(next.clone()) {
                todo.push(next.clone());
            }
        }
    }
    seen
}

/// The groups of nodes that reach each other (strongly connected, more than one node), each shown
/// with the edges inside it.
fn tangles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let reach: BTreeMap<&String, BTreeSet<String>> =
        edges.keys().map(|n| (n, reachable(n, edges))).collect();
    let mut done = BTreeSet::new();
    let mut out = Vec::new();
    for (node, r) in &reach {
        if done.contains(*node) || !r.contains(*node) {
            continue;
        }
        let group: BTreeSet<&String> = r
            .iter()
            .filter(|o| reach.get(o).is_some_and(|b| b.contains(*node)))
            .collect();
        let inner: Vec<String> = group
            .iter()
            .flat_map(|a| {
                edges[*a]
                    .iter()
                    .filter(|b| group.contains(b))
                    .map(move |b| format!("{a} -> {b}"))
            })
            .collect();
        done.extend(group.iter().map(|s| s.to_string()));
        out.push(format!("[{}]", inner.join(", ")));
    }
    out
}

#[test]
fn files_import_without_cycles() {
    let g = graph();
    assert!(g.edges.len() > 50, "the walk found the sources");
    let tangles = tangles(&g.edges);
    assert!(
        tangles.is_empty(),
        "files importing each other (directly or around a cycle):\n{}",
        tangles.join("\n")
    );
}

#[test]
fn top_level_modules_import_without_cycles() {
    let g = graph();
    let mut tops: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (from, targets) in &g.edges {
        for to in targets {
            if top(from) != top(to) && !from.is_empty() {
                tops.entry(top(from).to_string())
                    .or_default()
                    .insert(top(to).to_string());
            }
        }
    }
    if let Some(cycle) = find_cycle(&tops) {
        panic!("import cycle between modules: {}", cycle.join(" -> "));
    }
}

#[test]
fn no_module_imports_from_a_layer_above() {
    let g = graph();
    let mut wrong = Vec::new();
    for (from, targets) in &g.edges {
        if from.is_empty() {
            continue;
        }
        let Some(own) = layer_of(from) else {
            wrong.push(format!("{from} is in no layer (add it to LAYERS)"));
            continue;
        };
        for to in targets {
            if to.is_empty() {
                wrong.push(format!(
                    "{from} imports from the crate root; name the module"
                ));
            } else if layer_of(to).is_none_or(|l| l > own) {
                wrong.push(format!("{from} imports {to}, a layer above"));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_reader_understands_use_trees() {
    let paths = expand("crate::{error::{Error, Result}, schema::{self}, x as y}");
    assert_eq!(
        paths,
        [
            "crate::error::Error",
            "crate::error::Result",
            "crate::schema",
            "crate::x"
        ]
    );
    let modules: BTreeSet<String> = ["", "query", "query::check", "query::filter_group"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let r = |m: &str, mod_file, p: &str| resolve(m, mod_file, p, &modules);
    assert_eq!(
        r("query::check", false, "super::filter_group::X"),
        Some("query::filter_group".into())
    );
    assert_eq!(r("query", true, "check::Y"), Some("query::check".into()));
    assert_eq!(r("query", true, "super::Z"), Some("".into()));
    assert_eq!(r("query::check", false, "std::fmt"), None);
    let mut cyclic = BTreeMap::new();
    cyclic.insert("a".to_string(), BTreeSet::from(["b".to_string()]));
    cyclic.insert("b".to_string(), BTreeSet::from(["a".to_string()]));
    assert!(find_cycle(&cyclic).is_some());
}
