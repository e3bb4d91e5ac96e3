//! Sign-in (a user's name and password, or a client's id and secret), the forced replacement of a
//! temporary password, and sign-out. Failed sign-ins go through the API's sign-in throttle.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use std::net::IpAddr;

use maud::{html, Markup};
use rapid_actors::auth::names::MIN_PASSWORD_CHARS;

use crate::state::AppState;
use crate::web::guard::check_csrf;
use crate::web::layout::{bare, errors, notice};
use crate::web::page::{html as render, ok, see_other, FormData, PageError, PageResult};
use crate::web::posts::{OwnAccount, OwnPassword};
use crate::web::session::{self, random_token, Found, SIGNIN_COOKIE};

/// Ten minutes to fill in the sign-in form.
const SIGNIN_FORM_SECONDS: i64 = 600;

fn signin_form(token: &str, messages: &[String], username: &str, client_id: &str) -> Markup {
    bare(
        "Sign in",
        html! {
            (errors(messages))
            div.cards {
                section.card aria-labelledby="as-user" {
                    h2 id="as-user" { "As a user" }
                    form method="post" action="/signin" {
                        input type="hidden" name="csrf" value=(token);
                        input type="hidden" name="kind" value="user";
                        label for="username" { "User name" }
                        input id="username" name="username" autocomplete="username" required value=(username);
                        label for="password" { "Password" }
                        input id="password" name="password" type="password" autocomplete="current-password" required;
                        button type="submit" { "Sign in" }
                    }
                }
                section.card aria-labelledby="as-client" {
                    h2 id="as-client" { "As a client" }
                    form method="post" action="/signin" {
                        input type="hidden" name="csrf" value=(token);
                        input type="hidden" name="kind" value="client";
                        label for="client_id" { "Client id" }
                        input id="client_id" name="client_id" autocomplete="off" required value=(client_id);
                        label for="client_secret" { "Client secret" }
                        input id="client_secret" name="client_secret" type="password" autocomplete="off" required;
                        button type="submit" { "Sign in" }
                    }
                }
            }
        },
    )
}

/// The form with a fresh double-submit token in a cookie.
fn show_signin(
    req: &HttpRequest,
    status: StatusCode,
    messages: &[String],
    form: Option<&FormData>,
) -> HttpResponse {
    let token = random_token();
    let username = form.and_then(|f| f.get("username")).unwrap_or("");
    let client_id = form.and_then(|f| f.get("client_id")).unwrap_or("");
    let mut res = render(status, signin_form(&token, messages, username, client_id));
    // unwrap-free: adding a cookie only fails for a malformed one, and ours is built by us.
    let _ =
        res.add_cookie(&session::sessions(req).cookie(SIGNIN_COOKIE, token, SIGNIN_FORM_SECONDS));
    res
}

pub(super) async fn get_signin(req: HttpRequest, state: web::Data<AppState>) -> HttpResponse {
    match session::find(&req, &state) {
        Found::Ready(_) => see_other("/"),
        Found::MustChangePassword(_) => see_other("/password"),
        Found::None => show_signin(&req, StatusCode::OK, &[], None),
    }
}

pub(super) async fn post_signin(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Bytes,
) -> PageResult {
    let form = FormData::parse(&body)?;
    check_signin_form(&req, &form)?;
    let addr = state.client_addr(&req)?;
    match sign_in(&state, &form, addr).await? {
        Ok((subject_id, must_change)) => {
            let cookie = session::sessions(&req).create(&subject_id, must_change);
            let mut res = see_other(if must_change { "/password" } else { "/" });
            let _ = res.add_cookie(&cookie);
            let _ = res.add_cookie(&session::sessions(&req).expired_cookie(SIGNIN_COOKIE));
            Ok(res)
        }
        Err(e) => {
            let status = crate::error::status_of(e.kind);
            let messages = PageError::from(e).messages();
            Ok(show_signin(&req, status, &messages, Some(&form)))
        }
    }
}

/// 403 unless the form carries the token of the sign-in cookie set with it.
fn check_signin_form(req: &HttpRequest, form: &FormData) -> Result<(), PageError> {
    let expected = req
        .cookie(SIGNIN_COOKIE)
        .map(|c| c.value().to_string())
        .unwrap_or_default();
    if expected.is_empty() {
        return Err(PageError::forbidden(
            "The sign-in form expired or cookies are blocked: reload the page and try again.",
        ));
    }
    check_csrf(&expected, form)
}

