//! The posts that are not plain forms, each with its guard in its type like [`Page`] and
//! [`Posted`]: a multipart form whose text fields (the CSRF token first) come before its file
//! ([`Sampled`]), the upload script's post, which is refused in JSON ([`ScriptPost`]), and the
//! own-password form, open to a viewer who must replace the password first ([`OwnAccount`],
//! [`OwnPassword`]).
//!
//! [`Page`]: crate::web::guard::Page
//! [`Posted`]: crate::web::guard::Posted

use actix_multipart::{Field, Multipart};
use actix_web::dev::Payload;
use actix_web::http::StatusCode;
use actix_web::{web, FromRequest, HttpRequest, HttpResponse, ResponseError};
use futures_util::future::{ready, LocalBoxFuture, Ready};
use futures_util::StreamExt;
use rapid_actors::Error;
use serde_json::json;

use crate::state::AppState;
use crate::web::guard::{check_csrf, viewer, Need};
use crate::web::page::{secure, FormData, PageError};
use crate::web::session::{find, Found, Viewer};

/// Largest text field of a multipart form.
const FIELD_BYTES: usize = 4096;

fn state_of(req: &HttpRequest) -> Result<web::Data<AppState>, PageError> {
    req.app_data::<web::Data<AppState>>()
        .cloned()
        .ok_or_else(|| PageError::from(Error::internal("application state missing")))
}

/// A multipart form post from a signed-in viewer who has what `N` needs: its text fields read
/// up to the `file` part, the CSRF token among them checked before the file is touched.
pub(super) struct Sampled<N: Need> {
    pub viewer: Viewer,
    pub pass: N::Pass,
    pub fields: FormData,
    /// The `file` part and its file name; `None` when the form had none.
    pub file: Option<(Field, String)>,
    /// The stream the file part is read from, kept open while it is.
    _form: Multipart,
}

impl<N: Need + 'static> FromRequest for Sampled<N> {
    type Error = PageError;
    type Future = LocalBoxFuture<'static, Result<Self, PageError>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let form = Multipart::new(req.headers(), payload.take());
        let req = req.clone();
        Box::pin(async move {
            let state = state_of(&req)?;
            let viewer =
                viewer(&req, &state).map_err(|_| PageError::forbidden("You are not signed in."))?;
            let (fields, file, form) = text_fields(form).await?;
            check_csrf(&viewer.csrf, &fields)?;
            let pass = N::mint(&state, &req, &viewer)?;
            Ok(Sampled {
                viewer,
                pass,
                fields,
                file,
                _form: form,
            })
        })
    }
}

type TextFields = (FormData, Option<(Field, String)>, Multipart);

/// The text fields before the `file` part, and that part.
async fn text_fields(mut form: Multipart) -> Result<TextFields, PageError> {
    let unreadable = |e: actix_multipart::MultipartError| {
        PageError::invalid(format!("The form could not be read: {e}"))
    };
    let mut fields = FormData(vec![]);
    while let Some(part) = form.next().await {
        let mut part = part.map_err(unreadable)?;
        let disposition = part.content_disposition().cloned();
        let name = disposition
            .as_ref()
            .and_then(|d| d.get_name())
            .unwrap_or_default()
            .to_string();
        if name == "file" {
            let filename = disposition
                .as_ref()
                .and_then(|d| d.get_filename())
                .unwrap_or_default()
                .to_string();
            return Ok((fields, Some((part, filename)), form));
        }
        let mut value = Vec::new();
        while let Some(chunk) = part.next().await {
            let chunk = chunk.map_err(unreadable)?;
            if value.len() + chunk.len() > FIELD_BYTES {
                return Err(PageError::invalid(format!("The field {name} is too long.")));
            }
            value.extend_from_slice(&chunk);
        }
        let value = String::from_utf8_lossy(&value).into_owned();
        fields.0.push((name, value));
    }
    Ok((fields, None, form))
}

