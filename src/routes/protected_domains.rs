use actix_web::{web, HttpResponse};
use serde_json::json;

use crate::auth::{Authorized, DataAdmin};
use crate::error::ApiResult;
use crate::state::AppState;

pub async fn create_protected_domain(
    _: Authorized<DataAdmin>,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let domain = state.auth.create_protected_domain(&path).await?;
    Ok(HttpResponse::Created().json(json!({
        "details": format!("Successfully created protected domain for {domain}")
    })))
}

pub async fn list_protected_domains(
    _: Authorized<DataAdmin>,
    state: web::Data<AppState>,
) -> HttpResponse {
    HttpResponse::Ok().json(state.auth.protected_domains())
}

pub async fn delete_protected_domain(
    _: Authorized<DataAdmin>,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let domain = state.auth.delete_protected_domain(&path).await?;
    Ok(HttpResponse::Accepted().json(json!({ "details": format!("{domain} has been deleted.") })))
}
