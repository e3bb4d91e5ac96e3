//! Docs a test keeps true. Each rule reads the user-facing docs (README.md, docs/*.md,
//! benches/README.md, fuzz/README.md) and fails listing every offender as `file:line: what`:
//! - **Rust version:** every "Rust X.Y" names the workspace's `rust-version` (Cargo.toml).
//! - **Dependencies:** in any Markdown table whose header has a `crate` column, every backticked
//!   name in that column is declared in a `[*dependencies]` section of some Cargo.toml of the repo
//!   (direct dependencies only: a crate pulled in by another is named in the table's other columns).
//! - **Paths:** every backticked token that starts with a top-level folder of the repo (`src/`,
//!   `actors/`, `rows/`, `sqlwire/`, `tools/`, `tests/`, `benches/`, `fuzz/`, `docs/`, `scripts/`,
//!   `deploy/`, `examples/`) exists, and so does every relative Markdown link's target (resolved
//!   from the doc's folder). Patterns (`{..}`, `*`, `…`, spaces, `$`) are not paths and are skipped;
//!   a `:line` suffix or `#anchor` is dropped first. A doc named in plain text with its folder
//!   (`reference/x.md`, backticked or not) exists from the repo root or from the doc's folder.
//!   Fenced code blocks are not read.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const ROOTS: &[&str] = &[
    "src/",
    "actors/",
    "rows/",
    "sqlwire/",
    "tools/",
    "tests/",
    "benches/",
    "fuzz/",
    "docs/",
    "scripts/",
    "deploy/",
    "examples/",
];

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The docs read, as (path relative to the repo, text).
fn docs() -> Vec<(String, String)> {
    let mut names = vec![
        "README.md".to_string(),
        "benches/README.md".to_string(),
        "fuzz/README.md".to_string(),
    ];
    let mut in_docs: Vec<String> = std::fs::read_dir(repo().join("docs"))
        .expect("docs/")
        .map(|e| {
            e.expect("dir entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("docs/{n}"))
        .collect();
    in_docs.sort();
    names.extend(in_docs);
    names
        .into_iter()
        .map(|n| {
            let text =
                std::fs::read_to_string(repo().join(&n)).unwrap_or_else(|e| panic!("{n}: {e}"));
            (n, text)
        })
        .collect()
}

/// Lines outside fenced code blocks, numbered from 1.
fn prose_lines(text: &str) -> Vec<(usize, &str)> {
    let mut fenced = false;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            out.push((i + 1, line));
        }
    }
    out
}

/// The inline code spans of one line (the odd pieces between backticks).
fn code_spans(line: &str) -> impl Iterator<Item = &str> {
    line.split('`').skip(1).step_by(2)
}

/// `rust-version = "X.Y"` of a Cargo.toml's text.
fn rust_version_of(toml: &str) -> Option<String> {
    toml.lines()
        .map(str::trim)
        .find_map(|l| l.strip_prefix("rust-version"))
        .and_then(|rest| rest.trim_start().strip_prefix('='))
        .map(|v| v.trim().trim_matches('"').to_string())
}

/// Every "Rust X.Y" of a doc with its line: (line, "X.Y").
fn rust_versions_named(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, line) in prose_lines(text) {
        for (at, _) in line.match_indices("Rust ") {
            let version: String = line[at + 5..]
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.')
                .collect();
            let version = version.trim_end_matches('.');
            if version.contains('.') {
                out.push((n, version.to_string()));
            }
        }
    }
    out
}

