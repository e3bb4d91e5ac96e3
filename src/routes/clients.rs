use actix_web::{web, HttpResponse};
use serde::Deserialize;

use crate::answers as doc;
use crate::auth::{Authorized, UserAdmin};
use crate::error::ApiResult;
use crate::state::AppState;

fn default_permissions() -> Vec<String> {
    vec!["READ_PUBLIC".to_string()]
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CreateClientRequest {
    #[schema(pattern = "^[a-zA-Z][a-zA-Z0-9@._-]{2,127}$")]
    client_name: String,
    #[serde(default = "default_permissions")]
    #[schema(schema_with = doc::rules::new_subject_permissions, default = json!(["READ_PUBLIC"]))]
    permissions: Vec<String>,
}

#[utoipa::path(post, path = "/api/client", tag = "subjects",
    request_body = CreateClientRequest,
    responses(
        (status = 201, description = "The client, with its secret shown this once (USER_ADMIN)", body = doc::NewClient),
        (status = 400, description = "Invalid name or permissions, or a client with this name exists \
            (400, not 409: the rAPId SDK reads it as \"already exists\")", body = doc::ErrorBody),
    ))]
pub(crate) async fn create_client(
    caller: Authorized<UserAdmin>,
    state: web::Data<AppState>,
    body: web::Json<CreateClientRequest>,
) -> ApiResult<HttpResponse> {
    let body = body.into_inner();
    let client = state
        .auth()
        .create_client(&caller.pass, body.client_name, body.permissions)
        .await?;
    Ok(HttpResponse::Created().json(client))
}

#[utoipa::path(delete, path = "/api/client/{client_id}", tag = "subjects",
    params(("client_id" = String, Path)),
    responses(
        (status = 200, description = "Deleted (USER_ADMIN)", body = doc::DeletedSubject),
        (status = 404, description = "No such client", body = doc::ErrorBody),
    ))]
pub(crate) async fn delete_client(
    caller: Authorized<UserAdmin>,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let client_id = path.into_inner();
    state
        .auth()
        .delete_client(&caller.pass, client_id.clone())
        .await?;
    let message = format!("The client '{client_id}' has been deleted");
    // docs/SPEC.md names the key `message`; rAPId answers `details`: both, for both kinds of client.
    Ok(HttpResponse::Ok().json(doc::DeletedSubject::new(message)))
}
