use actix_web::{web, HttpRequest, HttpResponse};
use serde::Deserialize;
use serde_json::json;

use crate::auth::{AnySubject, Authorized, UserAdmin};
use crate::error::{not_found_as_invalid, ApiResult};
use crate::state::AppState;

fn default_permissions() -> Vec<String> {
    vec!["READ_PUBLIC".to_string()]
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateUserRequest {
    username: String,
    email: String,
    #[serde(default = "default_permissions")]
    permissions: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeleteUserRequest {
    username: String,
    user_id: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChangePasswordRequest {
    current_password: String,
    new_password: String,
}

pub async fn create_user(
    _: Authorized<UserAdmin>,
    state: web::Data<AppState>,
    body: web::Json<CreateUserRequest>,
) -> ApiResult<HttpResponse> {
    let b = body.into_inner();
    let user = state
        .auth
        .create_user(b.username, b.email, b.permissions)
        .await?;
    Ok(HttpResponse::Created().json(user))
}

pub async fn delete_user(
    _: Authorized<UserAdmin>,
    state: web::Data<AppState>,
    body: web::Json<DeleteUserRequest>,
) -> ApiResult<HttpResponse> {
    let b = body.into_inner();
    state
        .auth
        .delete_user(b.username.clone(), b.user_id)
        .await
        .map_err(not_found_as_invalid)?;
    let message = format!("The user '{}' has been deleted", b.username);
    Ok(HttpResponse::Ok().json(json!({ "details": message, "message": message })))
}

/// A user replaces their (temporary or current) password with their own token.
pub async fn change_password(
    caller: Authorized<AnySubject>,
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<ChangePasswordRequest>,
) -> ApiResult<HttpResponse> {
    let b = body.into_inner();
    let addr = super::token::client_addr(&req, &state)?;
    state
        .auth
        .change_password(
            &caller.subject.id,
            &b.current_password,
            &b.new_password,
            addr,
        )
        .await?;
    Ok(HttpResponse::Ok().json(json!({ "details": "The password has been changed" })))
}
