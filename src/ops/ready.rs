//! `GET /api/ready` (no token): 200 only when the catalog answers a query and the data folder
//! takes a write; else 503 naming what failed. `/api/status` stays the liveness check.

use actix_web::{web, HttpResponse};
use serde_json::json;

use crate::state::AppState;

fn check(state: &AppState) -> Result<(), String> {
    state
        .registry
        .catalog()
        .with(|c| Ok(c.query_row("SELECT count(*) FROM datasets", [], |r| r.get::<_, i64>(0))?))
        .map_err(|e| format!("the catalog does not answer: {e}"))?;
    // Staging is where uploads are written first; a probe file there proves the disk takes writes.
    let staging = state.registry.storage().staging_root();
    let probe = staging.join(format!(".ready-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&staging)
        .and_then(|()| std::fs::write(&probe, b"ready"))
        .and_then(|()| std::fs::remove_file(&probe))
        .map_err(|e| format!("the data folder is not writable: {e}"))
}

#[utoipa::path(get, path = "/api/ready", tag = "service", security(()),
    responses(
        (status = 200, description = "Ready: the catalog answers and the data folder takes writes", body = serde_json::Value, example = json!({"status": "ready"})),
        (status = 503, description = "Not ready; `details` says what failed", body = crate::openapi::schemas::ErrorBody),
    ))]
pub async fn get_ready(state: web::Data<AppState>) -> HttpResponse {
    match web::block(move || check(&state)).await {
        Ok(Ok(())) => HttpResponse::Ok().json(json!({"status": "ready"})),
        Ok(Err(problem)) => HttpResponse::ServiceUnavailable().json(json!({"details": problem})),
        Err(e) => HttpResponse::ServiceUnavailable().json(json!({"details": e.to_string()})),
    }
}
