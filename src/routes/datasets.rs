//! Dataset data: upload, raw file listing and deletion, dataset deletion, compaction.

use actix_multipart::Multipart;
use actix_web::{web, HttpRequest, HttpResponse};
use rapid_actors::key::DatasetKey;
use serde::Deserialize;

use crate::answers as doc;
use crate::auth::{AnySubject, Authorized, DataAdmin, DatasetAccess, Write};
use crate::error::{not_found_as_invalid, ApiResult};
use crate::params::{EraseQuery, UploadQuery, VersionQuery};
use crate::state::AppState;
use crate::upload::receive_upload;

#[utoipa::path(post, path = "/api/datasets/{layer}/{domain}/{dataset}", tag = "datasets",
    params(("layer" = String, Path, example = "default"), ("domain" = String, Path, example = "demo"), ("dataset" = String, Path, example = "visits"), ("version" = Option<i64>, Query, description = "Schema version; absent, 0 or less: the latest"),
        ("on_error" = Option<doc::OnErrorMode>, Query, description = "`reject` (the default): a row that breaks the schema refuses the whole file. `quarantine`: the valid rows are stored and the others kept apart, linked as `quarantine_url` (CSV: the rows as received, with `_row` and `_problems`) with `report_url`; the 202 and the job count both")),
    request_body(content = doc::FileUpload, content_type = "multipart/form-data"),
    responses(
        (status = 202, description = "Valid (in quarantine mode: its valid rows): its job commits it (WRITE access)", body = doc::UploadAccepted),
        (status = 404, description = "No such dataset or version", body = doc::ErrorBody),
        (status = 413, description = "The file is over the upload limit", body = doc::ErrorBody),
        (status = 422, description = "The data fails validation: the first 100 problems and a count of the rest in `details`, and `report_url`, a signed link to every problem as CSV (row, column, rule, value, key, message), when there were problems in rows", body = doc::ErrorBody),
    ))]
pub(crate) async fn upload_dataset(
    req: HttpRequest,
    access: DatasetAccess<Write>,
    state: web::Data<AppState>,
    query: web::Query<UploadQuery>,
    mut payload: Multipart,
) -> ApiResult<HttpResponse> {
    // The version is checked (404) before the body is read.
    let target = state
        .engine
        .upload_target(access.pass, query.version)?
        .linking_from(&state.link_origin(&req))
        .on_error(query.on_error.into());
    let accepted = receive_upload(target, &mut payload).await?;
    Ok(HttpResponse::Accepted().json(doc::UploadAccepted::from(accepted)))
}

#[derive(Debug, Deserialize)]
pub(crate) struct VersionPath {
    layer: String,
    domain: String,
    dataset: String,
    version: i64,
}

#[utoipa::path(get, path = "/api/datasets/{layer}/{domain}/{dataset}/{version}/files", tag = "datasets",
    params(("layer" = String, Path, example = "default"), ("domain" = String, Path, example = "demo"), ("dataset" = String, Path, example = "visits"), ("version" = i64, Path, example = 1, minimum = 1)),
    responses(
        (status = 200, description = "The raw file names of the version", body = Vec<String>),
        (status = 404, description = "No such dataset, or no files", body = doc::ErrorBody),
    ))]
pub(crate) async fn list_raw_files(
    caller: Authorized<AnySubject>,
    state: web::Data<AppState>,
    path: web::Path<VersionPath>,
) -> ApiResult<HttpResponse> {
    let p = path.into_inner();
    let key = DatasetKey::new(&p.layer, &p.domain, &p.dataset);
    let names = state.engine.files(&caller.pass, &key, p.version)?;
    Ok(HttpResponse::Ok().json(names))
}

#[utoipa::path(delete, path = "/api/datasets/{layer}/{domain}/{dataset}/{version}/{filename}", tag = "datasets",
    params(("layer" = String, Path, example = "default"), ("domain" = String, Path, example = "demo"), ("dataset" = String, Path, example = "visits"), ("version" = i64, Path, example = 1, minimum = 1), ("filename" = String, Path, description = "A raw file name"), ("erase" = Option<bool>, Query, description = "`true`: erasure, for data that must go: the file's rows also leave every retained commit (as-of reads and the Delta log's versions no longer hold them; files of earlier commits that mixed them with other rows are rewritten without them) and the deletion's commit is `ERASE` in the history. Absent or `false`: earlier commits keep the rows")),
    responses(
        (status = 200, description = "The file and its rows are deleted (WRITE access); with `erase=true`, from every retained commit too", body = doc::Confirmation),
        (status = 404, description = "No such dataset or file", body = doc::ErrorBody),
    ))]
pub(crate) async fn delete_raw_file(
    access: DatasetAccess<Write>,
    state: web::Data<AppState>,
    path: web::Path<(String, String, String, i64, String)>,
    query: web::Query<EraseQuery>,
) -> ApiResult<HttpResponse> {
    let (_, _, _, version, filename) = path.into_inner();
    state
        .engine
        .delete_file(&access.pass, version, &filename, query.erase)
        .await?;
    Ok(HttpResponse::Ok().json(doc::Confirmation::new(format!(
        "{filename} has been deleted."
    ))))
}

#[utoipa::path(delete, path = "/api/datasets/{layer}/{domain}/{dataset}", tag = "datasets",
    params(("layer" = String, Path), ("domain" = String, Path), ("dataset" = String, Path)),
    responses(
        (status = 202, description = "Deleted: every version, file and schema (DATA_ADMIN)", body = doc::Confirmation),
        (status = 400, description = "No such dataset (400, not 404: the rAPId SDK expects it)", body = doc::ErrorBody),
    ))]
pub(crate) async fn delete_dataset(
    admin: Authorized<DataAdmin>,
    state: web::Data<AppState>,
    path: web::Path<(String, String, String)>,
) -> ApiResult<HttpResponse> {
    let (layer, domain, dataset) = path.into_inner();
    let record = state
        .engine
        .delete_dataset(&admin.pass, &DatasetKey::new(&layer, &domain, &dataset))
        .await
        .map_err(not_found_as_invalid)?;
    Ok(
        HttpResponse::Accepted().json(doc::Confirmation::new(format!(
            "{} has been deleted.",
            record.name()
        ))),
    )
}

/// `POST .../compact`: merges the version's small data files now, as a COMPACT job.
#[utoipa::path(post, path = "/api/datasets/{layer}/{domain}/{dataset}/compact", tag = "datasets",
    params(("layer" = String, Path, example = "default"), ("domain" = String, Path, example = "demo"), ("dataset" = String, Path, example = "visits"), ("version" = Option<i64>, Query, description = "Schema version; absent, 0 or less: the latest")),
    responses(
        (status = 202, description = "A COMPACT job merges the version's small files (DATA_ADMIN); answers of queries are the same before, during and after", body = doc::QueryJobAccepted),
        (status = 404, description = "No such dataset or version", body = doc::ErrorBody),
    ))]
pub(crate) async fn compact_dataset(
    admin: Authorized<DataAdmin>,
    state: web::Data<AppState>,
    path: web::Path<(String, String, String)>,
    query: web::Query<VersionQuery>,
) -> ApiResult<HttpResponse> {
    let (layer, domain, dataset) = path.into_inner();
    let key = DatasetKey::new(&layer, &domain, &dataset);
    let job_id = state.engine.compact(&admin.pass, &key, query.version)?;
    Ok(HttpResponse::Accepted().json(doc::QueryJobAccepted::new(job_id)))
}
