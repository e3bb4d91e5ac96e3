//! What a page asks of its request before it renders: a signed-in viewer, for a form post a CSRF
//! token matching the session's, and the pass of the permission the page needs. Pages name that
//! permission in their type, as the API's handlers do: [`Page<P>`] for a page, [`Posted<P>`] for
//! a form post (listed last among the arguments, as it reads the body).

use actix_web::dev::Payload;
use actix_web::{web, FromRequest, HttpRequest};
use futures_util::future::{ready, LocalBoxFuture, Ready};
use rapid_actors::Error;

use crate::auth::Policy;
use crate::state::AppState;
use crate::web::page::{FormData, PageError};
use crate::web::session::{constant_time_eq, find, Found, Viewer};

/// A page for a signed-in viewer who holds policy `P`: extracting it redirects to sign in (or
/// to replace the password first), or refuses with 403 in the API's words.
pub struct Page<P: Policy> {
    pub viewer: Viewer,
    pub pass: P::Pass,
}

/// A form post from a signed-in viewer, its CSRF token checked, who holds policy `P`.
pub struct Posted<P: Policy> {
    pub viewer: Viewer,
    pub pass: P::Pass,
    pub form: FormData,
}

fn state_of(req: &HttpRequest) -> Result<&AppState, PageError> {
    req.app_data::<web::Data<AppState>>()
        .map(|d| d.get_ref())
        .ok_or_else(|| PageError::from(Error::internal("application state missing")))
}

fn pass_of<P: Policy>(state: &AppState, viewer: &Viewer) -> Result<P::Pass, PageError> {
    Ok(P::mint(&state.engine, viewer.subject.clone())?)
}

impl<P: Policy> FromRequest for Page<P> {
    type Error = PageError;
    type Future = Ready<Result<Self, PageError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(state_of(req).and_then(|state| {
            let viewer = viewer(req, state)?;
            let pass = pass_of::<P>(state, &viewer)?;
            Ok(Page { viewer, pass })
        }))
    }
}

impl<P: Policy + 'static> FromRequest for Posted<P> {
    type Error = actix_web::Error;
    type Future = LocalBoxFuture<'static, Result<Self, actix_web::Error>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let body = web::Bytes::from_request(req, payload);
        let req = req.clone();
        Box::pin(async move {
            let body = body.await?;
            let posted = state_of(&req).and_then(|state| {
                let form = FormData::parse(&body)?;
                let viewer = poster(&req, state, &form)?;
                let pass = pass_of::<P>(state, &viewer)?;
                Ok(Posted { viewer, pass, form })
            });
            Ok(posted?)
        })
    }
}

/// The signed-in viewer of a page, or a redirect to sign in (or to replace the password first).
pub fn viewer(req: &HttpRequest, state: &AppState) -> Result<Viewer, PageError> {
    match find(req, state) {
        Found::Ready(v) => Ok(v),
        Found::MustChangePassword(_) => Err(PageError::Redirect("/password".into())),
        Found::None => Err(PageError::Redirect("/signin".into())),
    }
}

/// The viewer of a form post whose CSRF token matches the session's; 403 otherwise.
pub fn poster(req: &HttpRequest, state: &AppState, form: &FormData) -> Result<Viewer, PageError> {
    let viewer = match find(req, state) {
        Found::Ready(v) => v,
        Found::MustChangePassword(_) | Found::None => {
            return Err(PageError::forbidden(
                "You are not signed in (or your session expired): sign in again, then retry.",
            ))
        }
    };
    check_csrf(&viewer.csrf, form)?;
    Ok(viewer)
}

/// 403 unless the form's `csrf` field equals `expected`.
pub fn check_csrf(expected: &str, form: &FormData) -> Result<(), PageError> {
    match form.get("csrf") {
        Some(sent) if constant_time_eq(sent, expected) => Ok(()),
        _ => Err(PageError::forbidden(
            "This form was refused: its security token is missing or out of date. \
             Reload the page and try again.",
        )),
    }
}
