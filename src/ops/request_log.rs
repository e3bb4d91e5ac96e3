//! The outermost middleware: gives every request an id (its `x-request-id` when it sent a sane one,
//! else a new one), answers with it in `x-request-id`, runs the request inside a `request` span
//! carrying it (so everything logged while handling it names the request), and ends with one log
//! line and the request metrics: route template, status, subject, bytes and duration. Never the
//! query string, headers or bodies, where tokens, link signatures and secrets travel.

use std::sync::Arc;
use std::time::Instant;

use actix_web::body::{BodySize, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderName, HeaderValue};
use actix_web::middleware::Next;
use actix_web::{HttpMessage, HttpRequest};
use rapid_actors::auth::Subject;
use tracing::Instrument;

pub use crate::auth::route_of;
use crate::auth::Authenticated;
use crate::connection::expect::Preflight;

pub const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// The request's id, in its extensions for handlers that want it.
#[derive(Debug, Clone)]
pub struct RequestId(pub String);

/// A client's id is kept when it is 1..=128 characters of letters, digits and `-_.:+=/@`, so it
/// cannot break a log line or a header.
fn accepted(value: &HeaderValue) -> Option<String> {
    let text = value.to_str().ok()?;
    let ok = !text.is_empty()
        && text.len() <= 128
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.:+=/@".contains(&b));
    ok.then(|| text.to_string())
}

/// The subject the authentication middleware (or a page's session) named for a request.
pub fn subject_of(request: &HttpRequest) -> Option<Arc<Subject>> {
    request
        .extensions()
        .get::<Authenticated>()
        .map(|a| a.0.clone())
}

pub async fn log_requests(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let started = Instant::now();
    let id = req
        .headers()
        .get(REQUEST_ID)
        .and_then(accepted)
        .unwrap_or_else(|| uuid::Uuid::new_v4().simple().to_string());
    req.extensions_mut().insert(RequestId(id.clone()));
    let method = req.method().clone();
    let path = req.path().to_string();
    let bytes_in: u64 = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let span = tracing::info_span!("request", request_id = %id);
    let mut res = next.call(req).instrument(span.clone()).await?;
    // unwrap-free: the id was checked above or is a UUID, both valid header values.
    if let Ok(value) = HeaderValue::from_str(&id) {
        res.headers_mut().insert(REQUEST_ID, value);
    }
    let request = res.request();
    if request.extensions().get::<Preflight>().is_some() {
        // An `Expect: 100-continue` probe: the real request that follows is logged.
        return Ok(res);
    }
    let route = route_of(request);
    let subject = subject_of(request).map_or_else(|| "-".to_string(), |s| s.name.clone());
    let status = res.status().as_u16();
    let bytes_out = match res.response().body().size() {
        BodySize::Sized(n) => n,
        _ => 0,
    };
    let elapsed = started.elapsed();
    super::metrics::observe_request(method.as_str(), &route, status, elapsed);
    span.in_scope(|| {
        tracing::info!(
            request_id = %id,
            %method,
            route,
            path,
            status,
            subject,
            bytes_in,
            bytes_out,
            ms = (elapsed.as_secs_f64() * 10_000.0).round() / 10.0,
            "request"
        )
    });
    Ok(res)
}
