//! `GET /datasets/{layer}/{domain}/{dataset}/profile`: what the stored data looks like, column by
//! column (docs/API.md; `rapid_actors::profile`).

use actix_web::{web, HttpResponse};

use crate::answers as doc;
use crate::auth::{DatasetAccess, Read};
use crate::error::ApiResult;
use crate::params::VersionQuery;
use crate::state::AppState;

#[utoipa::path(get, path = "/api/datasets/{layer}/{domain}/{dataset}/profile", tag = "datasets",
    params(("layer" = String, Path, example = "default"), ("domain" = String, Path, example = "demo"), ("dataset" = String, Path, example = "visits"), ("version" = Option<i64>, Query, description = "Schema version; absent, 0 or less: the latest")),
    responses(
        (status = 200, description = "Each column's nulls, distinct count (estimated), bounds, most frequent values (at most 50 values) and histogram (numbers and dates), over every upload profiled, and what changed between the last two uploads (READ access)", body = doc::ProfileView),
        (status = 403, description = "No READ access, or a policy applies to the subject in this version (a profile is over every row)", body = doc::ErrorBody),
        (status = 404, description = "No such dataset or version", body = doc::ErrorBody),
    ))]
pub(crate) async fn get_profile(
    access: DatasetAccess<Read>,
    state: web::Data<AppState>,
    query: web::Query<VersionQuery>,
) -> ApiResult<HttpResponse> {
    let profile = state.engine.profile(&access.pass, query.version)?;
    Ok(HttpResponse::Ok().json(profile))
}
