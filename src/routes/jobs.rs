use actix_web::{web, HttpResponse};

use crate::answers as doc;
use crate::auth::{AnySubject, Authorized};
use crate::error::ApiResult;
use crate::state::AppState;

/// The caller's jobs; every job for DATA_ADMIN.
#[utoipa::path(get, path = "/api/jobs", tag = "jobs",
    responses((status = 200, description = "The caller's jobs (every job for DATA_ADMIN)", body = Vec<doc::JobView>)))]
pub(crate) async fn list_jobs(
    caller: Authorized<AnySubject>,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let jobs = state.engine.jobs(&caller.pass)?;
    Ok(HttpResponse::Ok().json(jobs))
}

/// One job, for its owner or a DATA_ADMIN.
#[utoipa::path(get, path = "/api/jobs/{job_id}", tag = "jobs",
    params(("job_id" = String, Path)),
    responses(
        (status = 200, description = "The job (its owner or DATA_ADMIN)", body = doc::JobView),
        (status = 404, description = "No such job", body = doc::ErrorBody),
    ))]
pub(crate) async fn get_job(
    caller: Authorized<AnySubject>,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let job = state.engine.job(&caller.pass, &path)?;
    Ok(HttpResponse::Ok().json(job))
}
