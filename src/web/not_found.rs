//! The answer to a path no route serves: for a browser (its `Accept` names `text/html`) outside
//! `/api`, a page in words (with the navigation for a signed-in viewer); otherwise the bare 404
//! that the JSON error middleware answers as `{"details": "Not found: no such route"}`.

use actix_web::http::{header, StatusCode};
use actix_web::{web, HttpRequest, HttpResponse};
use maud::html;

use crate::state::AppState;
use crate::web::is_page;
use crate::web::layout::{bare, errors, refused_to};
use crate::web::page::html as render;
use crate::web::session::{find, Found};

const MESSAGE: &str =
    "There is no page at this address: it may have been mistyped, or what it showed is gone.";

fn wants_html(req: &HttpRequest) -> bool {
    let accept = req.headers().get(header::ACCEPT);
    accept
        .and_then(|v| v.to_str().ok())
        .is_some_and(|a| a.contains("text/html"))
}

pub async fn not_found(req: HttpRequest) -> HttpResponse {
    let state = req.app_data::<web::Data<AppState>>();
    let (Some(state), true) = (state, is_page(req.path()) && wants_html(&req)) else {
        return HttpResponse::NotFound().finish();
    };
    let status = StatusCode::NOT_FOUND;
    let messages = [MESSAGE.to_string()];
    let body = match find(&req, state) {
        Found::Ready(viewer) => refused_to(&viewer, status, &messages),
        Found::MustChangePassword(_) | Found::None => bare(
            "Not found",
            html! {
                (errors(&messages))
                p { "Status 404. " a href="/signin" { "Sign in" } " or " a href="/" { "go to the catalogue" } "." }
            },
        ),
    };
    render(status, body)
}
