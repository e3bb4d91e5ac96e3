use actix_web::{web, HttpResponse};

use crate::answers as doc;
use crate::auth::{Authorized, DataAdmin};
use crate::error::ApiResult;
use crate::state::AppState;

#[utoipa::path(post, path = "/api/protected_domains/{domain}", tag = "protected domains",
    params(("domain" = String, Path, pattern = "^[a-zA-Z][_a-zA-Z0-9]*$", max_length = 128)),
    responses(
        (status = 201, description = "Created, with its READ/WRITE permissions (DATA_ADMIN)", body = doc::Confirmation),
        (status = 409, description = "It exists", body = doc::ErrorBody),
    ))]
pub(crate) async fn create_protected_domain(
    caller: Authorized<DataAdmin>,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let domain = state
        .auth()
        .create_protected_domain(&caller.pass, &path)
        .await?;
    Ok(HttpResponse::Created().json(doc::Confirmation::new(format!(
        "Successfully created protected domain for {domain}"
    ))))
}

#[utoipa::path(get, path = "/api/protected_domains", tag = "protected domains",
    responses((status = 200, description = "Every protected domain (DATA_ADMIN)", body = Vec<String>)))]
pub(crate) async fn list_protected_domains(
    caller: Authorized<DataAdmin>,
    state: web::Data<AppState>,
) -> HttpResponse {
    HttpResponse::Ok().json(state.auth().protected_domains(&caller.pass))
}

#[utoipa::path(delete, path = "/api/protected_domains/{domain}", tag = "protected domains",
    params(("domain" = String, Path, pattern = "^[a-zA-Z][_a-zA-Z0-9]*$", max_length = 128)),
    responses(
        (status = 202, description = "Deleted (DATA_ADMIN); 400 while datasets use it", body = doc::Confirmation),
        (status = 404, description = "No such protected domain", body = doc::ErrorBody),
    ))]
pub(crate) async fn delete_protected_domain(
    caller: Authorized<DataAdmin>,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let domain = state
        .auth()
        .delete_protected_domain(&caller.pass, &path)
        .await?;
    Ok(
        HttpResponse::Accepted().json(doc::Confirmation::new(format!(
            "{domain} has been deleted."
        ))),
    )
}
