//! A job's problems, grouped by column and rule: how many of each, the first example, the
//! columns a file is missing named one by one; the true total of rows with problems and the
//! report listing every one, when the job has them: read (its first [`REPORT_BUDGET`] bytes),
//! the counts per column and rule are the report's, every problem counted.

use maud::{html, Markup};
use rapid_actors::auth::pass::SubjectPass;
use rapid_actors::jobs::JobView;

use crate::state::AppState;

use crate::web::format::count;

/// How much of a problem report a page reads to count its problems (about 80,000 problems;
/// past them the counts say "at least"), so a page's memory stays small.
pub(super) const REPORT_BUDGET: usize = 8 << 20;

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

/// The messages grouped, in order of first appearance; and the count a capped list left out
/// ("... and N more errors").
fn grouped<'a>(messages: impl Iterator<Item = &'a str>) -> (Vec<Group>, u64) {
    let mut groups: Vec<Group> = vec![];
    let mut unlisted = 0;
    for m in messages {
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
                    example: m.to_string(),
                }),
            }
        }
    }
    (groups, unlisted)
}

/// The fields of one CSV record starting at `text`, and where the next record starts (quotes
/// honoured: a quoted field may hold commas, quotes doubled and line ends).
fn record(text: &str) -> (Vec<String>, usize) {
    let (mut fields, mut field, mut quoted) = (vec![], String::new(), false);
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek().map(|p| p.1) == Some('"') => {
                field.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => fields.push(std::mem::take(&mut field)),
            ('\n', false) => {
                fields.push(field.trim_end_matches('\r').to_string());
                return (fields, i + 1);
            }
            (c, _) => field.push(c),
        }
    }
    fields.push(field);
    (fields, text.len())
}

/// Every problem of the report (`row,column,rule,value,key,message` CSV), grouped: the true
/// totals. A report cut short (`cut`) loses its last, partial record.
fn from_report(bytes: &[u8], cut: bool) -> Vec<Group> {
    let text = String::from_utf8_lossy(bytes);
    let mut at = record(&text).1;
    let mut messages = vec![];
    while at < text.len() {
        let (fields, next) = record(&text[at..]);
        let complete = next < text.len() - at || !cut;
        if let (Some(m), true) = (fields.get(5), complete) {
            messages.push(m.clone());
        }
        at += next;
    }
    grouped(messages.iter().map(String::as_str)).0
}

/// The totals above the groups: rows with problems, problems listed and left out, and the
/// files that hold them all (the report, and in quarantine mode the rows kept apart).
fn totals(job: &JobView, listed: usize, unlisted: u64) -> Markup {
    html! {
        p #problem-totals {
            @if job.rows_rejected > 0 { strong { (count(job.rows_rejected as u64)) } " rows have problems. " }
            @if listed > 0 || job.report_url.is_none() {
                (count(listed as u64)) " problems are listed below"
                @if unlisted > 0 { ", and " strong { (count(unlisted)) " more" } " are not" }
                "."
            }
            @if let Some(url) = &job.report_url { " " a #job-report href=(url) download { "Download the report of every problem (CSV)" } }
        }
        @if let Some(url) = &job.quarantine_url {
            p #quarantine {
                "The upload stored the rows without problems; the rows with problems were kept apart, unchanged: "
                a #quarantine-link href=(url) download { "download the rows kept apart (CSV)" }
                ", correct them and upload that file again."
            }
        }
    }
}

/// The problems by column and rule: counted in the report when there is one (`report`, its
/// first bytes and whether it went on), else among the listed `errors`.
pub(super) fn groups_table(
    id: &str,
    errors: &[String],
    report: Option<&(Vec<u8>, bool)>,
) -> Markup {
    let (listed_groups, unlisted) = grouped(errors.iter().map(String::as_str));
    let (groups, counted) = match report {
        Some((bytes, false)) => (from_report(bytes, false), "Problems"),
        Some((bytes, true)) => (from_report(bytes, true), "Problems (at least)"),
        None if unlisted == 0 => (listed_groups, "Problems"),
        None => (listed_groups, "Listed"),
    };
    html! {
        div.table-wrap {
            table.blocks id=(id) {
                thead { tr { th scope="col" { "Column" } th scope="col" { "Rule" } th scope="col" { (counted) } th scope="col" { "First example" } } }
                tbody { @for g in &groups { tr { td data-label="Column" { (g.column) } td data-label="Rule" { (g.rule) } td.num data-label=(counted) { (count(g.listed as u64)) } td data-label="First example" { (g.example) } } } }
            }
        }
    }
}

