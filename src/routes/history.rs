//! `GET /datasets/{layer}/{domain}/{dataset}/history`: the commits of a dataset version, newest
//! first, a page at a time (docs/API.md, history; `rapid_actors::history`).

use actix_web::{web, HttpResponse};

use crate::answers as doc;
use crate::auth::{DatasetAccess, Read};
use crate::error::ApiResult;
use crate::params::HistoryQuery;
use crate::state::AppState;

#[utoipa::path(get, path = "/api/datasets/{layer}/{domain}/{dataset}/history", tag = "datasets",
    params(("layer" = String, Path, example = "default"), ("domain" = String, Path, example = "demo"), ("dataset" = String, Path, example = "visits"), ("version" = Option<i64>, Query, description = "Schema version; absent, 0 or less: the latest"),
        ("page" = Option<i64>, Query, description = "The page, from 1 (the newest commits; default 1)"),
        ("per_page" = Option<i64>, Query, description = "Commits a page, 1 to 1000 (default 100); a shorter page is the last")),
    responses(
        (status = 200, description = "The version's commits, newest first (READ access): each upload, overwrite, raw file deletion and compaction, with the rows it added and removed", body = Vec<doc::Commit>),
        (status = 400, description = "A page or per_page out of range", body = doc::ErrorBody),
        (status = 404, description = "No such dataset or version", body = doc::ErrorBody),
    ))]
pub async fn get_history(
    access: DatasetAccess<Read>,
    state: web::Data<AppState>,
    query: web::Query<HistoryQuery>,
) -> ApiResult<HttpResponse> {
    let commits = state
        .engine
        .history(&access.pass, query.version, query.page, query.per_page)?;
    Ok(HttpResponse::Ok().json(commits))
}
