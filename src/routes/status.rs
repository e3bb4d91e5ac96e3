use actix_web::{web, HttpResponse};

use crate::answers as doc;
use crate::auth::{AnySubject, Authorized};
use crate::state::AppState;

/// No token needed: for load balancers and scripts waiting for start-up.
#[utoipa::path(get, path = "/api/status", tag = "service", security(()),
    responses((status = 200, description = "The service is up", body = doc::Status)))]
pub(crate) async fn get_status() -> HttpResponse {
    HttpResponse::Ok().json(doc::Status::deployed())
}

#[utoipa::path(get, path = "/api/layers", tag = "service",
    responses((status = 200, description = "The configured layers", body = Vec<String>)))]
pub(crate) async fn list_layers(
    _: Authorized<AnySubject>,
    state: web::Data<AppState>,
) -> HttpResponse {
    HttpResponse::Ok().json(state.engine.layers())
}
