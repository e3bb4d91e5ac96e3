//! A query job's result from its page (`GET /jobs/{id}/result.csv`): the job's CSV as the
//! "Download CSV" button gives it (no index column) and named after the dataset and the job, not
//! the result's id. Streamed: the index cells are cut piece by piece ([`IndexCut`]).

use actix_web::http::header;
use actix_web::{web, HttpResponse};
use futures_util::StreamExt;
use rapid_actors::jobs::JobView;

use crate::auth::AnySubject;
use crate::state::AppState;
use crate::web::guard::Page;
use crate::web::page::{secure, PageError};
use crate::web::problems::signed_result;
use crate::web::query_form::IndexCut;

/// Where a job's page links its result.
pub(super) fn result_link(job: &JobView) -> String {
    format!("/jobs/{}/result.csv", job.job_id)
}

/// `{layer}-{domain}-{dataset}-v{version}-job-{first 8 of the id}.csv` (an SQL job: `sql-job-...`).
fn file_name(job: &JobView) -> String {
    let short: String = job.job_id.chars().take(8).collect();
    match job.dataset.is_empty() {
        true => format!("sql-job-{short}.csv"),
        false => format!(
            "{}-{}-{}-v{}-job-{short}.csv",
            job.layer, job.domain, job.dataset, job.version
        ),
    }
}

pub(super) async fn get_result(
    state: web::Data<AppState>,
    path: web::Path<String>,
    Page { pass, .. }: Page<AnySubject>,
) -> Result<HttpResponse, PageError> {
    let job = state.engine.job(&pass, &path)?;
    let gone = || {
        PageError::from(rapid_actors::Error::not_found(
            "This job has no result to download (it has not finished, failed, or its result \
             expired): run the query again.",
        ))
    };
    let url = job.result_url.as_deref().ok_or_else(gone)?;
    let stream = signed_result(&state, url).await.ok_or_else(gone)?;
    let mut cut = IndexCut::default();
    let body = stream.map(move |piece| piece.map(|bytes| web::Bytes::from(cut.cut(&bytes))));
    Ok(secure(
        HttpResponse::Ok()
            .content_type("text/csv; charset=utf-8")
            .insert_header((
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{}\"", file_name(&job)),
            ))
            .streaming(body),
    ))
}