/// The crates a Cargo.toml declares in its `[dependencies]`, `[dev-dependencies]`,
/// `[build-dependencies]`, `[workspace.dependencies]` and `[target.*.dependencies]` sections, and
/// as `[dependencies.name]` tables.
fn declared_crates(toml: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut in_deps = false;
    for line in toml.lines().map(str::trim) {
        if let Some(header) = line.strip_prefix('[') {
            let header = header.trim_end_matches(']');
            in_deps = header.ends_with("dependencies");
            if let Some((section, name)) = header.rsplit_once('.') {
                if section.ends_with("dependencies") {
                    out.insert(name.trim_matches('"').to_string());
                }
            }
        } else if in_deps {
            if let Some((key, _)) = line.split_once('=') {
                let name = key.trim().split('.').next().unwrap_or("").trim_matches('"');
                if !name.is_empty() && !name.starts_with('#') {
                    out.insert(name.to_string());
                }
            }
        }
    }
    out
}

/// The backticked names in the `crate` column of every Markdown table of a doc: (line, name).
fn table_crates(text: &str) -> Vec<(usize, String)> {
    let cells = |line: &str| -> Vec<String> {
        let inner = line.trim().trim_start_matches('|').trim_end_matches('|');
        inner.split('|').map(|c| c.trim().to_string()).collect()
    };
    let mut out = Vec::new();
    let mut column: Option<usize> = None;
    for (n, line) in prose_lines(text) {
        if !line.trim_start().starts_with('|') {
            column = None;
            continue;
        }
        let row = cells(line);
        match column {
            None => column = row.iter().position(|c| c.eq_ignore_ascii_case("crate")),
            Some(i) => {
                let Some(cell) = row.get(i) else { continue };
                out.extend(code_spans(cell).map(|name| (n, name.to_string())));
            }
        }
    }
    out
}

/// A backticked token or link target as a repo path, or None when it is no path of the repo
/// (a pattern, a URL, an anchor).
fn as_path(token: &str) -> Option<&str> {
    let token = token.split('#').next()?;
    let token = match token.rsplit_once(':') {
        Some((path, line)) if line.chars().all(|c| c.is_ascii_digit()) => path,
        _ => token,
    };
    let pattern = ['{', '*', '…', ' ', '$', '<', '(', ','];
    if token.is_empty() || token.contains(pattern) || token.contains("...") {
        return None;
    }
    Some(token)
}

/// Paths a doc cites: backticked tokens under a top-level folder (from the repo root) and relative
/// link targets (from the doc's folder). (line, path relative to the repo root.)
fn cited_paths(doc: &str, text: &str) -> Vec<(usize, PathBuf)> {
    let folder = Path::new(doc).parent().unwrap_or(Path::new(""));
    let mut out = Vec::new();
    for (n, line) in prose_lines(text) {
        for span in code_spans(line) {
            if ROOTS.iter().any(|r| span.starts_with(r)) {
                if let Some(path) = as_path(span) {
                    out.push((n, PathBuf::from(path)));
                }
            }
        }
        for (at, _) in line.match_indices("](") {
            let target = line[at + 2..].split(')').next().unwrap_or("");
            let target = target.split_whitespace().next().unwrap_or("");
            if target.contains("://") || target.starts_with("mailto:") || target.starts_with('#') {
                continue;
            }
            if let Some(path) = as_path(target) {
                out.push((n, folder.join(path)));
            }
        }
    }
    out
}

/// Markdown files named with a folder in a doc's text, backticked or not (`docs/web.md`,
/// `../x/y.md`), links excluded (read by `cited_paths`): (line, name).
fn md_mentions(text: &str) -> Vec<(usize, String)> {
    let edge = |c: char| "()[],.;:\"'`*".contains(c);
    let mut out = Vec::new();
    for (n, line) in prose_lines(text) {
        for word in line.split_whitespace() {
            let word = word.trim_matches(edge);
            let is_doc = word.ends_with(".md") && word.contains('/');
            if is_doc && !word.contains("](") && !word.contains("://") {
                if let Some(path) = as_path(word) {
                    out.push((n, path.to_string()));
                }
            }
        }
    }
    out
}

/// `a/../b` to `b`, so a link out of a folder names a repo path.
fn normalised(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

fn every_cargo_toml(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read_dir").flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if path.is_dir() {
            if name != "target" && !name.to_string_lossy().starts_with('.') {
                every_cargo_toml(&path, out);
            }
        } else if name == "Cargo.toml" {
            out.push(path);
        }
    }
}

