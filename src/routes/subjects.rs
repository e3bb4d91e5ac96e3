use actix_web::{web, HttpResponse};
use serde::Deserialize;

use crate::answers as doc;
use crate::auth::{Authorized, UserAdmin};
use crate::error::ApiResult;
use crate::state::AppState;

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SetPermissionsRequest {
    subject_id: String,
    #[schema(schema_with = doc::rules::replacement_permissions)]
    permissions: Vec<String>,
}

#[utoipa::path(get, path = "/api/subjects", tag = "subjects",
    responses((status = 200, description = "Every client and user (USER_ADMIN)", body = Vec<doc::SubjectView>)))]
pub(crate) async fn list_subjects(
    caller: Authorized<UserAdmin>,
    state: web::Data<AppState>,
) -> HttpResponse {
    HttpResponse::Ok().json(state.auth().list_subjects(&caller.pass))
}

#[utoipa::path(put, path = "/api/subjects/permissions", tag = "subjects",
    request_body = SetPermissionsRequest,
    responses(
        (status = 200, description = "The subject's permissions, replaced (USER_ADMIN)", body = doc::SubjectPermissions),
        (status = 404, description = "No such subject", body = doc::ErrorBody),
    ))]
pub(crate) async fn set_subject_permissions(
    caller: Authorized<UserAdmin>,
    state: web::Data<AppState>,
    body: web::Json<SetPermissionsRequest>,
) -> ApiResult<HttpResponse> {
    let b = body.into_inner();
    let permissions = state
        .auth()
        .set_permissions(&caller.pass, b.subject_id.clone(), b.permissions)
        .await?;
    Ok(HttpResponse::Ok().json(doc::SubjectPermissions {
        subject_id: b.subject_id,
        permissions,
    }))
}

#[utoipa::path(get, path = "/api/permissions", tag = "subjects",
    responses((status = 200, description = "Every valid permission name (USER_ADMIN)", body = Vec<String>)))]
pub(crate) async fn list_permissions(
    caller: Authorized<UserAdmin>,
    state: web::Data<AppState>,
) -> HttpResponse {
    HttpResponse::Ok().json(state.auth().permission_names(&caller.pass))
}

#[utoipa::path(get, path = "/api/permissions/{subject_id}", tag = "subjects",
    params(("subject_id" = String, Path, description = "A client id or user id")),
    responses(
        (status = 200, description = "The subject's permissions (USER_ADMIN)", body = Vec<doc::PermissionItem>),
        (status = 404, description = "No such subject", body = doc::ErrorBody),
    ))]
pub(crate) async fn get_subject_permissions(
    caller: Authorized<UserAdmin>,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> ApiResult<HttpResponse> {
    Ok(HttpResponse::Ok().json(state.auth().subject_permissions(&caller.pass, &path)?))
}
