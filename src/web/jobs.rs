//! Jobs: the viewer's jobs (every job for DATA_ADMIN), one line each with its status; the
//! detail (the query a query job ran, an upload's problems grouped by column and rule, the
//! report and result downloads) is on the job's own page. The script refreshes unfinished jobs
//! from `/jobs/{id}/status` until they end.

use actix_web::{web, HttpRequest, HttpResponse};
use maud::{html, Markup};
use rapid_actors::jobs::{JobKind, JobStatus, JobView};

use crate::auth::AnySubject;
use crate::state::AppState;
use crate::web::format::count;
use crate::web::guard::Page;
use crate::web::layout::{errors, page};
use crate::web::page::{ok, FormData, PageError, PageResult};
use crate::web::plain::plain;
use crate::web::problems::job_and_report;
use crate::web::problems::REPORT_BUDGET;
use crate::web::session::sessions;

/// The dataset page of the job's dataset and version (none for a SQL job, which names none).
fn dataset_link(job: &JobView) -> Option<String> {
    (!job.dataset.is_empty()).then(|| {
        format!(
            "/datasets/{}/{}/{}?version={}",
            job.layer, job.domain, job.dataset, job.version
        )
    })
}

/// One job's line; `data-job` lets the script refresh its cells while it runs.
pub(super) fn job_row(job: &JobView) -> Markup {
    let live = job.status == JobStatus::InProgress;
    let short: String = job.job_id.chars().take(8).collect();
    html! {
        tr data-job=[live.then_some(job.job_id.as_str())] {
            td data-label="Job" { a href={ "/jobs/" (job.job_id) } aria-label={ (job.kind.as_str()) " job " (job.job_id) } { (job.kind.as_str()) " " code { (short) } } @if let Some(f) = &job.filename { br; small.file { (f) } } }
            td data-label="Dataset" {
                @match dataset_link(job) {
                    Some(url) => a href=(url) { (job.layer) " / " (job.domain) " / " (job.dataset) " v" (job.version) },
                    None => "SQL",
                }
            }
            td data-field="status" data-label="Status" { span.status data-status=(job.status.as_str()) { (job.status.as_str()) } }
            td data-field="step" data-label="Step" { (job.step.as_str()) }
            td data-field="rows" data-label="Rows" { (count(job.rows_processed.max(0) as u64)) }
            td data-label="Started" { (crate::web::format::when(&job.created_at)) }
            td data-field="errors" data-label="Outcome" { (outcome(job)) }
        }
    }
}

/// What came of the job, in one line: its problems counted (the list is on its page), its
/// report and its result.
fn outcome(job: &JobView) -> Markup {
    let listed = job.errors.as_ref().map_or(0, Vec::len);
    html! {
        @if job.rows_rejected > 0 {
            a href={ "/jobs/" (job.job_id) "#problems" } { (count(job.rows_rejected as u64)) @if job.rows_rejected == 1 { " row with problems" } @else { " rows with problems" } }
        } @else if listed > 0 {
            a href={ "/jobs/" (job.job_id) "#problems" } { (listed) @if listed == 1 { " problem" } @else { " problems" } }
        }
        @if let Some(url) = &job.report_url { " · " a.report href=(url) { "report (CSV)" } }
        @if let Some(url) = &job.quarantine_url { " · " a.quarantined href=(url) { "rows kept apart (CSV)" } }
        @if job.result_url.is_some() { a.download href=(crate::web::job_result::result_link(job)) { "Download the result (CSV)" } }
    }
}

pub(super) fn jobs_table(jobs: &[JobView]) -> Markup {
    html! {
        div.table-wrap {
            table.jobs {
                thead { tr { th scope="col" { "Job" } th scope="col" { "Dataset" } th scope="col" { "Status" } th scope="col" { "Step" } th scope="col" { "Rows" } th scope="col" { "Started" } th scope="col" { "Outcome" } } }
                tbody aria-live="polite" { @for j in jobs { (job_row(j)) } }
            }
        }
    }
}

pub(super) async fn get_jobs(
    state: web::Data<AppState>,
    Page { viewer, pass }: Page<AnySubject>,
) -> PageResult {
    let jobs = state.engine.jobs(&pass)?;
    let all = viewer.is_data_admin();
    let body = html! {
        p { @if all { "Every subject's jobs (you are DATA_ADMIN)." } @else { "Your uploads and large queries." } " Running jobs update by themselves; open a job for its detail." }
        @if jobs.is_empty() { p.empty { "No jobs yet." } } @else { (jobs_table(&jobs)) }
    };
    Ok(ok(page(&viewer, "Jobs", body)))
}

/// The query a QUERY job ran, when these pages started it: the query object and a link to open
/// it in the builder again.
fn query_section(job: &JobView, remembered: Option<String>) -> Markup {
    let Some(dataset) = dataset_link(job).filter(|_| job.kind == JobKind::Query) else {
        return html! {};
    };
    let builder = format!(
        "/datasets/{}/{}/{}/query",
        job.layer, job.domain, job.dataset
    );
    html! {
        h2 { "The query" }
        @match remembered {
            Some(q) => {
                (crate::web::query::query_shown(&FormData::parse(q.as_bytes()).unwrap_or(FormData(vec![]))))
                p { a #open-query href={ (builder) "?" (q) "&action=preview" } { "Open this query in the builder" } " · " a href=(dataset) { "The dataset" } }
            }
            None => p { "This job was started outside these pages (or before the server last started): its query is not known here. " a href=(dataset) { "The dataset" } },
        }
    }
}

pub(super) async fn get_job(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<String>,
    Page { viewer, pass }: Page<AnySubject>,
) -> PageResult {
    let (job, report) = job_and_report(&state, &pass, &path, REPORT_BUDGET).await?;
    let remembered = sessions(&req).job_query(&job.job_id);
    let body = html! {
        (jobs_table(std::slice::from_ref(&job)))
        @if job.status == JobStatus::InProgress {
            progress.job id="job-progress" aria-label="Job progress" {}
        }
        dl.facts {
            dt { "Job id" } dd { code { (job.job_id) } }
            @if let Some(f) = &job.filename { dt { "File" } dd { (crate::web::format::when(f)) } }
            @if let Some(f) = &job.raw_filename { dt { "Stored as" } dd { (crate::web::format::when(f)) } }
            @if let Some(f) = &job.finished_at { dt { "Finished" } dd { (crate::web::format::when(f)) } }
        }
        (query_section(&job, remembered))
        @if job.kind == JobKind::Query {
            @if let Some(e) = &job.errors { (errors(&e.iter().map(|m| plain(m)).collect::<Vec<_>>())) }
        } @else {
            (crate::web::problems::section(&job, report))
        }
    };
    Ok(ok(page(&viewer, "Job", body)))
}

/// The job as JSON for the script (the session's own view; same checks as the API).
pub(super) async fn job_status(
    state: web::Data<AppState>,
    path: web::Path<String>,
    Page { pass, .. }: Page<AnySubject>,
) -> Result<HttpResponse, PageError> {
    let job = state.engine.job(&pass, &path)?;
    let errors = outcome(&job).into_string();
    Ok(crate::web::page::secure(HttpResponse::Ok().json(
        serde_json::json!({
            "status": job.status,
            "step": job.step,
            "rows_processed": job.rows_processed,
            "errors_html": errors,
            "done": job.status != JobStatus::InProgress,
        }),
    )))
}
