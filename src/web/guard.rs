//! What a page asks of its request before it renders: a signed-in viewer, for a form post a CSRF
//! token matching the session's, and the pass of the permission the page needs. Pages name that
//! permission in their type, as the API's handlers do: [`Page<N>`] for a page, [`Posted<N>`] for
//! a form post (listed after the path and query extractors, so that their refusals come first
//! as before; a post's last, as it reads the body).

use std::marker::PhantomData;

use actix_web::dev::Payload;
use actix_web::{web, FromRequest, HttpMessage, HttpRequest};
use futures_util::future::{ready, LocalBoxFuture, Ready};
use rapid_actors::auth::pass::{AccessKind, DatasetPass};
use rapid_actors::Error;

use crate::auth::{note_of, Noted, Policy};
use crate::state::AppState;
use crate::web::page::{FormData, PageError};
use crate::web::session::{constant_time_eq, find, Found, Viewer};

/// What a page needs of its viewer, as a pass the engine mints: a policy's (any subject,
/// DATA_ADMIN, USER_ADMIN), or access to the dataset the path names ([`OnDataset`]).
pub trait Need {
    type Pass: Noted;
    fn mint(state: &AppState, req: &HttpRequest, viewer: &Viewer) -> Result<Self::Pass, Error>;
}

impl<P: Policy> Need for P {
    type Pass = P::Pass;
    fn mint(state: &AppState, _: &HttpRequest, viewer: &Viewer) -> Result<P::Pass, Error> {
        P::mint(&state.engine, viewer.subject.clone())
    }
}

/// Read (or write) access to the dataset named by the path's `layer`, `domain` and `dataset`.
pub struct OnDataset<A>(PhantomData<A>);

impl<A: AccessKind> Need for OnDataset<A> {
    type Pass = DatasetPass<A>;
    fn mint(state: &AppState, req: &HttpRequest, viewer: &Viewer) -> Result<Self::Pass, Error> {
        let info = req.match_info();
        let key = rapid_actors::key::DatasetKey::new(
            info.get("layer").unwrap_or_default(),
            info.get("domain").unwrap_or_default(),
            info.get("dataset").unwrap_or_default(),
        );
        let minted = state.engine.dataset_pass::<A>(viewer.subject.clone(), &key);
        // Refused before the lookup (no permission of the kind at all), the refusal names no
        // dataset; after it, an unknown dataset and one out of reach answer alike.
        let looked_up = viewer
            .subject
            .permissions
            .iter()
            .any(|p| p.is_access(A::ACCESS));
        minted.map_err(|e| match looked_up {
            true => unknown_or_out_of_reach(e, &key, A::ACCESS),
            false => e,
        })
    }
}

/// A dataset that does not exist and one out of the viewer's reach answer alike (404, the same
/// words), so a page's status never tells that a dataset exists (the API keeps rAPId's 403).
fn unknown_or_out_of_reach(
    e: Error,
    key: &rapid_actors::key::DatasetKey,
    access: rapid_actors::auth::permission::Access,
) -> Error {
    use rapid_actors::ErrorKind;
    match matches!(e.kind, ErrorKind::NotFound | ErrorKind::Forbidden) {
        true => Error::not_found(format!(
            "There is no dataset {}/{}/{} that you may {}: it does not exist, or your permissions \
             do not reach it.",
            key.layer,
            key.domain,
            key.dataset,
            access.as_str().to_ascii_lowercase()
        )),
        false => e,
    }
}

/// A viewer who may write some dataset (the upload page); the dataset's own pass is minted when
/// one is chosen.
pub struct WritesSomewhere;

impl Need for WritesSomewhere {
    type Pass = ();
    fn mint(_: &AppState, _: &HttpRequest, viewer: &Viewer) -> Result<(), Error> {
        match viewer.can_write_any() {
            true => Ok(()),
            false => Err(Error::forbidden(format!(
                "Subject {} has no permission to write any dataset",
                viewer.subject.name
            ))),
        }
    }
}

/// A page for a signed-in viewer who has what `N` needs: extracting it redirects to sign in (or
/// to replace the password first), or refuses in the API's words.
pub struct Page<N: Need> {
    pub viewer: Viewer,
    pub pass: N::Pass,
}

/// A form post from a signed-in viewer, its CSRF token checked, who has what `N` needs.
pub struct Posted<N: Need> {
    pub viewer: Viewer,
    pub pass: N::Pass,
    pub form: FormData,
}

fn state_of(req: &HttpRequest) -> Result<&AppState, PageError> {
    req.app_data::<web::Data<AppState>>()
        .map(|d| d.get_ref())
        .ok_or_else(|| PageError::from(Error::internal("application state missing")))
}

impl<N: Need> FromRequest for Page<N> {
    type Error = PageError;
    type Future = Ready<Result<Self, PageError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(state_of(req).and_then(|state| {
            let viewer = viewer(req, state)?;
            let pass = N::mint(state, req, &viewer).map_err(|e| shown_to(&viewer, e))?;
            let pass = pass.noted(note_of(req));
            Ok(Page { viewer, pass })
        }))
    }
}

impl<N: Need + 'static> FromRequest for Posted<N> {
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
                let pass = N::mint(state, &req, &viewer)?.noted(note_of(&req));
                Ok(Posted { viewer, pass, form })
            });
            Ok(posted?)
        })
    }
}

/// An engine refusal as the viewer's page, with the navigation.
pub fn shown_to(viewer: &Viewer, e: Error) -> PageError {
    match PageError::from(e) {
        PageError::Shown(status, messages) => {
            let body = crate::web::layout::refused_to(viewer, status, &messages);
            PageError::ShownTo(status, messages, body.into_string())
        }
        other => other,
    }
}

/// The signed-in viewer of a page, or a redirect to sign in (or to replace the password first).
pub fn viewer(req: &HttpRequest, state: &AppState) -> Result<Viewer, PageError> {
    match find(req, state) {
        Found::Ready(v) => Ok(signed_in(req, v)),
        Found::MustChangePassword(_) => Err(PageError::Redirect("/password".into())),
        Found::None => Err(PageError::Redirect("/signin".into())),
    }
}

/// The viewer, named in the request for its log line and audit row.
fn signed_in(req: &HttpRequest, viewer: Viewer) -> Viewer {
    req.extensions_mut()
        .insert(crate::auth::Authenticated(viewer.subject.clone()));
    viewer
}

/// The viewer of a form post whose CSRF token matches the session's; 403 otherwise.
pub fn poster(req: &HttpRequest, state: &AppState, form: &FormData) -> Result<Viewer, PageError> {
    let viewer = match find(req, state) {
        Found::Ready(v) => signed_in(req, v),
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
