//! A job's problems, grouped by column and rule: how many of each, the first example, the
//! columns a file is missing named one by one; the true total of rows with problems and the
//! report listing every one, when the job has them.

use maud::{html, Markup};
use rapid_actors::jobs::JobView;

use crate::web::preview::count;

/// One group of problems: the column, the rule broken, how many listed, the first message.
struct Group {
    column: String,
    rule: String,
    listed: usize,
    example: String,
}

/// The rule a message states, in a few words (the message after "Column [x] ").
fn rule_of(rest: &str) -> String {
    let rules = [
        ("has an incorrect data type", "wrong type"),
        ("does not allow null values", "empty value"),
        ("must be unique", "value repeated"),
        ("has a value longer than", "value too long"),
        ("has text that is not UTF-8", "not UTF-8 text"),
    ];
    if let Some((_, words)) = rules.iter().find(|(starts, _)| rest.starts_with(starts)) {
        let expected = rest.split("Expected ").nth(1).and_then(|e| {
            let e = e.split(", received").next()?;
            Some(format!(" (expected {e})"))
        });
        return format!("{words}{}", expected.unwrap_or_default());
    }
    if let Some(check) = rest.strip_prefix("failed check [") {
        let name = check.split(']').next().unwrap_or_default();
        return format!("check {name}");
    }
    rest.split([':', '.']).next().unwrap_or(rest).to_string()
}

/// The names listed after `label: [` in `m`, if any.
fn names_after(m: &str, label: &str) -> Vec<String> {
    let Some(rest) = m.split(&format!("{label}: [")).nth(1) else {
        return vec![];
    };
    let list = rest.split(']').next().unwrap_or_default();
    list.split(',')
        .map(|n| n.trim().to_string())
        .filter(|n| !n.is_empty())
        .collect()
}

/// (column, rule) of one message; a file-level message names its missing columns each.
fn places(m: &str) -> Vec<(String, String)> {
    let missing = names_after(m, "Missing columns");
    if !missing.is_empty() {
        let extra = names_after(m, "columns the schema does not have");
        let mut out: Vec<(String, String)> = missing
            .into_iter()
            .map(|c| (c, "missing from the file".into()))
            .collect();
        out.extend(extra.into_iter().map(|c| (c, "not in the schema".into())));
        return out;
    }
    match m.strip_prefix("Column [").and_then(|r| r.split_once("] ")) {
        Some((column, rest)) => vec![(column.to_string(), rule_of(rest))],
        None => vec![("(the file)".into(), m.to_string())],
    }
}

/// The listed messages grouped, in order of first appearance; and the count the list left out.
fn grouped(errors: &[String]) -> (Vec<Group>, u64) {
    let mut groups: Vec<Group> = vec![];
    let mut unlisted = 0;
    for m in errors {
        if let Some(n) = m.strip_prefix("... and ").and_then(|r| r.split(' ').next()) {
            unlisted += n.parse::<u64>().unwrap_or(0);
            continue;
        }
        for (column, rule) in places(m) {
            match groups
                .iter_mut()
                .find(|g| g.column == column && g.rule == rule)
            {
                Some(g) => g.listed += 1,
                None => groups.push(Group {
                    column,
                    rule,
                    listed: 1,
                    example: m.clone(),
                }),
            }
        }
    }
    (groups, unlisted)
}

/// The totals above the groups: rows with problems, problems listed and left out.
fn totals(job: &JobView, listed: usize, unlisted: u64) -> Markup {
    html! {
        p #problem-totals {
            @if job.rows_rejected > 0 { strong { (count(job.rows_rejected as u64)) } " rows have problems. " }
            (count(listed as u64)) " problems are listed below"
            @if unlisted > 0 { ", and " strong { (count(unlisted)) " more" } " are not" }
            "."
            @if let Some(url) = &job.report_url { " " a #job-report href=(url) download { "Download the report of every problem (CSV)" } }
            @if let Some(url) = &job.quarantine_url { " · " a href=(url) download { "the rows kept apart (CSV)" } }
        }
    }
}

/// The job's problems by column and rule, with every message behind a disclosure.
pub fn section(job: &JobView) -> Markup {
    let Some(errors) = job.errors.as_ref().filter(|e| !e.is_empty()) else {
        return html! {};
    };
    let (groups, unlisted) = grouped(errors);
    let listed = errors.len() - usize::from(unlisted > 0);
    html! {
        h2 #problems { "Problems" }
        (totals(job, listed, unlisted))
        div.table-wrap {
            table #problem-groups {
                thead { tr { th scope="col" { "Column" } th scope="col" { "Rule" } th scope="col" { "Listed" } th scope="col" { "First example" } } }
                tbody { @for g in &groups { tr { td { (g.column) } td { (g.rule) } td.num { (count(g.listed as u64)) } td { (g.example) } } } }
            }
        }
        details {
            summary { "Every listed problem (" (count(listed as u64)) ")" }
            ul.errors { @for e in errors { li { (e) } } }
        }
    }
}