/// The job's problems by column and rule, with every listed message behind a disclosure; the
/// counts are the report's (every problem) when the job has one, `report` its first bytes.
/// A job that stored its good rows and kept the others apart (quarantine) has no listed errors
/// but a report: the section is there for it too (the jobs list links to `#problems`).
pub(super) fn section(job: &JobView, report: Option<(Vec<u8>, bool)>) -> Markup {
    let errors: &[String] = job.errors.as_deref().unwrap_or_default();
    let reported = job.rows_rejected > 0 || job.report_url.is_some();
    if errors.is_empty() && !reported {
        return html! {};
    }
    let unlisted = grouped(errors.iter().map(String::as_str)).1;
    let listed = errors.len() - usize::from(unlisted > 0);
    html! {
        h2 #problems { "Problems" }
        (totals(job, listed, unlisted))
        (groups_table("problem-groups", errors, report.as_ref()))
        @if !errors.is_empty() {
            details {
                summary { "Every listed problem (" (count(listed as u64)) ")" }
                ul.errors { @for e in errors { li { (e) } } }
            }
        }
    }
}

/// The file a signed result link (`/api/results/{name}?expires=[&bound=]&signature=`, one of a job the
/// viewer may see) names, as a stream; `None` when the link is not one of ours or no longer valid.
pub(super) async fn signed_result(
    state: &AppState,
    url: &str,
) -> Option<rapid_actors::storage::ByteStream> {
    let rest = url.split("/api/results/").nth(1)?;
    let (name, query) = rest.split_once('?')?;
    let param = |k: &str| {
        let found = query
            .split('&')
            .find_map(|p| p.strip_prefix(&format!("{k}=")[..]));
        found.map(str::to_string)
    };
    let expires = param("expires")?.parse::<i64>().ok()?;
    let signature = param("signature")?;
    // A query job's link is bound to what its reader was allowed: checked again here too.
    let bound = param("bound");
    state
        .engine
        .result(name, expires, &signature, bound.as_deref())
        .await
        .ok()
}

/// The first `budget` bytes of a job's problem report, from its signed link (`report_url`, the
/// job already checked as the viewer's), and whether the report went on past them; `None` when
/// the link is not one of ours or no longer valid.
pub(super) async fn problem_report(
    state: &AppState,
    url: &str,
    budget: usize,
) -> Option<(Vec<u8>, bool)> {
    use futures_util::StreamExt;
    let mut stream = signed_result(state, url).await?;
    let mut bytes = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.ok()?;
        if bytes.len() + chunk.len() > budget {
            bytes.extend_from_slice(&chunk[..budget - bytes.len()]);
            return Some((bytes, true));
        }
        bytes.extend_from_slice(&chunk);
    }
    Some((bytes, false))
}

/// One job (as `GET /api/jobs/{id}`, for its owner or a DATA_ADMIN) and the first `budget` bytes of its problem report, if it has one.
pub(super) async fn job_and_report(
    state: &AppState,
    pass: &SubjectPass,
    job_id: &str,
    budget: usize,
) -> rapid_actors::Result<(JobView, Option<(Vec<u8>, bool)>)> {
    let found = state.engine.job(pass, job_id)?;
    let report = match &found.report_url {
        Some(url) => problem_report(state, url, budget).await,
        None => None,
    };
    Ok((found, report))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problems_group_by_column_and_rule_and_the_report_gives_true_totals() {
        let listed = [
            "Column [day] has an incorrect data type. Expected date, received \"x\" in row 1"
                .to_string(),
            "Missing columns: [qty, price]; columns the schema does not have: [when]".to_string(),
            "... and 7 more errors".to_string(),
        ];
        let (groups, unlisted) = grouped(listed.iter().map(String::as_str));
        let seen: Vec<(&str, &str)> = groups
            .iter()
            .map(|g| (g.column.as_str(), g.rule.as_str()))
            .collect();
        assert_eq!(
            seen,
            [
                ("day", "wrong type (expected date)"),
                ("qty", "missing from the file"),
                ("price", "missing from the file"),
                ("when", "not in the schema")
            ]
        );
        assert_eq!(unlisted, 7);
        let report = "row,column,rule,value,key,message\n1,day,type,x,,\"Column [day] has an incorrect data type. Expected date, received \"\"x\"\" in row 1\"\n2,day,type,y,,\"Column [day] has an incorrect data type. Expected date, received \"\"y\"\" in row 2\"\n3,day,ty";
        let groups = from_report(report.as_bytes(), true);
        assert_eq!(groups.len(), 1);
        assert_eq!(
            (groups[0].listed, groups[0].example.as_str()),
            (
                2,
                "Column [day] has an incorrect data type. Expected date, received \"x\" in row 1"
            )
        );
    }
}
