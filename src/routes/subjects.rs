use actix_web::{web, HttpResponse};
use serde::Deserialize;
use serde_json::json;

use crate::auth::{Authorized, UserAdmin};
use crate::error::ApiResult;
use crate::state::AppState;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetPermissionsRequest {
    subject_id: String,
    permissions: Vec<String>,
}

pub async fn list_subjects(_: Authorized<UserAdmin>, state: web::Data<AppState>) -> HttpResponse {
    HttpResponse::Ok().json(state.auth.list_subjects())
}

pub async fn set_subject_permissions(
    _: Authorized<UserAdmin>,
    state: web::Data<AppState>,
    body: web::Json<SetPermissionsRequest>,
) -> ApiResult<HttpResponse> {
    let b = body.into_inner();
    let permissions = state
        .auth
        .set_permissions(b.subject_id.clone(), b.permissions)
        .await?;
    Ok(HttpResponse::Ok().json(json!({ "subject_id": b.subject_id, "permissions": permissions })))
}

pub async fn list_permissions(
    _: Authorized<UserAdmin>,
    state: web::Data<AppState>,
) -> HttpResponse {
    HttpResponse::Ok().json(state.auth.permission_names())
}

pub async fn get_subject_permissions(
    _: Authorized<UserAdmin>,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> ApiResult<HttpResponse> {
    Ok(HttpResponse::Ok().json(state.auth.subject_permissions(&path)?))
}
