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

use std::sync::Arc;

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::http::header;
use actix_web::middleware::Next;
use actix_web::{web, FromRequest, HttpMessage, HttpRequest, ResponseError};
use futures_util::future::{ready, Ready};
use rapid_actors::audit::Note;
use rapid_actors::auth::pass::{
    AccessKind, AdminPass, AuditReaderPass, DatasetPass, SubjectPass, UserAdminPass,
};
pub use rapid_actors::auth::pass::{Read, Write};
use rapid_actors::auth::Subject;
use rapid_actors::engine::Engine;
use rapid_actors::key::DatasetKey;
use rapid_actors::Error;

use crate::connection::expect::{Preflight, PreflightPassed};
use crate::error::ApiError;
use crate::state::AppState;

/// The paths anyone may call without a token, as rules composed at assembly (`server`): the route
/// table's public routes, the API docs, the web pages (which check their own session cookie).
/// Registered as app data; without it every path needs a token.
#[derive(Clone, Copy)]
pub struct PublicPaths(pub &'static [fn(&str) -> bool]);

impl PublicPaths {
    fn of(req: &ServiceRequest) -> &[fn(&str) -> bool] {
        req.app_data::<PublicPaths>().map_or(&[], |p| p.0)
    }
}

fn is_public(req: &ServiceRequest, path: &str) -> bool {
    PublicPaths::of(req).iter().any(|rule| rule(path))
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
    let public = is_public(&req, &path);
    if preflight && public {
        // Public routes check nothing before their body: `100 Continue` at once.
        return Ok(req.error_response(PreflightPassed));
    }

    if !public {
        let state = req
            .app_data::<web::Data<AppState>>()
            .cloned()
            .ok_or_else(|| ApiError(Error::internal("application state missing")))?;
        let verdict = match bearer_token(&req) {
            Some(token) => state.engine.auth().authenticate(token),
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

/// A rule about which subjects may call a route: which permission pass it mints (only the
/// engine's auth module builds passes; see `rapid_actors::auth::pass`).
pub trait Policy {
    type Pass: Noted;
    /// The pass for `subject`, or the 403 refusing it.
    fn mint(engine: &Engine, subject: Arc<Subject>) -> Result<Self::Pass, Error>;
}

/// The request's audit note (`ops::audit_log` puts one in every audited request; elsewhere a
/// fresh one that nothing reads).
pub fn note_of(req: &HttpRequest) -> Note {
    let note = req.extensions().get::<Note>().cloned().unwrap_or_default();
    // Routed now: the row opened at the engine's first read names the route, as the final one.
    note.routed(format!("{} {}", req.method(), route_of(req)));
    note
}

/// The route template a request matched (`unmatched` when none did): the request log's and
/// the audit rows' name for what was asked.
pub fn route_of(request: &HttpRequest) -> String {
    request
        .match_pattern()
        .unwrap_or_else(|| "unmatched".to_string())
}

/// A pass as the engine gets it from a request: the passes of use cases that read carry the
/// request's audit note (`ops::audit_log`), so the engine writes what it read into it.
pub trait Noted {
    fn noted(self, note: Note) -> Self;
}

impl Noted for SubjectPass {
    fn noted(self, note: Note) -> Self {
        self.with_note(note)
    }
}

impl<A: AccessKind> Noted for DatasetPass<A> {
    fn noted(self, note: Note) -> Self {
        self.with_note(note)
    }
}

macro_rules! noted_as_is {
    ($($pass:ty),+) => {
        $(impl Noted for $pass {
            fn noted(self, _: Note) -> Self {
                self
            }
        })+
    };
}
noted_as_is!(AdminPass, UserAdminPass, AuditReaderPass, ());

/// Any authenticated subject, whatever its permissions.
pub struct AnySubject;
/// Holders of USER_ADMIN: clients, users, subject permissions.
pub struct UserAdmin;
/// Holders of DATA_ADMIN: schemas, protected domains, dataset deletion.
pub struct DataAdmin;

impl Policy for AnySubject {
    type Pass = SubjectPass;
    fn mint(engine: &Engine, subject: Arc<Subject>) -> Result<SubjectPass, Error> {
        Ok(engine.subject_pass(subject))
    }
}

impl Policy for UserAdmin {
    type Pass = UserAdminPass;
    fn mint(engine: &Engine, subject: Arc<Subject>) -> Result<UserAdminPass, Error> {
        engine.user_admin_pass(subject)
    }
}

/// Holders of USER_ADMIN or DATA_ADMIN: the audit log.
pub struct AuditReader;

impl Policy for AuditReader {
    type Pass = AuditReaderPass;
    fn mint(engine: &Engine, subject: Arc<Subject>) -> Result<AuditReaderPass, Error> {
        engine.audit_reader_pass(subject)
    }
}

impl Policy for DataAdmin {
    type Pass = AdminPass;
    fn mint(engine: &Engine, subject: Arc<Subject>) -> Result<AdminPass, Error> {
        engine.admin_pass(subject)
    }
}

/// Extractor proving the caller passed policy `P`, carrying its pass for the engine. Put it
/// first in a handler's arguments so the check runs before any body extractor.
pub struct Authorized<P: Policy> {
    pub subject: Arc<Subject>,
    pub pass: P::Pass,
}

fn state_of(req: &HttpRequest) -> Result<&web::Data<AppState>, Error> {
    req.app_data::<web::Data<AppState>>()
        .ok_or_else(|| Error::internal("application state missing"))
}

fn subject_of(req: &HttpRequest) -> Result<Arc<Subject>, Error> {
    // Only missing if a public route asked for a subject: treat as unauthenticated.
    req.extensions()
        .get::<Authenticated>()
        .map(|a| a.0.clone())
        .ok_or_else(|| Error::unauthenticated("Authentication required"))
}

impl<P: Policy> FromRequest for Authorized<P> {
    type Error = actix_web::Error;
    type Future = Ready<Result<Self, actix_web::Error>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let minted = subject_of(req).and_then(|subject| {
            let pass = P::mint(&state_of(req)?.engine, subject.clone())?;
            let pass = pass.noted(note_of(req));
            Ok(Authorized { subject, pass })
        });
        ready(match minted {
            Ok(_) if is_preflight(req) => Err(PreflightPassed.into()),
            Ok(authorized) => Ok(authorized),
            Err(e) => Err(ApiError(e).into()),
        })
    }
}

/// Extractor proving the caller may read (or write) the dataset named by the path's `layer`,
/// `domain` and `dataset`, which exists. Resolved from the path alone, before any body is read.
/// A caller with no permission of the kind at all is refused (403) before the dataset is looked
/// up, so it learns nothing about which datasets exist.
pub struct DatasetAccess<A: AccessKind> {
    pub pass: DatasetPass<A>,
}

impl<A: AccessKind> FromRequest for DatasetAccess<A> {
    type Error = actix_web::Error;
    type Future = Ready<Result<Self, actix_web::Error>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let minted = subject_of(req).and_then(|subject| {
            let info = req.match_info();
            let key = DatasetKey::new(
                info.get("layer").unwrap_or_default(),
                info.get("domain").unwrap_or_default(),
                info.get("dataset").unwrap_or_default(),
            );
            let pass = state_of(req)?.engine.dataset_pass::<A>(subject, &key)?;
            Ok(pass.with_note(note_of(req)))
        });
        ready(match minted {
            Ok(_) if is_preflight(req) => Err(PreflightPassed.into()),
            Ok(pass) => Ok(DatasetAccess { pass }),
            Err(e) => Err(ApiError(e).into()),
        })
    }
}
