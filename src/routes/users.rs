use actix_web::{web, HttpRequest, HttpResponse};
use serde::Deserialize;

use crate::answers as doc;
use crate::auth::{AnySubject, Authorized, UserAdmin};
use crate::error::{not_found_as_invalid, ApiResult};
use crate::state::AppState;

fn default_permissions() -> Vec<String> {
    vec!["READ_PUBLIC".to_string()]
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CreateUserRequest {
    #[schema(pattern = "^[a-zA-Z][a-zA-Z0-9@._-]{2,127}$")]
    username: String,
    /// An address in one of the instance's allowed e-mail domains (`ALLOWED_EMAIL_DOMAINS`).
    #[schema(format = Email)]
    email: String,
    #[serde(default = "default_permissions")]
    #[schema(schema_with = doc::rules::new_subject_permissions, default = json!(["READ_PUBLIC"]))]
    permissions: Vec<String>,
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DeleteUserRequest {
    username: String,
    user_id: String,
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ChangePasswordRequest {
    current_password: String,
    #[schema(min_length = 12, max_length = 1024)]
    new_password: String,
}

#[utoipa::path(post, path = "/api/user", tag = "subjects",
    request_body = CreateUserRequest,
    responses(
        (status = 201, description = "The user, with a one-time temporary password (USER_ADMIN)", body = doc::NewUser),
        (status = 400, description = "Invalid name, e-mail or permissions, or a user with this name or \
            e-mail exists (400, not 409: the rAPId SDK reads it as \"already exists\")", body = doc::ErrorBody),
    ))]
pub(crate) async fn create_user(
    caller: Authorized<UserAdmin>,
    state: web::Data<AppState>,
    body: web::Json<CreateUserRequest>,
) -> ApiResult<HttpResponse> {
    let b = body.into_inner();
    let user = state
        .auth()
        .create_user(&caller.pass, b.username, b.email, b.permissions)
        .await?;
    Ok(HttpResponse::Created().json(user))
}

#[utoipa::path(delete, path = "/api/user", tag = "subjects",
    request_body = DeleteUserRequest,
    responses(
        (status = 200, description = "Deleted (USER_ADMIN)", body = doc::DeletedSubject),
        (status = 400, description = "No such user (400, not 404: the rAPId SDK expects it)", body = doc::ErrorBody),
    ))]
pub(crate) async fn delete_user(
    caller: Authorized<UserAdmin>,
    state: web::Data<AppState>,
    body: web::Json<DeleteUserRequest>,
) -> ApiResult<HttpResponse> {
    let b = body.into_inner();
    state
        .auth()
        .delete_user(&caller.pass, b.username.clone(), b.user_id)
        .await
        .map_err(not_found_as_invalid)?;
    let message = format!("The user '{}' has been deleted", b.username);
    Ok(HttpResponse::Ok().json(doc::DeletedSubject::new(message)))
}

/// A user replaces their (temporary or current) password with their own token.
#[utoipa::path(put, path = "/api/user/password", tag = "subjects",
    request_body = ChangePasswordRequest,
    responses(
        (status = 200, description = "Changed (the caller's own password)", body = doc::Confirmation),
        (status = 429, description = "Too many wrong current passwords: retry after the \
            `Retry-After` seconds", body = doc::ErrorBody),
    ))]
pub(crate) async fn change_password(
    caller: Authorized<AnySubject>,
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<ChangePasswordRequest>,
) -> ApiResult<HttpResponse> {
    let b = body.into_inner();
    let addr = state.client_addr(&req)?;
    state
        .auth()
        .change_password(&caller.pass, &b.current_password, &b.new_password, addr)
        .await?;
    Ok(HttpResponse::Ok().json(doc::Confirmation::new("The password has been changed")))
}
