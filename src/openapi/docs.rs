//! The docs page: Swagger UI's files, vendored into the binary at build time by
//! `utoipa-swagger-ui` (feature `vendored`), behind a page of our own whose asset links are
//! absolute (the page is served at `/api/docs`, without a trailing slash, so Swagger UI's own
//! `./file` links would resolve under `/api/`). No inline script: the Content-Security-Policy
//! allows scripts from this origin only.

use std::sync::{Arc, OnceLock};

use actix_web::http::header;
use actix_web::{web, HttpResponse, HttpResponseBuilder};
use rapid_actors::Error;
use utoipa_swagger_ui::Config;

use crate::error::ApiError;

/// Scripts and styles from this origin only (Swagger UI sets inline `style` attributes, hence
/// `'unsafe-inline'` for styles alone); calls go to this origin; no framing.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
    img-src 'self' data:; font-src 'self' data:; connect-src 'self'; base-uri 'none'; \
    form-action 'none'; frame-ancestors 'none'";

const INDEX: &str = r#"<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="UTF-8">
  <title>rapid-rs API</title>
  <link rel="stylesheet" type="text/css" href="/api/docs/swagger-ui.css">
  <link rel="stylesheet" type="text/css" href="/api/docs/index.css">
  <link rel="icon" type="image/png" href="/api/docs/favicon-32x32.png" sizes="32x32">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/api/docs/swagger-ui-bundle.js" charset="UTF-8"></script>
  <script src="/api/docs/swagger-ui-standalone-preset.js" charset="UTF-8"></script>
  <script src="/api/docs/swagger-initializer.js" charset="UTF-8"></script>
</body>
</html>
"#;

fn config() -> Arc<Config<'static>> {
    static CONFIG: OnceLock<Arc<Config<'static>>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            // No validator badge: it would fetch from the internet.
            Arc::new(
                Config::new(["/api/openapi.json"])
                    .validator_url("none")
                    .try_it_out_enabled(true),
            )
        })
        .clone()
}

fn page(mut res: HttpResponseBuilder) -> HttpResponseBuilder {
    res.insert_header((header::CONTENT_SECURITY_POLICY, CSP))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .insert_header((header::REFERRER_POLICY, "no-referrer"));
    res
}

pub(super) async fn index() -> HttpResponse {
    page(HttpResponse::Ok())
        .content_type("text/html; charset=utf-8")
        .body(INDEX)
}

pub(super) async fn asset(file: web::Path<String>) -> Result<HttpResponse, ApiError> {
    let name = file.into_inner();
    let not_found = || ApiError(Error::not_found(format!("No docs file [{name}]")));
    if name == "index.html" {
        return Ok(index().await);
    }
    let found = utoipa_swagger_ui::serve(&name, config())
        .map_err(|e| Error::internal(format!("docs file {name}: {e}")))?
        .ok_or_else(not_found)?;
    Ok(page(HttpResponse::Ok())
        .content_type(found.content_type)
        .insert_header((header::CACHE_CONTROL, "public, max-age=3600"))
        .body(found.bytes.into_owned()))
}
