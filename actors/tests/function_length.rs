//! No function outside tests is longer than 80 lines, in the engine (`actors/src`, `rows/src`), the edge
//! (`src`), the PostgreSQL front (`sqlwire/src`) or the tools (`tools/*/src`): a longer one is
//! split into named steps. The test lists every offender.

use std::path::{Path, PathBuf};

const MAX_LINES: usize = 80;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let name = path.file_name().unwrap().to_string_lossy();
            if !name.ends_with("_tests.rs") && name != "tests.rs" {
                out.push(path);
            }
        }
    }
}

/// A line of code with its comments, string and char literals blanked, so braces count true.
/// `in_block`: inside a `/* */` comment carried over from the line before.
fn code_of(line: &str, in_block: &mut bool) -> String {
    let mut out = String::new();
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if *in_block {
            if c == '*' && next == Some('/') {
                *in_block = false;
                i += 1;
            }
        } else if c == '/' && next == Some('/') {
            break;
        } else if c == '/' && next == Some('*') {
            *in_block = true;
            i += 1;
        } else if c == '"' {
            // Skip to the closing quote (escapes honoured); a string left open runs to line end.
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
        } else if c == '\'' && chars.get(i + 2) == Some(&'\'') {
            i += 2;
        } else if c == '\'' && next == Some('\\') {
            while i + 1 < chars.len() && chars[i + 1] != '\'' {
                i += 1;
            }
            i += 1;
        } else {
            out.push(c);
        }
        i += 1;
    }
    out
}

fn is_fn_start(code: &str) -> Option<String> {
    let mut words = code.split_whitespace().peekable();
    while let Some(w) = words.next() {
        if w == "fn" {
            let name = words.next()?;
            return Some(name.split(['(', '<']).next().unwrap_or(name).to_string());
        }
        let modifier =
            w.starts_with("pub") || matches!(w, "async" | "const" | "unsafe" | "extern" | "\"C\"");
        if !modifier {
            return None;
        }
    }
    None
}

/// (file, first line, name, lines) of every function over the limit outside test modules.
fn long_functions(file: &Path) -> Vec<(String, usize, String, usize)> {
    let text = std::fs::read_to_string(file).expect("read source");
    let lines: Vec<&str> = text.lines().collect();
    let mut in_block = false;
    let code: Vec<String> = lines.iter().map(|l| code_of(l, &mut in_block)).collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < code.len() {
        let trimmed = code[i].trim();
        if trimmed.starts_with("#[cfg(test)]")
            && code.get(i + 1).is_some_and(|n| n.contains("mod "))
        {
            break; // the in-file test module closes the file
        }
        if let Some(name) = is_fn_start(trimmed) {
            let (mut depth, mut opened, mut end) = (0i64, false, i);
            for (j, line) in code.iter().enumerate().skip(i) {
                for c in line.chars() {
                    match c {
                        '{' => {
                            depth += 1;
                            opened = true;
                        }
                        '}' => depth -= 1,
                        _ => {}
                    }
                }
                end = j;
                if (opened && depth <= 0) || (!opened && line.trim_end().ends_with(';')) {
                    break;
                }
            }
            let length = end - i + 1;
            if opened && length > MAX_LINES {
                found.push((file.display().to_string(), i + 1, name, length));
            }
        }
        i += 1;
    }
    found
}

#[test]
fn no_function_outside_tests_is_over_80_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    rust_files(&root.join("../src"), &mut files);
    rust_files(&root.join("../sqlwire/src"), &mut files);
    rust_files(&root.join("../rows/src"), &mut files);
    for tool in ["bench", "crashfs", "testkit"] {
        rust_files(&root.join("../tools").join(tool).join("src"), &mut files);
    }
    assert!(files.len() > 100, "the walk found the sources");
    let long: Vec<String> = files
        .iter()
        .flat_map(|f| long_functions(f))
        .map(|(file, line, name, n)| format!("{file}:{line} {name}: {n} lines"))
        .collect();
    assert!(
        long.is_empty(),
        "functions over {MAX_LINES} lines:\n{}",
        long.join("\n")
    );
}

#[test]
fn the_counter_skips_braces_in_strings_and_comments() {
    let mut in_block = false;
    assert_eq!(code_of(r#"let a = "{"; // }"#, &mut in_block), "let a = ; ");
    assert_eq!(code_of("let b = '{'; /* {", &mut in_block), "let b = ; ");
    assert!(in_block);
    assert_eq!(code_of("} */ x", &mut in_block), " x");
    assert_eq!(
        is_fn_start("pub(crate) async fn go<T>(x: T) {"),
        Some("go".into())
    );
    assert_eq!(is_fn_start("let f = fn_name;"), None);
}
