//! What every page handler shares: HTML responses with the security headers, errors rendered as
//! pages in words, and form bodies.

use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use maud::Markup;
use rapid_actors::{Details, Error, ErrorKind};

/// No inline script or style anywhere: every script and stylesheet is one of our embedded files.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; \
                       connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// Adds the headers every page carries.
pub fn secure(mut res: HttpResponse) -> HttpResponse {
    let h = res.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    res
}

pub fn html(status: StatusCode, body: Markup) -> HttpResponse {
    secure(
        HttpResponse::build(status)
            .content_type("text/html; charset=utf-8")
            .body(body.into_string()),
    )
}

pub fn ok(body: Markup) -> HttpResponse {
    html(StatusCode::OK, body)
}

/// After a successful post: see the result with a GET (so a reload does not post again).
pub fn see_other(to: &str) -> HttpResponse {
    HttpResponse::SeeOther()
        .insert_header((header::LOCATION, to))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .finish()
}

/// Why a page could not be shown.
#[derive(Debug)]
pub enum PageError {
    /// Not signed in, or the password must be replaced first.
    Redirect(String),
    /// Shown as a page: the status and the reason in words.
    Shown(StatusCode, Vec<String>),
    /// Shown to a signed-in viewer, in the page with the navigation: the status, the reasons,
    /// the page rendered.
    ShownTo(StatusCode, Vec<String>, String),
}

pub type PageResult = Result<HttpResponse, PageError>;

impl PageError {
    pub fn forbidden(message: &str) -> PageError {
        PageError::Shown(StatusCode::FORBIDDEN, vec![message.to_string()])
    }

    pub fn invalid(message: impl Into<String>) -> PageError {
        PageError::Shown(StatusCode::BAD_REQUEST, vec![message.into()])
    }

    pub fn messages(&self) -> Vec<String> {
        match self {
            PageError::Redirect(_) => vec![],
            PageError::Shown(_, m) | PageError::ShownTo(_, m, _) => m.clone(),
        }
    }
}

/// Engine errors in the words the API would use (internal ones without their cause), the
/// engine's own jargon put in plain words ([`crate::web::plain`]).
impl From<Error> for PageError {
    fn from(e: Error) -> PageError {
        let status = crate::error::status_of(e.kind);
        let messages = match (e.kind, &e.details) {
            (ErrorKind::Internal, _) => {
                tracing::error!(error = %e, "internal error on a web page");
                vec![
                    "Something went wrong on the server. Please contact your administrator.".into(),
                ]
            }
            (_, Details::One(m)) => vec![crate::web::plain::plain(m)],
            (_, Details::Many(ms)) => ms.iter().map(|m| crate::web::plain::plain(m)).collect(),
        };
        PageError::Shown(status, messages)
    }
}

impl std::fmt::Display for PageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PageError::Redirect(to) => write!(f, "redirect to {to}"),
            PageError::Shown(s, m) | PageError::ShownTo(s, m, _) => {
                write!(f, "{s}: {}", m.join("; "))
            }
        }
    }
}

impl ResponseError for PageError {
    fn status_code(&self) -> StatusCode {
        match self {
            PageError::Redirect(_) => StatusCode::SEE_OTHER,
            PageError::Shown(s, _) | PageError::ShownTo(s, _, _) => *s,
        }
    }

    fn error_response(&self) -> HttpResponse {
        match self {
            PageError::Redirect(to) => see_other(to),
            PageError::Shown(status, messages) => {
                html(*status, crate::web::layout::error_page(*status, messages))
            }
            PageError::ShownTo(status, _, body) => secure(
                HttpResponse::build(*status)
                    .content_type("text/html; charset=utf-8")
                    .body(body.clone()),
            ),
        }
    }
}

/// A urlencoded form body, field order and repeats kept (checkbox groups repeat a name).
pub struct FormData(pub Vec<(String, String)>);

impl FormData {
    pub fn parse(body: &[u8]) -> Result<FormData, PageError> {
        serde_urlencoded::from_bytes::<Vec<(String, String)>>(body)
            .map(FormData)
            .map_err(|e| PageError::invalid(format!("The form could not be read: {e}")))
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// A required field, trimmed; 400 in words when it is missing or empty.
    pub fn required(&self, name: &str, label: &str) -> Result<String, PageError> {
        match self.get(name).map(str::trim) {
            Some(v) if !v.is_empty() => Ok(v.to_string()),
            _ => Err(PageError::invalid(format!("Please fill in {label}."))),
        }
    }

    pub fn all(&self, name: &str) -> Vec<String> {
        self.0
            .iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .collect()
    }
}
