//! Jobs: the viewer's jobs (every job for DATA_ADMIN) with their status; the script refreshes
//! unfinished ones from `/jobs/{id}/status` until they end.

use actix_web::{web, HttpResponse};
use maud::{html, Markup};
use rapid_actors::jobs::{JobStatus, JobView};

use crate::auth::AnySubject;
use crate::state::AppState;
use crate::web::backend;
use crate::web::guard::Page;
use crate::web::layout::page;
use crate::web::page::{ok, PageError, PageResult};

/// One job's status cells; `data-job` lets the script refresh them while it runs.
pub fn job_row(job: &JobView) -> Markup {
    let live = job.status == JobStatus::InProgress;
    html! {
        tr data-job=[live.then_some(job.job_id.as_str())] {
            td { a href={ "/jobs/" (job.job_id) } { (job.kind.as_str()) } }
            td { (job.layer) " / " (job.domain) " / " (job.dataset) " v" (job.version) }
            td data-field="status" { span.status data-status=(job.status.as_str()) { (job.status.as_str()) } }
            td data-field="step" { (job.step.as_str()) }
            td data-field="rows" { (job.rows_processed) }
            td { (job.created_at) }
            td data-field="errors" { (job_errors(job)) }
        }
    }
}

fn job_errors(job: &JobView) -> Markup {
    html! {
        @if let Some(errors) = &job.errors {
            ul.errors { @for e in errors { li { (e) } } }
        }
        @if let Some(url) = &job.result_url {
            a.download href=(url) { "Download the result (CSV)" }
        }
    }
}

pub fn jobs_table(jobs: &[JobView]) -> Markup {
    html! {
        div.table-wrap {
            table.jobs {
                thead { tr { th scope="col" { "Job" } th scope="col" { "Dataset" } th scope="col" { "Status" } th scope="col" { "Step" } th scope="col" { "Rows" } th scope="col" { "Started" } th scope="col" { "Errors / result" } } }
                tbody aria-live="polite" { @for j in jobs { (job_row(j)) } }
            }
        }
    }
}

pub async fn get_jobs(
    state: web::Data<AppState>,
    Page { viewer, .. }: Page<AnySubject>,
) -> PageResult {
    let jobs = backend::list_jobs(&state, &viewer.subject)?;
    let all = backend::is_data_admin(&viewer.subject);
    let body = html! {
        p { @if all { "Every subject's jobs (you are DATA_ADMIN)." } @else { "Your uploads and large queries." } " Running jobs update by themselves." }
        @if jobs.is_empty() { p.empty { "No jobs yet." } } @else { (jobs_table(&jobs)) }
    };
    Ok(ok(page(&viewer, "Jobs", body)))
}

pub async fn get_job(
    state: web::Data<AppState>,
    path: web::Path<String>,
    Page { viewer, .. }: Page<AnySubject>,
) -> PageResult {
    let job = backend::job(&state, &viewer.subject, &path)?;
    let body = html! {
        (jobs_table(std::slice::from_ref(&job)))
        @if job.status == JobStatus::InProgress {
            progress.job id="job-progress" aria-label="Job progress" {}
        }
        dl.facts {
            dt { "Job id" } dd { code { (job.job_id) } }
            @if let Some(f) = &job.raw_filename { dt { "File" } dd { (f) } }
            @if let Some(f) = &job.finished_at { dt { "Finished" } dd { (f) } }
        }
    };
    Ok(ok(page(&viewer, "Job", body)))
}

/// The job as JSON for the script (the session's own view; same checks as the API).
pub async fn job_status(
    state: web::Data<AppState>,
    path: web::Path<String>,
    Page { viewer, .. }: Page<AnySubject>,
) -> Result<HttpResponse, PageError> {
    let job = backend::job(&state, &viewer.subject, &path)?;
    let errors = job_errors(&job).into_string();
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
