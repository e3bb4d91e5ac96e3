use actix_web::{web, HttpResponse};
use serde_json::json;

use crate::auth::{AnySubject, Authorized};
use crate::state::AppState;

/// No token needed: for load balancers and scripts waiting for start-up.
pub async fn get_status() -> HttpResponse {
    HttpResponse::Ok().json(json!({
        "status": "deployed",
        "version": env!("CARGO_PKG_VERSION"),
        "root_path": "/api",
    }))
}

pub async fn list_layers(_: Authorized<AnySubject>, state: web::Data<AppState>) -> HttpResponse {
    HttpResponse::Ok().json(state.registry.layers())
}