/// A post from the upload page's script, its CSRF token in `X-CSRF-Token`, from a signed-in
/// viewer who has what `N` needs; refused as JSON, `{"errors": [...]}`.
pub(super) struct ScriptPost<N: Need> {
    pub pass: N::Pass,
}

/// A script post refused: its status and the reasons in words.
#[derive(Debug)]
pub(super) struct ScriptRefusal(StatusCode, Vec<String>);

impl From<PageError> for ScriptRefusal {
    fn from(e: PageError) -> ScriptRefusal {
        ScriptRefusal(e.status_code(), e.messages())
    }
}

impl From<Error> for ScriptRefusal {
    fn from(e: Error) -> ScriptRefusal {
        PageError::from(e).into()
    }
}

impl std::fmt::Display for ScriptRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.0, self.1.join("; "))
    }
}

impl ResponseError for ScriptRefusal {
    fn status_code(&self) -> StatusCode {
        self.0
    }

    fn error_response(&self) -> HttpResponse {
        json_answer(self.0, json!({ "errors": self.1 }))
    }
}

/// A JSON answer with the headers every page carries.
pub(super) fn json_answer(status: StatusCode, body: serde_json::Value) -> HttpResponse {
    secure(HttpResponse::build(status).json(body))
}

impl<N: Need> FromRequest for ScriptPost<N> {
    type Error = ScriptRefusal;
    type Future = Ready<Result<Self, ScriptRefusal>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(script_post(req))
    }
}

fn script_post<N: Need>(req: &HttpRequest) -> Result<ScriptPost<N>, ScriptRefusal> {
    let state = state_of(req)?;
    let Found::Ready(viewer) = find(req, &state) else {
        let signed_out = "You are not signed in: sign in again.".to_string();
        return Err(ScriptRefusal(StatusCode::FORBIDDEN, vec![signed_out]));
    };
    let sent = req
        .headers()
        .get("x-csrf-token")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let form = FormData(vec![("csrf".into(), sent.to_string())]);
    check_csrf(&viewer.csrf, &form)?;
    let pass = N::mint(&state, req, &viewer)?;
    Ok(ScriptPost { pass })
}

/// The viewer's own account page: open to a viewer who must replace the password first
/// (`forced`); one not signed in is sent to sign in.
pub(super) struct OwnAccount {
    pub viewer: Viewer,
    pub forced: bool,
}

impl FromRequest for OwnAccount {
    type Error = PageError;
    type Future = Ready<Result<Self, PageError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(state_of(req).and_then(|state| match find(req, &state) {
            Found::Ready(viewer) => Ok(OwnAccount {
                viewer,
                forced: false,
            }),
            Found::MustChangePassword(viewer) => Ok(OwnAccount {
                viewer,
                forced: true,
            }),
            Found::None => Err(PageError::Redirect("/signin".into())),
        }))
    }
}

/// A form post to the viewer's own account, its CSRF token checked; open to a viewer who must
/// replace the password first (`forced`).
pub(super) struct OwnPassword {
    pub viewer: Viewer,
    pub forced: bool,
    pub form: FormData,
}

impl FromRequest for OwnPassword {
    type Error = actix_web::Error;
    type Future = LocalBoxFuture<'static, Result<Self, actix_web::Error>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let body = web::Bytes::from_request(req, payload);
        let req = req.clone();
        Box::pin(async move {
            let body = body.await?;
            let posted = state_of(&req).and_then(|state| {
                let form = FormData::parse(&body)?;
                let (viewer, forced) = match find(&req, &state) {
                    Found::Ready(v) => (v, false),
                    Found::MustChangePassword(v) => (v, true),
                    Found::None => return Err(PageError::forbidden("You are not signed in.")),
                };
                check_csrf(&viewer.csrf, &form)?;
                Ok(OwnPassword {
                    viewer,
                    forced,
                    form,
                })
            });
            Ok(posted?)
        })
    }
}
