//! A dataset version's history: its commits, newest first, 50 a page (`GET .../history`), and
//! for DATA_ADMIN a rollback to any of them behind a confirmation (`POST .../rollback`): a new
//! commit whose rows are the chosen one's, itself undone by rolling back to the commit before.
//! Each commit links to the rows as of it (the query page's `as_of_commit`) and, for an upload
//! with rows kept apart or refused, to its job's problems.

use std::collections::HashMap;

use actix_web::web;
use maud::{html, Markup};
use rapid_actors::engine::Commit;
use rapid_actors::history::HistorySettings;
use rapid_actors::jobs::JobView;
use rapid_actors::key::DatasetKey;

use crate::auth::{DataAdmin, Read};
use crate::state::AppState;
use crate::web::dataset::{base, confirmation};
use crate::web::format::count;
use crate::web::guard::{OnDataset, Page, Posted};
use crate::web::layout::{csrf_field, notice, page};
use crate::web::page::{ok, see_other, PageResult};
use crate::web::session::Viewer;

/// Commits one page shows.
const PER_PAGE: i64 = 50;

#[derive(serde::Deserialize)]
pub(super) struct HistoryParams {
    version: Option<i64>,
    #[serde(default = "first_page")]
    page: i64,
    #[serde(default)]
    done: String,
    #[serde(default)]
    done_sig: String,
}

fn first_page() -> i64 {
    1
}

/// The upload job of each raw file the viewer may see (its own, or every one for DATA_ADMIN),
/// by raw file name: where a commit's rows with problems can be found again.
fn jobs_by_file(jobs: Vec<JobView>) -> HashMap<String, JobView> {
    jobs.into_iter()
        .filter_map(|j| j.raw_filename.clone().map(|f| (f, j)))
        .collect()
}

fn commit_row(
    viewer: &Viewer,
    (url, version): (&str, i64),
    c: &Commit,
    newest: bool,
    job: Option<&JobView>,
) -> Markup {
    let rows_at = format!(
        "{url}/query?version={version}&as_of_commit={}&action=preview",
        c.commit
    );
    html! {
        tr {
            td data-label="Commit" { (c.commit) }
            td data-label="When" { (crate::web::format::when(&c.committed_at)) }
            td data-label="Operation" { (c.operation) }
            td data-label="By" { (c.subject.as_deref().unwrap_or("the service")) }
            td data-label="File" {
                (c.raw_filename.as_deref().unwrap_or(""))
                @if let Some(j) = job.filter(|j| j.rows_rejected > 0) {
                    br; a.problems href={ "/jobs/" (j.job_id) "#problems" } { (count(j.rows_rejected as u64)) @if j.rows_rejected == 1 { " row with problems" } @else { " rows with problems" } }
                }
            }
            td.num data-label="Rows added" { (count(c.rows_added.max(0) as u64)) }
            td.num data-label="Rows removed" { (count(c.rows_removed.max(0) as u64)) }
            td.num data-label="Net change" { (net_change(c)) }
            td data-label="Rows" { a.as-of href=(rows_at) aria-label={ "The rows as of commit " (c.commit) } { "Rows as of this commit" } }
            td data-label="Roll back" {
                @if newest { "(current)" }
                @else if viewer.is_data_admin() {
                    form.inline method="post" action={ (url) "/rollback" } {
                        (csrf_field(viewer))
                        input type="hidden" name="version" value=(version);
                        input type="hidden" name="to_commit" value=(c.commit);
                        button type="submit" aria-label={ "Roll back to commit " (c.commit) } { "Roll back to this…" }
                    }
                }
            }
        }
    }
}

/// What the commit did to the number of rows: a rollback that lists 3,000 rows again in place
/// of 3,483 is "−483"; a compaction rewrites files and changes no row.
fn net_change(c: &Commit) -> String {
    if c.operation == "COMPACT" {
        return "none (files merged)".into();
    }
    let net = c.rows_added - c.rows_removed;
    match net.signum() {
        1 => format!("+{}", count(net as u64)),
        -1 => format!("−{}", count(net.unsigned_abs())),
        _ => "0".into(),
    }
}

/// A span of seconds in the largest whole unit that states it exactly ("2 days", "90 seconds").
fn span(seconds: u64) -> String {
    let (n, unit) = [(86_400, "day"), (3600, "hour"), (60, "minute")]
        .into_iter()
        .find(|(unit, _)| seconds > 0 && seconds.is_multiple_of(*unit))
        .map_or((seconds, "second"), |(u, name)| (seconds / u, name));
    format!("{} {unit}{}", count(n), if n == 1 { "" } else { "s" })
}

/// The retention this version has: its schema's `metadata.history` where set, else the settings.
fn retention_sentence(keep: &HistorySettings) -> Markup {
    let seconds = keep.keep_for.as_secs();
    html! {
        p #retention {
            "Every upload, overwrite, file deletion, compaction and rollback of this version is a commit. Files a commit replaced stay on disk while the commit is retained: this dataset keeps the newest "
            strong #keep-commits { (count(keep.keep_commits)) } " commits of a version"
            @if seconds > 0 { ", and any commit younger than " strong #keep-for { (span(seconds)) } }
            " (its schema's " code { "metadata.history" } " where set, otherwise RAPID_HISTORY_KEEP_COMMITS and RAPID_HISTORY_KEEP_SECONDS)."
        }
    }
}

