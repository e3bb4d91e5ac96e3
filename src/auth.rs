//! Authentication in middleware, authorisation in the handler's type.
//!
//! The middleware runs before routing and before any body is read: a request without a valid
//! token is answered 401 there (except on the few public routes), so an unauthenticated client
//! can never make us read its upload. Handlers then name the permission they need as an extractor,
//! `Authorized<UserAdmin>`, listed first among their arguments; a route that takes no
//! `Authorized<..>` has no subject to act for, so the requirement cannot be forgotten silently.
//!
//! The same checks answer `Expect: 100-continue` probes (`connection::expect`): a probe that
//! passes them stops there with `PreflightPassed`, before any handler runs.

use std::marker::PhantomData;
use std::sync::Arc;

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::http::header;
use actix_web::middleware::Next;
use actix_web::{web, FromRequest, HttpMessage, HttpRequest, ResponseError};
use futures_util::future::{ready, Ready};
use rapid_actors::auth::permission::{Access, Permission};
use rapid_actors::auth::Subject;
use rapid_actors::registry::{DatasetKey, DatasetRecord};
use rapid_actors::Error;

use crate::connection::expect::{Preflight, PreflightPassed};
use crate::error::ApiError;
use crate::state::AppState;

/// Routes anyone may call without a token.
fn is_public(path: &str) -> bool {
    // Result downloads carry their own signed, expiring authorisation in the link.
    matches!(
        path,
        "/api/status" | "/api/ready" | "/api/oauth2/token" | "/"
    ) || path.starts_with("/api/results/")
        || crate::openapi::is_public(path)
}

/// The authenticated subject, attached to the request by the middleware.
#[derive(Clone)]
pub struct Authenticated(pub Arc<Subject>);

