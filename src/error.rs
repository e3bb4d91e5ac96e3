//! The HTTP face of engine errors: the one place a kind becomes a status code, and every error,
//! ours or actix-web's, becomes `{"details": ...}` JSON.

use crate::answers::ErrorBody;
use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::middleware::Next;
use actix_web::{HttpResponse, ResponseError};
use rapid_actors::{Details, Error, ErrorKind};

const INTERNAL_MESSAGE: &str = "Something went wrong. Please contact your system administrator.";

/// What a 503 (Busy) asks clients to wait before retrying: heavy work slots free up within seconds.
const RETRY_AFTER_SECONDS: &str = "1";

#[derive(Debug)]
pub struct ApiError(pub Error);

pub type ApiResult<T> = Result<T, ApiError>;

impl From<Error> for ApiError {
    fn from(e: Error) -> Self {
        ApiError(e)
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// For the two routes where rAPId answers an unknown thing with 400 and the SDK relies on it
/// (`DELETE /user` -> `SubjectNotFoundException`, `DELETE /datasets/...` ->
/// `DatasetNotFoundException`; docs/API.md, Errors): not found becomes 400, the message unchanged.
pub fn not_found_as_invalid(e: Error) -> Error {
    match e.kind {
        ErrorKind::NotFound => e.with_kind(ErrorKind::Invalid),
        _ => e,
    }
}

/// Exhaustive on purpose: a new kind must get a status here before anything compiles.
pub fn status_of(kind: ErrorKind) -> StatusCode {
    match kind {
        ErrorKind::Invalid => StatusCode::BAD_REQUEST,
        ErrorKind::Unauthenticated => StatusCode::UNAUTHORIZED,
        ErrorKind::Forbidden => StatusCode::FORBIDDEN,
        ErrorKind::NotFound => StatusCode::NOT_FOUND,
        ErrorKind::Conflict => StatusCode::CONFLICT,
        ErrorKind::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
        ErrorKind::Unprocessable => StatusCode::UNPROCESSABLE_ENTITY,
        ErrorKind::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        ErrorKind::Busy => StatusCode::SERVICE_UNAVAILABLE,
        ErrorKind::Throttled { .. } => StatusCode::TOO_MANY_REQUESTS,
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        status_of(self.0.kind)
    }

    fn error_response(&self) -> HttpResponse {
        let body = match (&self.0.kind, &self.0.details) {
            (ErrorKind::Internal, _) => {
                // The cause goes to the log; the client gets no internals.
                tracing::error!(error = %self.0.report(), "internal error");
                ErrorBody::one(INTERNAL_MESSAGE)
            }
            (_, Details::One(m)) => ErrorBody::one(m.as_str()),
            (_, Details::Many(ms)) => match self.0.report.as_ref().and_then(|r| r.links.as_ref()) {
                // A refused upload: its first problems, and where to download all of them.
                Some(links) => ErrorBody::refused(ms.clone(), links),
                None => ErrorBody::many(ms.clone()),
            },
        };
        let mut res = HttpResponse::build(self.status_code());
        match self.0.kind {
            ErrorKind::Unauthenticated => {
                res.insert_header((header::WWW_AUTHENTICATE, "Bearer"));
            }
            ErrorKind::Busy => {
                res.insert_header((header::RETRY_AFTER, RETRY_AFTER_SECONDS));
            }
            ErrorKind::Throttled {
                retry_after_seconds,
            } => {
                res.insert_header((header::RETRY_AFTER, retry_after_seconds.max(1).to_string()));
            }
            _ => {}
        }
        res.json(body)
    }
}

/// Turns any error response that is not JSON (actix-web's 404 for an unknown route, 405 for a
/// wrong method, plain-text extractor errors) into `{"details": "<reason>"}`.
pub async fn json_errors(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let res = next.call(req).await?.map_into_boxed_body();
    let status = res.status();
    let is_json = res
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    // The web pages render their own errors in words (src/web/layout.rs).
    let is_page = res
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/html"));
    if !(status.is_client_error() || status.is_server_error()) || is_json || is_page {
        return Ok(res);
    }
    let message = match status {
        StatusCode::NOT_FOUND => "Not found: no such route".to_string(),
        StatusCode::METHOD_NOT_ALLOWED => "Method not allowed on this route".to_string(),
        other => other
            .canonical_reason()
            .unwrap_or("Request failed")
            .to_string(),
    };
    let (req, mut res) = res.into_parts();
    // unwrap-free: a struct of strings always serialises.
    let body = serde_json::to_string(&ErrorBody::one(message)).unwrap_or_default();
    res.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    let res = res.set_body(BoxBody::new(body));
    Ok(ServiceResponse::new(req, res))
}
