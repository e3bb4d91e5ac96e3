//! `POST /api/oauth2/token`: OAuth2 client credentials (and password, for users).
//!
//! Credentials come as HTTP Basic `client_id:client_secret` or in the body; the body may be
//! form-encoded or JSON. The rAPId SDK sends JSON under a form content type, so the body is parsed
//! by its look, not by its declared type.

use actix_web::http::header;
use actix_web::{web, HttpRequest, HttpResponse};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use rapid_actors::Error;
use serde::Deserialize;

use crate::answers as doc;
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;

#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
pub(crate) struct TokenRequest {
    /// Absent: `client_credentials`.
    #[schema(schema_with = doc::rules::grant_type)]
    grant_type: Option<String>,
    client_id: Option<String>,
    client_secret: Option<String>,
    username: Option<String>,
    password: Option<String>,
}

fn parse_body(body: &[u8]) -> ApiResult<TokenRequest> {
    let trimmed = body.trim_ascii();
    if trimmed.is_empty() {
        return Ok(TokenRequest::default());
    }
    if trimmed.starts_with(b"{") {
        return serde_json::from_slice(trimmed)
            .map_err(|e| ApiError(Error::invalid(format!("Malformed JSON token request: {e}"))));
    }
    serde_urlencoded::from_bytes(trimmed)
        .map_err(|e| ApiError(Error::invalid(format!("Malformed form token request: {e}"))))
}

fn basic_credentials(req: &HttpRequest) -> Option<(String, String)> {
    let value = req.headers().get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, encoded) = value.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = String::from_utf8(STANDARD.decode(encoded.trim()).ok()?).ok()?;
    let (id, secret) = decoded.split_once(':')?;
    Some((id.to_string(), secret.to_string()))
}

#[utoipa::path(post, path = "/api/oauth2/token", tag = "tokens",
    security(("basic" = []), ()),
    request_body(description = "Client credentials (or HTTP Basic instead), or a user's name and \
        password with `grant_type=password`; form-encoded or JSON; may be empty with HTTP Basic",
        content((TokenRequest = "application/x-www-form-urlencoded"), (TokenRequest = "application/json"))),
    responses(
        (status = 200, description = "A bearer token", body = doc::IssuedToken),
        (status = 401, description = "Bad or missing credentials", body = doc::ErrorBody),
        (status = 429, description = "Too many failed sign-ins for this account or address: retry \
            after the `Retry-After` seconds", body = doc::ErrorBody),
    ))]
pub(crate) async fn issue_token(
    req: HttpRequest,
    body: web::Bytes,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let form = parse_body(&body)?;
    let grant = form.grant_type.as_deref().unwrap_or("client_credentials");
    let token = match grant {
        "client_credentials" => {
            let (id, secret) = basic_credentials(&req)
                .or_else(|| Some((form.client_id.clone()?, form.client_secret.clone()?)))
                .ok_or_else(|| {
                    Error::unauthenticated(
                        "Client credentials required: HTTP Basic client_id:client_secret, \
                         or client_id and client_secret in the body",
                    )
                })?;
            state
                .auth()
                .client_token(&id, &secret, state.client_addr(&req)?)?
        }
        "password" => {
            let (Some(user), Some(password)) = (form.username, form.password) else {
                return Err(
                    Error::invalid("grant_type=password needs username and password").into(),
                );
            };
            state
                .auth()
                .password_token(&user, &password, state.client_addr(&req)?)
                .await?
        }
        other => {
            return Err(Error::invalid(format!(
                "Unsupported grant_type [{other}]: use client_credentials or password"
            ))
            .into())
        }
    };
    Ok(HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .json(token))
}