fn bearer_token(req: &ServiceRequest) -> Option<&str> {
    let value = req.headers().get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

/// Authenticates: attaches the subject, or answers 401 before any body is read.
pub async fn authenticate(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let path = req.path().to_string();
    let preflight = is_preflight(req.request());
    if preflight && is_public(&path) {
        // Public routes check nothing before their body: `100 Continue` at once.
        return Ok(req.error_response(PreflightPassed));
    }

    if !is_public(&path) {
        let state = req
            .app_data::<web::Data<AppState>>()
            .cloned()
            .ok_or_else(|| ApiError(Error::internal("application state missing")))?;
        let verdict = match bearer_token(&req) {
            Some(token) => state.auth.authenticate(token),
            None => Err(Error::unauthenticated(
                "Missing bearer token: send `Authorization: Bearer <token>` from POST /api/oauth2/token",
            )),
        };
        match verdict {
            Ok(subject) => {
                req.extensions_mut().insert(Authenticated(subject));
                if let Some(refusal) = body_over_limit(&req, state.max_upload_bytes) {
                    return Ok(req.into_response(ApiError(refusal).error_response()));
                }
            }
            Err(e) => return Ok(req.into_response(ApiError(e).error_response())),
        }
    }

    // The request log (`ops::request_log`, outermost) logs it, with the subject set here.
    Ok(next.call(req).await?.map_into_boxed_body())
}

/// Multipart framing around an upload's file, allowed on top of the upload limit.
const MULTIPART_SLACK: u64 = 1024 * 1024;

/// A declared body length no route accepts: 413 before anything is read.
fn body_over_limit(req: &ServiceRequest, max_upload_bytes: u64) -> Option<Error> {
    let declared: u64 = req
        .headers()
        .get(header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .parse()
        .ok()?;
    let limit = max_upload_bytes.saturating_add(MULTIPART_SLACK);
    (declared > limit).then(|| {
        Error::new(
            rapid_actors::ErrorKind::TooLarge,
            format!("The request body is larger than the upload limit of {max_upload_bytes} bytes"),
        )
    })
}

fn is_preflight(req: &HttpRequest) -> bool {
    req.extensions().get::<Preflight>().is_some()
}

/// A rule about which subjects may call a route.
pub trait Policy {
    /// Whether `subject` passes; otherwise the message of the 403.
    fn check(subject: &Subject) -> Result<(), String>;
}

/// Any authenticated subject, whatever its permissions.
pub struct AnySubject;
/// Holders of USER_ADMIN: clients, users, subject permissions.
pub struct UserAdmin;
/// Holders of DATA_ADMIN: schemas, protected domains, dataset deletion.
pub struct DataAdmin;

impl Policy for AnySubject {
    fn check(_: &Subject) -> Result<(), String> {
        Ok(())
    }
}

fn require(subject: &Subject, permission: Permission) -> Result<(), String> {
    if subject.has(&permission) {
        Ok(())
    } else {
        Err(format!(
            "Subject {} does not have the {permission} permission this action requires",
            subject.name
        ))
    }
}

impl Policy for UserAdmin {
    fn check(subject: &Subject) -> Result<(), String> {
        require(subject, Permission::UserAdmin)
    }
}

impl Policy for DataAdmin {
    fn check(subject: &Subject) -> Result<(), String> {
        require(subject, Permission::DataAdmin)
    }
}

/// Extractor proving the caller passed policy `P`. Put it first in a handler's arguments so the
/// check runs before any body extractor.
pub struct Authorized<P: Policy> {
    pub subject: Arc<Subject>,
    _policy: PhantomData<P>,
}

impl<P: Policy> FromRequest for Authorized<P> {
    type Error = actix_web::Error;
    type Future = Ready<Result<Self, actix_web::Error>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let subject = req.extensions().get::<Authenticated>().map(|a| a.0.clone());
        ready(match subject {
            // Only reachable if a public route asked for a subject: treat as unauthenticated.
            None => Err(ApiError(Error::unauthenticated("Authentication required")).into()),
            Some(subject) => match P::check(&subject) {
                Ok(()) if is_preflight(req) => Err(PreflightPassed.into()),
                Ok(()) => Ok(Authorized {
                    subject,
                    _policy: PhantomData,
                }),
                Err(message) => Err(ApiError(Error::forbidden(message)).into()),
            },
        })
    }
}

/// Which kind of access a dataset route needs.
pub trait DatasetAccessKind {
    const ACCESS: Access;
}
pub struct Read;
pub struct Write;
impl DatasetAccessKind for Read {
    const ACCESS: Access = Access::Read;
}
impl DatasetAccessKind for Write {
    const ACCESS: Access = Access::Write;
}

/// Extractor proving the caller may read (or write) the dataset named by the path's `layer`,
/// `domain` and `dataset`, which exists. Resolved from the path alone, before any body is read.
/// A caller with no permission of the kind at all is refused (403) before the dataset is looked
/// up, so it learns nothing about which datasets exist.
pub struct DatasetAccess<A: DatasetAccessKind> {
    pub subject: Arc<Subject>,
    pub record: DatasetRecord,
    _access: PhantomData<A>,
}

impl<A: DatasetAccessKind> FromRequest for DatasetAccess<A> {
    type Error = actix_web::Error;
    type Future = Ready<Result<Self, actix_web::Error>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(match resolve_dataset_access::<A>(req) {
            Ok(_) if is_preflight(req) => Err(PreflightPassed.into()),
            Ok(access) => Ok(access),
            Err(e) => Err(ApiError(e).into()),
        })
    }
}

fn resolve_dataset_access<A: DatasetAccessKind>(
    req: &HttpRequest,
) -> Result<DatasetAccess<A>, Error> {
    let subject = req
        .extensions()
        .get::<Authenticated>()
        .map(|a| a.0.clone())
        .ok_or_else(|| Error::unauthenticated("Authentication required"))?;
    let verb = match A::ACCESS {
        Access::Read => "read",
        Access::Write => "write",
    };
    if !subject.permissions.iter().any(|p| p.is_access(A::ACCESS)) {
        return Err(Error::forbidden(format!(
            "Subject {} has no permission to {verb} any dataset",
            subject.name
        )));
    }
    let state = req
        .app_data::<web::Data<AppState>>()
        .ok_or_else(|| Error::internal("application state missing"))?;
    let info = req.match_info();
    let key = DatasetKey::new(
        info.get("layer").unwrap_or_default(),
        info.get("domain").unwrap_or_default(),
        info.get("dataset").unwrap_or_default(),
    );
    let record = state.registry.find(&key)?;
    let allowed = subject.permissions.iter().any(|p| {
        p.grants(
            A::ACCESS,
            record.sensitivity,
            &record.key.layer,
            &record.key.domain,
        )
    });
    if !allowed {
        return Err(Error::forbidden(format!(
            "Subject {} does not have enough permissions to {verb} the dataset layer [{}], domain [{}] and dataset [{}]",
            subject.name, key.layer, key.domain, key.dataset
        )));
    }
    Ok(DatasetAccess {
        subject,
        record,
        _access: PhantomData,
    })
}
