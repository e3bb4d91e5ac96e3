//! `GET /api/ready` (no token): 200 only when the catalog answers a query and the data folder
//! takes a write; else 503 naming what failed. `/api/status` stays the liveness check.

use actix_web::{web, HttpResponse};
use serde_json::json;

use crate::state::AppState;

fn check(state: &AppState) -> Result<(), String> {
    state.engine.readiness()
}

#[utoipa::path(get, path = "/api/ready", tag = "service", security(()),
    responses(
        (status = 200, description = "Ready: the catalog answers and the data folder takes writes", body = serde_json::Value, example = json!({"status": "ready"})),
        (status = 503, description = "Not ready; `details` says what failed", body = crate::answers::ErrorBody),
    ))]
pub async fn get_ready(state: web::Data<AppState>) -> HttpResponse {
    match web::block(move || check(&state)).await {
        Ok(Ok(())) => HttpResponse::Ok().json(json!({"status": "ready"})),
        Ok(Err(problem)) => HttpResponse::ServiceUnavailable().json(json!({"details": problem})),
        Err(e) => HttpResponse::ServiceUnavailable().json(json!({"details": e.to_string()})),
    }
}
