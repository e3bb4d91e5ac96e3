//! The policy conformance suite's oracle: a policy written out, for one subject, as a DuckDB view
//! over the stored Parquet. Which rules name the subject, how `subject_attr` reads its attributes
//! and what each mask shows are worked out here from the policy's JSON, on their own (none of the
//! engine's code), following docs/API.md: every row filter that names the subject and does not
//! except it must pass; a column's first mask that applies to it replaces its values.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::{json, Value};

/// A row as text: `None` is NULL.
pub(crate) type Row = Vec<Option<String>>;

/// The dataset's columns in order, with their DuckDB types (for a typed NULL).
pub(crate) const COLUMNS: [(&str, &str); 7] = [
    ("id", "BIGINT"),
    ("region", "VARCHAR"),
    ("team", "VARCHAR"),
    ("name", "VARCHAR"),
    ("salary", "BIGINT"),
    ("card", "VARCHAR"),
    ("born", "DATE"),
];

/// A reading subject as the policy's entries may name it.
#[derive(Clone)]
pub(crate) struct Who {
    pub name: &'static str,
    pub id: String,
    pub secret: String,
    pub token: String,
    pub permissions: Vec<&'static str>,
    pub attributes: Vec<(&'static str, &'static str)>,
}

/// One subject's view of the dataset under a policy.
pub(crate) struct View {
    /// `SELECT <columns as shown> FROM staff WHERE <filters>`.
    pub sql: String,
    /// The columns shown hashed (compared by equality classes, see `policy_fronts::canonical`).
    pub hashed: Vec<usize>,
    /// Whether any rule applies (then profiles and figures are refused).
    pub ruled: bool,
}

fn names(entries: &Value, who: &Who) -> bool {
    entries.as_array().into_iter().flatten().any(|e| {
        let e = e.as_str().unwrap();
        e == "*" || e == who.id || e.eq_ignore_ascii_case(who.name) || who.permissions.contains(&e)
    })
}

fn applies(rule: &Value, who: &Who) -> bool {
    names(&rule["applies_to"], who) && !names(&rule["except"], who)
}

/// `filter` with each `subject_attr('k')` replaced by the attribute's quoted text, or NULL.
fn with_attributes(filter: &str, who: &Who) -> String {
    let mut out = String::new();
    let mut rest = filter;
    while let Some(at) = rest.find("subject_attr('") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "subject_attr('".len()..];
        let end = after.find("')").expect("a closed subject_attr");
        let key = &after[..end];
        match who.attributes.iter().find(|(k, _)| *k == key) {
            Some((_, v)) => out.push_str(&format!("'{}'", v.replace('\'', "''"))),
            None => out.push_str("NULL"),
        }
        rest = &after[end + 2..];
    }
    out + rest
}

/// What column `column` (of DuckDB type `ty`) shows under `mask`.
fn masked(column: &str, ty: &str, mask: &str) -> String {
    match mask {
        "redact" => format!("CASE WHEN {column} IS NULL THEN NULL ELSE 'REDACTED' END"),
        "null" => format!("CAST(NULL AS {ty})"),
        // The keyed hash itself is not reproduced: the value's text stands for it, and the
        // comparison is by equality classes (equal in, equal out; distinct in, distinct out).
        "hash" => format!("CAST({column} AS VARCHAR)"),
        "last4" => format!("right(CAST({column} AS VARCHAR), 4)"),
        "year" => format!("CAST(year({column}) AS BIGINT)"),
        other => panic!("no mask {other}"),
    }
}

/// `policy` for `who`, as a view over `staff`.
pub(crate) fn view(policy: &Value, who: &Who) -> View {
    let filters: Vec<String> = policy["row_filters"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| applies(f, who))
        .map(|f| format!("({})", with_attributes(f["filter"].as_str().unwrap(), who)))
        .collect();
    let masks = policy["column_masks"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut hashed = Vec::new();
    let mut ruled = !filters.is_empty();
    let columns: Vec<String> = COLUMNS
        .iter()
        .enumerate()
        .map(|(i, (column, ty))| {
            let first = masks
                .iter()
                .find(|m| m["column"] == *column && applies(m, who));
            match first {
                None => column.to_string(),
                Some(m) => {
                    ruled = true;
                    let mask = m["mask"].as_str().unwrap();
                    if mask == "hash" {
                        hashed.push(i);
                    }
                    format!("{} AS {column}", masked(column, ty, mask))
                }
            }
        })
        .collect();
    let condition = match filters.is_empty() {
        true => "true".to_string(),
        false => filters.join(" AND "),
    };
    View {
        sql: format!("SELECT {} FROM staff WHERE {condition}", columns.join(", ")),
        hashed,
        ruled,
    }
}

/// DuckDB's answer to each of `queries` over the Parquet `files` (tests/python/policy_views.py).
pub(crate) fn duckdb(
    files: &[PathBuf],
    queries: &BTreeMap<String, String>,
) -> BTreeMap<String, Vec<Row>> {
    let mut child = Command::new(crate::pyarrow_readback::python())
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/python/policy_views.py"
        ))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python runs");
    let asked = json!({"files": files, "queries": queries});
    serde_json::to_writer(child.stdin.take().unwrap(), &asked).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("DuckDB's answers as JSON")
}
