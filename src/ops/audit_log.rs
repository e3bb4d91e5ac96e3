//! The audit log's HTTP side: one row per request to the API (`front` `http`, or `sql` for
//! `/api/sql...`, `mcp` for `/api/mcp`, one JSON-RPC message a request) and the pages (`web`), written once the answer is known and before it is sent
//! (`AuditLog::record` returns once the row is durable), so an answered request always has its
//! row. Liveness, readiness, metrics, the API document and the pages' static files are not
//! requests for data or access and are left out. The request's [`Note`] is in its extensions
//! for the extractors to hand to the engine with the pass (`crate::auth::note_of`).

use std::time::Instant;

use actix_web::body::{BodySize, BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use actix_web::{web, HttpMessage, ResponseError};
use rapid_actors::audit::{AuditEntry, Front, Note, Opener};
use rapid_actors::Error;

use super::request_log::{route_of, subject_of, RequestId};
use crate::connection::expect::Preflight;
use crate::error::ApiError;
use crate::state::AppState;

/// The front of a request to `path`, or `None` when it is not audited.
pub fn front_of(path: &str) -> Option<Front> {
    const UNAUDITED: &[&str] = &[
        "/api/status",
        "/api/ready",
        "/api/metrics",
        "/api/openapi.json",
        "/api/docs",
    ];
    if UNAUDITED.contains(&path) || path.starts_with("/api/docs/") || path.starts_with("/static/") {
        return None;
    }
    if path == "/api/sql" || path.starts_with("/api/sql/") {
        return Some(Front::Sql);
    }
    if path == "/api/mcp" {
        return Some(Front::Mcp);
    }
    match path == "/api" || path.starts_with("/api/") {
        true => Some(Front::Http),
        false => Some(Front::Web),
    }
}

/// The layer, domain and dataset of an API path under `/api/datasets/`, as sent.
fn dataset_in(path: &str) -> (Option<String>, Option<String>, Option<String>) {
    let mut parts = path
        .strip_prefix("/api/datasets/")
        .unwrap_or_default()
        .split('/')
        .filter(|p| !p.is_empty())
        .map(str::to_string);
    match (parts.next(), parts.next(), parts.next()) {
        (Some(l), Some(d), Some(ds)) => (Some(l), Some(d), Some(ds)),
        _ => (None, None, None),
    }
}

pub async fn audit_requests(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let Some(front) = front_of(req.path()) else {
        return Ok(next.call(req).await?.map_into_boxed_body());
    };
    let started = Instant::now();
    let state = req.app_data::<web::Data<AppState>>().cloned();
    let client_addr = state
        .as_ref()
        .and_then(|s| s.trusted_proxies.client_of(req.request()))
        .map(|ip| ip.to_string());
    let method = req.method().clone();
    let note = match &state {
        // The row is opened when the engine notes a read (durable while the query runs).
        Some(state) => Note::opened_by(Opener::new(
            state.engine.audit(),
            front,
            format!("{method} {}", req.path()),
            req.extensions().get::<RequestId>().map(|r| r.0.clone()),
            client_addr.clone(),
        )),
        None => Note::default(),
    };
    req.extensions_mut().insert(note.clone());
    let res = next.call(req).await?.map_into_boxed_body();
    let request = res.request();
    let Some(state) = state else {
        return Ok(res);
    };
    if request.extensions().get::<Preflight>().is_some() {
        // An `Expect: 100-continue` probe: the real request that follows is the one audited.
        return Ok(res);
    }
    let (route, subject) = (route_of(request), subject_of(request));
    let status = res.status().as_u16();
    let mut entry = AuditEntry::of(
        front,
        format!("{method} {route}"),
        subject.as_deref().map(|s| (s.id.as_str(), s.name.as_str())),
        note.fields(),
        status,
    );
    if entry.dataset.is_none() {
        // Nothing read through the engine (a refusal, an upload, a change): the path's dataset.
        let info = request.match_info();
        let part = |name: &str| info.get(name).map(str::to_string);
        (entry.layer, entry.domain, entry.dataset) =
            (part("layer"), part("domain"), part("dataset"));
        if entry.dataset.is_none() {
            // Refused before routing (401): the dataset the path names, as sent.
            (entry.layer, entry.domain, entry.dataset) = dataset_in(request.path());
        }
    }
    entry.bytes = match res.response().body().size() {
        BodySize::Sized(n) => Some(n),
        _ => None,
    };
    entry.duration_ms = started.elapsed().as_millis() as u64;
    entry.request_id = request.extensions().get::<RequestId>().map(|r| r.0.clone());
    entry.client_addr = client_addr;
    match state
        .engine
        .audit()
        .finish(entry, note.take_opening())
        .await
    {
        Ok(()) => Ok(res),
        Err(e) => {
            // The answer is not sent without its row: the client sees the failure instead.
            tracing::error!(error = %e.report(), "a request's audit row was not written");
            let refusal = ApiError(Error::internal(
                "The request's audit row could not be written, so its answer is withheld",
            ));
            Ok(res.into_response(refusal.error_response()))
        }
    }
}
