//! What a page asks of its request before it renders: a signed-in viewer, and for a form post a
//! CSRF token matching the session's.

use actix_web::HttpRequest;

use crate::state::AppState;
use crate::web::page::{FormData, PageError};
use crate::web::session::{constant_time_eq, find, Found, Viewer};

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
