//! Reading one source file: its code without comments and test module, the paths it names, and
//! the file module each path lands in.

use std::collections::BTreeSet;

/// The code without comments and without the in-file `#[cfg(test)] mod tests { .. }`.
pub(super) fn strip(text: &str) -> String {
    let mut code = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let t = line.trim_start();
        // `#[cfg(test)]`, `#[cfg(all(test, unix))]`...
        if t.starts_with("#[cfg(") && t.contains("test") {
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
pub(super) fn expand(tree: &str) -> Vec<String> {
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
pub(super) fn paths_in(code: &str) -> Vec<String> {
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
pub(super) fn resolve(module: &str, path: &str, modules: &BTreeSet<String>) -> Option<String> {
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
            // A file's module path already names its folder's module for `mod.rs` (`query/mod.rs`
            // is `query`), so `super` is one level up from any file: of `query/check.rs` it is
            // `query`, of `query/mod.rs` the crate root, of `engine/sql/mod.rs` `engine`.
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
