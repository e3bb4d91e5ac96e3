//! The schema editor's checks builder: each check of a column is a name, a type chosen from the
//! list SPEC.md 2.2 gives, and its values written as people write them ("0 to 100", "north,
//! south", a pattern), never JSON. One empty line per column adds a check; choosing "remove"
//! drops one.

use std::collections::BTreeMap;

use maud::{html, Markup};
use rapid_actors::schema::CheckSpec;

use crate::web::page::FormData;

/// The check types, what their values look like, and an example.
pub(super) const CHECK_TYPES: [(&str, &str); 6] = [
    ("in_range", "min to max, e.g. 0 to 100"),
    ("str_length", "shortest to longest, e.g. 1 to 20"),
    (
        "greater_than",
        "more than the threshold (0 refuses 0), e.g. 0",
    ),
    (
        "less_than",
        "less than the threshold (9 refuses 9), e.g. 1000",
    ),
    ("isin", "the allowed values, comma separated"),
    ("str_matches", "a regular expression, e.g. ^[A-Z]{2}$"),
];

/// One check as the editor shows it.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct CheckRow {
    pub name: String,
    pub kind: String,
    pub values: String,
}

/// A stored check in the editor's words.
fn row_of(name: &str, spec: &CheckSpec) -> CheckRow {
    CheckRow {
        name: name.to_string(),
        kind: spec.check_type.clone(),
        values: spec.values_in_words(),
    }
}

pub(super) fn rows_of(checks: &BTreeMap<String, CheckSpec>) -> Vec<CheckRow> {
    checks.iter().map(|(n, s)| row_of(n, s)).collect()
}

/// Column `i`'s checks as typed in the form.
pub(super) fn typed_rows(f: &FormData, i: usize) -> Vec<CheckRow> {
    let n: usize = f
        .get(&format!("c{i}_checks_n"))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    let field = |j: usize, k: &str| {
        let v = f.get(&format!("c{i}_k{j}_{k}")).unwrap_or("");
        v.trim().to_string()
    };
    (0..n.min(100))
        .map(|j| CheckRow {
            name: field(j, "name"),
            kind: field(j, "type"),
            values: field(j, "values"),
        })
        .filter(|r| !r.kind.is_empty() && r.kind != "remove")
        .collect()
}

/// The checks of column `column` (of `data_type`) from the editor's lines; what could not be read
/// goes to `problems`, in words.
pub(super) fn specs_of(
    column: &str,
    data_type: &str,
    rows: &[CheckRow],
    problems: &mut Vec<String>,
) -> BTreeMap<String, CheckSpec> {
    let mut out = BTreeMap::new();
    for r in rows {
        let shape = CHECK_TYPES.iter().find(|(k, _)| *k == r.kind);
        let Some((kind, shape)) = shape else {
            problems.push(format!(
                "Column {column}: [{}] is not a check type.",
                r.kind
            ));
            continue;
        };
        let Some(spec) = CheckSpec::from_words(kind, &r.values, data_type) else {
            problems.push(format!(
                "Column {column}: the check {kind} needs its values as {shape}; [{}] is not that.",
                r.values
            ));
            continue;
        };
        let mut name = match r.name.is_empty() {
            true => kind.to_string(),
            false => r.name.clone(),
        };
        while out.contains_key(&name) {
            name.push('_');
        }
        out.insert(name, spec);
    }
    out
}

/// Column `i`'s checks as editable lines, and an empty one to add a check.
pub(super) fn cell(i: usize, rows: &[CheckRow]) -> Markup {
    let blank = CheckRow::default();
    let lines: Vec<&CheckRow> = rows.iter().chain(std::iter::once(&blank)).collect();
    html! {
        input type="hidden" name={ "c" (i) "_checks_n" } value=(lines.len());
        @for (j, r) in lines.iter().enumerate() {
            @let f = |k: &str| format!("c{i}_k{j}_{k}");
            @let what = if r.kind.is_empty() { "new check" } else { r.kind.as_str() };
            div.check-line {
                select name=(f("type")) aria-label={ "Column " (i + 1) " " (what) ": type" } {
                    option value="" selected[r.kind.is_empty()] { @if r.kind.is_empty() { "add a check…" } @else { "—" } }
                    @for (k, _) in CHECK_TYPES { option value=(k) selected[r.kind == k] { (k) } }
                    @if !r.kind.is_empty() { option value="remove" { "remove this check" } }
                }
                input name=(f("values")) value=(r.values) placeholder="values" aria-label={ "Column " (i + 1) " " (what) ": values" } aria-describedby="check-help";
                input name=(f("name")) value=(r.name) placeholder="name (optional)" aria-label={ "Column " (i + 1) " " (what) ": name" };
            }
        }
    }
}

/// What each type's values look like (the editor shows it once, under the columns).
pub(super) fn help() -> Markup {
    html! {
        div #check-help.help {
            p { "Checks: choose a type and write its values:" }
            ul { @for (k, shape) in CHECK_TYPES { li { code { (k) } ": " (shape) } } }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(kind: &str, values: &str) -> CheckRow {
        CheckRow {
            name: String::new(),
            kind: kind.into(),
            values: values.into(),
        }
    }

    #[test]
    fn checks_in_words_become_the_schema_s_checks_and_back() {
        let mut problems = vec![];
        let rows = [
            row("in_range", "0 to 100"),
            row("isin", "1, 2"),
            row("str_matches", "^[A-Z]+$"),
        ];
        let specs = specs_of("n", "int", &rows, &mut problems);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(specs["in_range"].values_in_words(), "0 to 100");
        assert_eq!(specs["isin"].values_in_words(), "1, 2");
        assert_eq!(rows_of(&specs), {
            let mut back = vec![
                row("in_range", "0 to 100"),
                row("isin", "1, 2"),
                row("str_matches", "^[A-Z]+$"),
            ];
            back.sort_by(|a, b| a.kind.cmp(&b.kind));
            back.iter_mut().for_each(|r| r.name = r.kind.clone());
            back
        });
        let specs = specs_of("s", "string", &[row("greater_than", "lots")], &mut problems);
        assert!(specs.is_empty());
        assert_eq!(problems, ["Column s: the check greater_than needs its values as more than the threshold (0 refuses 0), e.g. 0; [lots] is not that."]);
    }
}
