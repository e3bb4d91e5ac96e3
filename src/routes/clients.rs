use actix_web::{web, HttpResponse};
use serde::Deserialize;
use serde_json::json;

use crate::auth::{Authorized, UserAdmin};
use crate::error::ApiResult;
use crate::state::AppState;

fn default_permissions() -> Vec<String> {
    vec!["READ_PUBLIC".to_string()]
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateClientRequest {
    client_name: String,
    #[serde(default = "default_permissions")]
    permissions: Vec<String>,
}

pub async fn create_client(
    _: Authorized<UserAdmin>,
    state: web::Data<AppState>,
    body: web::Json<CreateClientRequest>,
) -> ApiResult<HttpResponse> {
    let body = body.into_inner();
    let client = state
        .auth
        .create_client(body.client_name, body.permissions)
        .await?;
    Ok(HttpResponse::Created().json(client))
}

pub async fn delete_client(
    _: Authorized<UserAdmin>,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let client_id = path.into_inner();
    state.auth.delete_client(client_id.clone()).await?;
    let message = format!("The client '{client_id}' has been deleted");
    // SPEC.md names the key `message`; rAPId answers `details`: both, for both kinds of client.
    Ok(HttpResponse::Ok().json(json!({ "details": message, "message": message })))
}