/// The subject the form names, signed in (its id, and whether it must replace its password);
/// a field missing is 400 in words, the engine's refusal the inner error.
async fn sign_in(
    state: &AppState,
    form: &FormData,
    addr: std::net::IpAddr,
) -> Result<Result<(String, bool), rapid_actors::Error>, PageError> {
    Ok(match form.get("kind") {
        Some("client") => {
            let id = form.required("client_id", "the client id")?;
            let secret = form.required("client_secret", "the client secret")?;
            sign_in_client(state, &id, &secret, addr).map(|id| (id, false))
        }
        _ => {
            let user = form.required("username", "the user name")?;
            let password = form.required("password", "the password")?;
            sign_in_user(state, &user, &password, addr).await
        }
    })
}

pub(super) async fn post_signout(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Bytes,
) -> PageResult {
    let form = FormData::parse(&body)?;
    let viewer = match session::find(&req, &state) {
        Found::Ready(v) | Found::MustChangePassword(v) => v,
        Found::None => return Ok(see_other("/signin")),
    };
    check_csrf(&viewer.csrf, &form)?;
    session::sessions(&req).remove(&viewer.session_id);
    let mut res = see_other("/signin");
    let _ = res.add_cookie(&session::sessions(&req).expired_cookie(session::SESSION_COOKIE));
    Ok(res)
}

fn password_form(viewer: &session::Viewer, forced: bool, messages: &[String]) -> Markup {
    bare(
        if forced {
            "Choose your password"
        } else {
            "Change your password"
        },
        html! {
            @if forced {
                (notice("This is your first sign-in: replace the temporary password you were given."))
            }
            (errors(messages))
            form.narrow method="post" action="/password" {
                (crate::web::layout::csrf_field(viewer))
                label for="current_password" { @if forced { "Temporary password" } @else { "Current password" } }
                input id="current_password" name="current_password" type="password" autocomplete="current-password" required;
                label for="new_password" { "New password (at least " (MIN_PASSWORD_CHARS) " characters)" }
                input id="new_password" name="new_password" type="password" autocomplete="new-password" required minlength=(MIN_PASSWORD_CHARS);
                label for="confirm_password" { "New password again" }
                input id="confirm_password" name="confirm_password" type="password" autocomplete="new-password" required;
                button type="submit" { "Save password" }
            }
            form.narrow method="post" action="/signout" {
                (crate::web::layout::csrf_field(viewer))
                button.secondary type="submit" { "Sign out" }
            }
        },
    )
}

pub(super) async fn get_password(own: OwnAccount) -> PageResult {
    Ok(ok(password_form(&own.viewer, own.forced, &[])))
}

pub(super) async fn post_password(
    req: HttpRequest,
    state: web::Data<AppState>,
    OwnPassword {
        viewer,
        forced,
        form,
    }: OwnPassword,
) -> PageResult {
    let current = form.get("current_password").unwrap_or("");
    let new = form.get("new_password").unwrap_or("");
    if Some(new) != form.get("confirm_password") {
        let m = ["The two new passwords differ: type the same password twice.".to_string()];
        let page = password_form(&viewer, forced, &m);
        return Ok(render(StatusCode::BAD_REQUEST, page));
    }
    let addr = state.client_addr(&req)?;
    match state
        .auth()
        .change_password(
            &state.engine.subject_pass(viewer.subject.clone()),
            current,
            new,
            addr,
        )
        .await
    {
        Ok(()) => {
            session::sessions(&req).password_changed(&viewer.session_id);
            Ok(see_other("/?password=changed"))
        }
        Err(e) => {
            let status = crate::error::status_of(e.kind);
            let m = PageError::from(e).messages();
            Ok(render(status, password_form(&viewer, forced, &m)))
        }
    }
}

/// A user's sign-in through the API's throttle and hash pool; the user id and whether the
/// temporary password must be replaced first.
pub(super) async fn sign_in_user(
    state: &AppState,
    username: &str,
    password: &str,
    addr: IpAddr,
) -> rapid_actors::Result<(String, bool)> {
    let auth = state.auth();
    let token = auth.password_token(username, password, addr).await?;
    let subject = auth.authenticate(&token.access_token)?;
    Ok((subject.id.clone(), subject.must_change_password))
}

/// A client's sign-in through the API's throttle; the client id.
pub(super) fn sign_in_client(
    state: &AppState,
    id: &str,
    secret: &str,
    addr: IpAddr,
) -> rapid_actors::Result<String> {
    let auth = state.auth();
    let token = auth.client_token(id, secret, addr)?;
    Ok(auth.authenticate(&token.access_token)?.id.clone())
}
