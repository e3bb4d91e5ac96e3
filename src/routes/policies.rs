//! Dataset policies (row filters, column masks) per schema version, and subject attributes
//! (docs/API.md, "Policies, audit, events, MCP").

use actix_web::{web, HttpResponse};
use rapid_actors::key::DatasetKey;
use rapid_actors::query::policy::Policy;

use crate::answers as doc;
use crate::auth::{Authorized, DataAdmin, UserAdmin};
use crate::error::ApiResult;
use crate::params::VersionQuery;
use crate::state::AppState;

fn key(path: web::Path<(String, String, String)>) -> DatasetKey {
    let (layer, domain, dataset) = path.into_inner();
    DatasetKey::new(&layer, &domain, &dataset)
}

#[utoipa::path(put, path = "/api/datasets/{layer}/{domain}/{dataset}/policy", tag = "policies",
    params(("layer" = String, Path, example = "default"), ("domain" = String, Path, example = "demo"),
        ("dataset" = String, Path, example = "visits"),
        ("version" = Option<i64>, Query, description = "Schema version; absent, 0 or less: the latest")),
    request_body(content = Policy,
        description = "Row filters (the /query filter language; subject_attr('k') reads a subject attribute) and column masks (redact, null, hash, last4, year)"),
    responses(
        (status = 200, description = "The policy as stored, replacing any (DATA_ADMIN)", body = Policy),
        (status = 400, description = "An unknown column, mask, subject or permission, or a filter that does not parse", body = doc::ErrorBody),
        (status = 404, description = "No such dataset or version", body = doc::ErrorBody),
    ))]
pub(crate) async fn put_policy(
    admin: Authorized<DataAdmin>,
    state: web::Data<AppState>,
    path: web::Path<(String, String, String)>,
    query: web::Query<VersionQuery>,
    body: web::Bytes,
) -> ApiResult<HttpResponse> {
    let policy = state
        .engine
        .put_policy(&admin.pass, &key(path), query.version, &body)?;
    Ok(HttpResponse::Ok().json(policy))
}

#[utoipa::path(get, path = "/api/datasets/{layer}/{domain}/{dataset}/policy", tag = "policies",
    params(("layer" = String, Path, example = "default"), ("domain" = String, Path, example = "demo"),
        ("dataset" = String, Path, example = "visits"),
        ("version" = Option<i64>, Query, description = "Schema version; absent, 0 or less: the latest")),
    responses(
        (status = 200, description = "The version's policy (DATA_ADMIN)", body = Policy),
        (status = 404, description = "No such dataset or version, or it has no policy", body = doc::ErrorBody),
    ))]
pub(crate) async fn get_policy(
    admin: Authorized<DataAdmin>,
    state: web::Data<AppState>,
    path: web::Path<(String, String, String)>,
    query: web::Query<VersionQuery>,
) -> ApiResult<HttpResponse> {
    let policy = state
        .engine
        .policy(&admin.pass, &key(path), query.version)?;
    Ok(HttpResponse::Ok().json(policy))
}

#[utoipa::path(delete, path = "/api/datasets/{layer}/{domain}/{dataset}/policy", tag = "policies",
    params(("layer" = String, Path, example = "default"), ("domain" = String, Path, example = "demo"),
        ("dataset" = String, Path, example = "visits"),
        ("version" = Option<i64>, Query, description = "Schema version; absent, 0 or less: the latest")),
    responses(
        (status = 204, description = "The policy is removed (DATA_ADMIN)"),
        (status = 404, description = "No such dataset or version, or it has no policy", body = doc::ErrorBody),
    ))]
pub(crate) async fn delete_policy(
    admin: Authorized<DataAdmin>,
    state: web::Data<AppState>,
    path: web::Path<(String, String, String)>,
    query: web::Query<VersionQuery>,
) -> ApiResult<HttpResponse> {
    state
        .engine
        .delete_policy(&admin.pass, &key(path), query.version)?;
    Ok(HttpResponse::NoContent().finish())
}

#[utoipa::path(put, path = "/api/subjects/{subject_id}/attributes", tag = "subjects",
    params(("subject_id" = String, Path, description = "A client id or user id")),
    request_body(content = std::collections::HashMap<String, String>,
        description = "Attribute name -> text value, read by policies' subject_attr('name')"),
    responses(
        (status = 200, description = "The subject's attributes, replaced (USER_ADMIN)", body = std::collections::HashMap<String, String>),
        (status = 400, description = "Not an object of text values", body = doc::ErrorBody),
        (status = 404, description = "No such subject", body = doc::ErrorBody),
    ))]
pub(crate) async fn set_subject_attributes(
    caller: Authorized<UserAdmin>,
    state: web::Data<AppState>,
    path: web::Path<String>,
    body: web::Json<serde_json::Value>,
) -> ApiResult<HttpResponse> {
    let attributes = state
        .engine
        .set_subject_attributes(&caller.pass, &path, &body)?;
    Ok(HttpResponse::Ok().json(attributes))
}