/// Every version's history a click away, each with its rows.
fn versions_switch(url: &str, version: i64, versions: &[(i64, i64)]) -> Markup {
    html! {
        @if versions.len() > 1 {
            nav.versions #history-versions aria-label="Versions" {
                "Versions: "
                @for (v, rows) in versions {
                    @if *v == version { strong aria-current="page" { (v) } } @else { a href={ (url) "/history?version=" (v) } { (v) } }
                    " (" @if *rows == 0 { "no data" } @else { (count(*rows as u64)) " rows" } ") "
                }
            }
        }
    }
}

fn history_body(
    viewer: &Viewer,
    url: &str,
    (version, keep): (i64, &HistorySettings),
    p: &HistoryParams,
    (commits, jobs): (&[Commit], &HashMap<String, JobView>),
) -> Markup {
    let more = commits.len() as i64 == PER_PAGE;
    html! {
        @let done = crate::web::done::verified(viewer, &p.done, &p.done_sig);
        @if !done.is_empty() { (notice(done)) }
        p { a href={ (url) "?version=" (version) } { "Back to the dataset" } " · schema version " strong #history-version { (version) } }
        (retention_sentence(keep))
        @if commits.is_empty() { p.empty { "No commits yet." } } @else {
            div.table-wrap { table.blocks #commits {
                thead { tr { th scope="col" { "Commit" } th scope="col" { "When" } th scope="col" { "Operation" } th scope="col" { "By" } th scope="col" { "File" } th scope="col" { "Rows added" } th scope="col" { "Rows removed" } th scope="col" { "Net change" } th scope="col" { "Rows" } th scope="col" { "Roll back" } } }
                tbody { @for (i, c) in commits.iter().enumerate() { (commit_row(viewer, (url, version), c, p.page == 1 && i == 0, c.raw_filename.as_ref().and_then(|f| jobs.get(f)))) } }
            } }
        }
        nav.pager aria-label="History pages" {
            @if p.page > 1 { a rel="prev" href={ (url) "/history?version=" (version) "&page=" (p.page - 1) } { "Newer commits" } " " }
            @if more { a rel="next" href={ (url) "/history?version=" (version) "&page=" (p.page + 1) } { "Older commits" } }
        }
    }
}

/// `GET /datasets/{layer}/{domain}/{dataset}/history?version=&page=`.
pub(super) async fn get_history(
    state: web::Data<AppState>,
    params: web::Query<HistoryParams>,
    Page { viewer, pass }: Page<OnDataset<Read>>,
) -> PageResult {
    let version = state.engine.page_version(&pass, params.version)?;
    let versions = state.engine.rows_per_version(&pass)?;
    let commits = state
        .engine
        .history(&pass, Some(version), params.page.max(1), PER_PAGE)?;
    let keep = state.engine.retention(&pass, Some(version))?;
    let url = base(pass.record());
    let title = format!("History of {}", pass.record().name());
    // Jobs the viewer cannot list leave their commits without a problems link, nothing more.
    let listed = state.engine.subject_pass(viewer.subject.clone());
    let jobs = jobs_by_file(state.engine.jobs(&listed).unwrap_or_default());
    let shown = (commits.as_slice(), &jobs);
    let body = html! {
        (versions_switch(&url, version, &versions))
        (history_body(&viewer, &url, (version, &keep), &params, shown))
    };
    Ok(ok(page(&viewer, &title, body)))
}

/// `POST .../rollback` (DATA_ADMIN): a confirmation first, then the rollback.
pub(super) async fn post_rollback(
    state: web::Data<AppState>,
    path: web::Path<(String, String, String)>,
    Posted {
        viewer,
        pass: admin,
        form,
    }: Posted<DataAdmin>,
) -> PageResult {
    let (layer, domain, dataset) = path.into_inner();
    let key = DatasetKey::new(&layer, &domain, &dataset);
    let url = base(&state.engine.dataset(&admin, &key)?);
    let version: i64 = form.required("version", "Version")?.parse().unwrap_or(0);
    let to: i64 = form.required("to_commit", "Commit")?.parse().unwrap_or(0);
    let history = format!("{url}/history?version={version}");
    if form.get("confirm") != Some("yes") {
        let question = html! { "Make a new commit of version " (version) " whose rows are those of commit " strong { (to) } "? Nothing is deleted: the commits after it stay in the history, and rolling back to the commit before this new one undoes it." };
        let fields = html! {
            input type="hidden" name="version" value=(version);
            input type="hidden" name="to_commit" value=(to);
        };
        let yes = html! { button type="submit" { "Yes, roll back" } };
        let action = format!("{url}/rollback");
        return Ok(ok(confirmation(
            &viewer,
            "Roll back?",
            question,
            &action,
            fields,
            yes,
            &history,
        )));
    }
    let commit = state
        .engine
        .rollback(&admin, &key, Some(version), to)
        .await?;
    let done = crate::web::done::query(
        &viewer,
        &format!("Commit {commit} has the rows of commit {to}."),
    );
    Ok(see_other(&format!("{history}&{done}")))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_span_is_stated_in_its_largest_exact_unit() {
        assert_eq!(super::span(86_400), "1 day");
        assert_eq!(super::span(7 * 86_400), "7 days");
        assert_eq!(super::span(5400), "90 minutes");
        assert_eq!(super::span(90), "90 seconds");
        assert_eq!(super::span(1), "1 second");
    }
}