#[test]
fn docs_name_the_workspace_rust_version() {
    let toml = std::fs::read_to_string(repo().join("Cargo.toml")).expect("Cargo.toml");
    let wanted = rust_version_of(&toml).expect("rust-version in Cargo.toml");
    let mut wrong = Vec::new();
    for (doc, text) in docs() {
        for (n, v) in rust_versions_named(&text) {
            if v != wanted {
                wrong.push(format!("{doc}:{n}: Rust {v}, Cargo.toml says {wanted}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn docs_list_only_declared_dependencies() {
    let mut tomls = Vec::new();
    every_cargo_toml(&repo(), &mut tomls);
    let declared: BTreeSet<String> = tomls
        .iter()
        .flat_map(|p| declared_crates(&std::fs::read_to_string(p).expect("Cargo.toml")))
        .collect();
    assert!(
        declared.contains("datafusion"),
        "the Cargo.toml walk found {declared:?}"
    );
    let mut wrong = Vec::new();
    for (doc, text) in docs() {
        for (n, name) in table_crates(&text) {
            if !declared.contains(&name) {
                wrong.push(format!("{doc}:{n}: `{name}` is in no Cargo.toml"));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn docs_cite_only_paths_that_exist() {
    let mut wrong = Vec::new();
    for (doc, text) in docs() {
        for (n, path) in cited_paths(&doc, &text) {
            if !repo().join(normalised(&path)).exists() {
                wrong.push(format!("{doc}:{n}: {} does not exist", path.display()));
            }
        }
        let folder = Path::new(&doc)
            .parent()
            .unwrap_or(Path::new(""))
            .to_path_buf();
        for (n, name) in md_mentions(&text) {
            let found = [
                repo().join(&name),
                repo().join(normalised(&folder.join(&name))),
            ];
            if !found.iter().any(|p| p.exists()) {
                wrong.push(format!("{doc}:{n}: {name} does not exist"));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The checkers on planted text: each catches what it is for.
#[test]
fn the_checkers_catch_planted_mistakes() {
    let toml = "[workspace.package]\nrust-version = \"1.89\"\n\n[dependencies]\nserde = \"1\"\n\
                tokio.workspace = true\n\n[dev-dependencies.tempfile]\nversion = \"3\"\n";
    assert_eq!(rust_version_of(toml).as_deref(), Some("1.89"));
    let readme = "Building needs Rust 1.85 or newer.\n```\nRust 1.0 in a fence\n```\n";
    assert_eq!(rust_versions_named(readme), vec![(1, "1.85".to_string())]);

    let declared = declared_crates(toml);
    let expected: BTreeSet<String> = ["serde", "tokio", "tempfile"].map(String::from).into();
    assert_eq!(declared, expected);
    let table = "| role | crate | why |\n|---|---|---|\n| logs | `tracing-actix-web` | `x` |\n\n\
                 | a | b |\n|---|---|\n| `insta` | c |\n";
    assert_eq!(
        table_crates(table),
        vec![(3, "tracing-actix-web".to_string())]
    );

    let text = "See `src/nowhere.rs:12`, `data/{layer}/x`, `docs/*.md` and [g](guide.md#x).";
    let cited: Vec<PathBuf> = cited_paths("docs/API.md", text)
        .into_iter()
        .map(|(_, p)| p)
        .collect();
    assert_eq!(
        cited,
        [
            PathBuf::from("src/nowhere.rs"),
            PathBuf::from("docs/guide.md")
        ]
    );
    let prose = "Do what rAPId does (reference/rapid-behaviour.md describes it), see [w](web.md).";
    assert_eq!(
        md_mentions(prose),
        vec![(1, "reference/rapid-behaviour.md".to_string())]
    );
    assert_eq!(
        normalised(Path::new("benches/../docs/DESIGN.md")),
        PathBuf::from("docs/DESIGN.md")
    );
}
