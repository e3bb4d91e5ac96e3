//! A crate's module graph, read from the `use` lines and `crate::` / `super::` paths of its
//! `src` folder: the checker behind the layer tests of the engine (`actors/tests/module_graph.rs`)
//! and of the HTTP crate and tools (`tests/module_graph.rs`). Each caller writes its own layers;
//! this finds import cycles between files and imports from a layer above.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

mod read;

use read::{paths_in, resolve, strip};

/// Module path of a source file: `query/check.rs` -> `query::check`, `query/mod.rs` -> `query`.
fn module_of(rel: &Path) -> String {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs");
    let crate_root = stem == "lib" || (stem == "main" && parts.is_empty());
    if stem != "mod" && !crate_root {
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
            // A binary beside a library is another crate: it reaches the library by its name.
            if dir == root && name == "main.rs" && root.join("lib.rs").exists() {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("read source");
            let rel = path.strip_prefix(root).unwrap();
            out.push((module_of(rel), strip(&text)));
        }
    }
}

fn top(module: &str) -> &str {
    module.split("::").next().unwrap_or(module)
}

fn layer_of(layers: &[&[&str]], module: &str) -> Option<usize> {
    layers.iter().position(|l| l.contains(&top(module)))
}

/// Which file module imports which, read from one crate's `src` folder.
pub struct Graph {
    /// Module path (`query::check`; `""` for the crate root) to the modules it imports.
    pub edges: BTreeMap<String, BTreeSet<String>>,
}

/// Reads the graph of the crate whose sources are in `root` (its `src` folder).
pub fn graph(root: &Path) -> Graph {
    graph_with_reexports(root, &[])
}

/// As [`graph`], for a crate whose root re-exports other crates' modules under their names
/// (`pub use rapid_rows::{error, schema}`): `crate::error::..` is then an import from another
/// crate, not from this crate's root.
pub fn graph_with_reexports(root: &Path, reexported: &[&str]) -> Graph {
    let mut files = Vec::new();
    collect(root, root, &mut files);
    let modules: BTreeSet<String> = files.iter().map(|(m, _)| m.clone()).collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, code) in &files {
        let targets = edges.entry(module.clone()).or_default();
        for path in paths_in(code) {
            let mut segs = path.split("::");
            if segs.next() == Some("crate") && segs.next().is_some_and(|m| reexported.contains(&m))
            {
                continue;
            }
            let Some(target) = resolve(module, &path, &modules) else {
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
pub fn find_cycle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
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
pub fn tangles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
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

impl Graph {
    /// The groups of files importing each other, directly or around a cycle.
    pub fn tangles(&self) -> Vec<String> {
        tangles(&self.edges)
    }

    /// A cycle between top-level modules, if any.
    pub fn top_level_cycle(&self) -> Option<Vec<String>> {
        let mut tops: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (from, targets) in &self.edges {
            for to in targets {
                if top(from) != top(to) && !from.is_empty() {
                    tops.entry(top(from).to_string())
                        .or_default()
                        .insert(top(to).to_string());
                }
            }
        }
        find_cycle(&tops)
    }

    /// Panics, listing them, if files import each other (directly or around a cycle); and if
    /// the walk found fewer than `min_edges` modules, as when it read the wrong folder.
    pub fn assert_files_acyclic(&self, min_edges: usize) {
        assert!(self.edges.len() > min_edges, "the walk found the sources");
        let tangles = self.tangles();
        assert!(
            tangles.is_empty(),
            "files importing each other (directly or around a cycle):\n{}",
            tangles.join("\n")
        );
    }

    /// Panics, naming the cycle, if top-level modules import each other around a cycle.
    pub fn assert_top_level_acyclic(&self) {
        if let Some(cycle) = self.top_level_cycle() {
            panic!("import cycle between modules: {}", cycle.join(" -> "));
        }
    }

    /// Panics, listing them, on the [`Graph::layer_violations`] of `layers`.
    pub fn assert_layers(&self, layers: &[&[&str]]) {
        let wrong = self.layer_violations(layers);
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    /// Every import from a higher layer, from the crate root, or by a module in no layer.
    /// `layers` lists top-level modules, bottom layer first; a module may import from its own
    /// layer or any layer below.
    pub fn layer_violations(&self, layers: &[&[&str]]) -> Vec<String> {
        let mut wrong = Vec::new();
        for (from, targets) in &self.edges {
            if from.is_empty() {
                continue;
            }
            let Some(own) = layer_of(layers, from) else {
                wrong.push(format!("{from} is in no layer (add it to the layers)"));
                continue;
            };
            for to in targets {
                if to.is_empty() {
                    wrong.push(format!(
                        "{from} imports from the crate root; name the module"
                    ));
                } else if layer_of(layers, to).is_none_or(|l| l > own) {
                    wrong.push(format!("{from} imports {to}, a layer above"));
                }
            }
        }
        wrong
    }
}

#[cfg(test)]
mod tests {
    use super::read::expand;
    use super::*;

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
        let modules: BTreeSet<String> = [
            "",
            "query",
            "query::check",
            "query::filter_group",
            "query::sql",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let r = |m: &str, p: &str| resolve(m, p, &modules);
        assert_eq!(
            r("query::check", "super::filter_group::X"),
            Some("query::filter_group".into())
        );
        assert_eq!(r("query", "check::Y"), Some("query::check".into()));
        assert_eq!(r("query", "super::Z"), Some("".into()));
        // `query/sql/mod.rs`: its `super` is `query`, not the crate root.
        assert_eq!(
            r("query::sql", "super::check::Z"),
            Some("query::check".into())
        );
        assert_eq!(r("query::check", "std::fmt"), None);
        let mut cyclic = BTreeMap::new();
        cyclic.insert("a".to_string(), BTreeSet::from(["b".to_string()]));
        cyclic.insert("b".to_string(), BTreeSet::from(["a".to_string()]));
        assert!(find_cycle(&cyclic).is_some());
    }

    #[test]
    fn layers_refuse_imports_from_above_and_strays() {
        let mut edges = BTreeMap::new();
        edges.insert("low".to_string(), BTreeSet::from(["high::x".to_string()]));
        edges.insert("high::x".to_string(), BTreeSet::from(["low".to_string()]));
        edges.insert("stray".to_string(), BTreeSet::new());
        let g = Graph { edges };
        let wrong = g.layer_violations(&[&["low"], &["high"]]);
        assert_eq!(
            wrong,
            [
                "low imports high::x, a layer above",
                "stray is in no layer (add it to the layers)"
            ]
        );
        assert_eq!(g.tangles().len(), 1);
        assert!(g.top_level_cycle().is_some());
    }
}
