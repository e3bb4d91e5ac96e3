//! `GET /datasets/{layer}/{domain}/{dataset}/history`: the commits of a dataset version, newest
//! first, a page at a time; `POST .../rollback`: a new commit equal to an earlier one (docs/API.md,
//! history; `rapid_actors::history`).

use actix_web::{web, HttpResponse};

use crate::answers as doc;
use crate::auth::{Authorized, DataAdmin, DatasetAccess, Read};
use crate::error::ApiResult;
use crate::params::{HistoryQuery, RollbackQuery};
use crate::state::AppState;

#[utoipa::path(get, path = "/api/datasets/{layer}/{domain}/{dataset}/history", tag = "datasets",
    params(("layer" = String, Path, example = "default"), ("domain" = String, Path, example = "demo"), ("dataset" = String, Path, example = "visits"), ("version" = Option<i64>, Query, description = "Schema version; absent, 0 or less: the latest"),
        ("page" = Option<i64>, Query, minimum = 1, description = "The page, from 1 (the newest commits; default 1)"),
        ("per_page" = Option<i64>, Query, minimum = 1, maximum = 1000, description = "Commits a page, 1 to 1000 (default 100); a shorter page is the last")),
    responses(
        (status = 200, description = "The version's commits, newest first (READ access): each upload, overwrite, raw file deletion and compaction, with the rows it added and removed", body = Vec<doc::Commit>),
        (status = 400, description = "A page or per_page out of range", body = doc::ErrorBody),
        (status = 403, description = "No READ access, or a policy applies to the subject in this version (the rows added and removed count hidden rows)", body = doc::ErrorBody),
        (status = 404, description = "No such dataset or version", body = doc::ErrorBody),
    ))]
pub(crate) async fn get_history(
    access: DatasetAccess<Read>,
    state: web::Data<AppState>,
    query: web::Query<HistoryQuery>,
) -> ApiResult<HttpResponse> {
    let commits = state
        .engine
        .history(&access.pass, query.version, query.page, query.per_page)?;
    Ok(HttpResponse::Ok().json(commits))
}

/// Synchronous: a rollback only changes catalog rows (no data is copied), so it answers at once.
#[utoipa::path(post, path = "/api/datasets/{layer}/{domain}/{dataset}/rollback", tag = "datasets",
    params(("layer" = String, Path, example = "default"), ("domain" = String, Path, example = "demo"), ("dataset" = String, Path, example = "visits"), ("version" = Option<i64>, Query, description = "Schema version; absent, 0 or less: the latest"),
        ("to_commit" = i64, Query, minimum = 1, description = "The commit whose files the new commit lists again (GET .../history)")),
    responses(
        (status = 200, description = "A new ROLLBACK commit whose rows are those of to_commit (DATA_ADMIN); undone by rolling back to the commit before it", body = doc::RolledBack),
        (status = 400, description = "to_commit missing or not a number", body = doc::ErrorBody),
        (status = 404, description = "No such dataset, version or commit, or a commit past history retention", body = doc::ErrorBody),
        (status = 409, description = "A raw file deletion lies between to_commit and now (deleted uploads are not kept)", body = doc::ErrorBody),
    ))]
pub(crate) async fn rollback(
    admin: Authorized<DataAdmin>,
    state: web::Data<AppState>,
    path: web::Path<(String, String, String)>,
    query: web::Query<RollbackQuery>,
) -> ApiResult<HttpResponse> {
    let (layer, domain, dataset) = path.into_inner();
    let key = rapid_actors::key::DatasetKey::new(&layer, &domain, &dataset);
    let commit = state
        .engine
        .rollback(&admin.pass, &key, query.version, query.to_commit)
        .await?;
    Ok(HttpResponse::Ok().json(doc::RolledBack {
        details: doc::RolledBackDetails {
            commit,
            to_commit: query.to_commit,
        },
    }))
}
