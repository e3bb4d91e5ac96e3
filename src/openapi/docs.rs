//! The docs page: Swagger UI's files, taken from its release archive and gzipped at build time
//! (build.rs: only the five files the page loads), behind a page and an initializer of our own.
//! The page's asset links are absolute (it is served at `/api/docs`, without a trailing slash,
//! so Swagger UI's own `./file` links would resolve under `/api/`). No inline script: the
//! Content-Security-Policy allows scripts from this origin only.

use std::io::Read;
use std::sync::OnceLock;

use actix_web::http::header;
use actix_web::{web, HttpRequest, HttpResponse, HttpResponseBuilder};
use rapid_actors::Error;

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

/// Swagger UI's start: our document, no validator badge (it would fetch from the internet),
/// "Try it out" open.
const INITIALIZER: &str = r##"window.onload = function () {
  window.ui = SwaggerUIBundle({
    url: "/api/openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    plugins: [SwaggerUIBundle.plugins.DownloadUrl],
    layout: "StandaloneLayout",
    validatorUrl: "none",
    tryItOutEnabled: true,
  });
};
"##;

/// Swagger UI's files as build.rs gzipped them: name, content type, gzip stream.
const FILES: [(&str, &str, &[u8]); 5] = include!(concat!(env!("OUT_DIR"), "/docs/files.rs"));

/// Each file unpacked, once, for the clients that do not accept gzip: unpacking the 1.4 MB
/// bundle on every such request would let anyone without a token spend milliseconds of CPU per
/// request.
static PLAIN: [OnceLock<Vec<u8>>; FILES.len()] = [const { OnceLock::new() }; FILES.len()];

/// Whether the request's `Accept-Encoding` admits gzip (`gzip` or `*`, with a nonzero weight).
fn accepts_gzip(req: &HttpRequest) -> bool {
    let Some(value) = req.headers().get(header::ACCEPT_ENCODING) else {
        return false;
    };
    value.to_str().unwrap_or("").split(',').any(|coding| {
        let mut parts = coding.split(';');
        let name = parts.next().unwrap_or("").trim();
        let weight = parts
            .filter_map(|p| p.trim().strip_prefix("q="))
            .map(|q| q.trim().parse::<f32>().unwrap_or(0.0))
            .next()
            .unwrap_or(1.0);
        (name.eq_ignore_ascii_case("gzip") || name == "*") && weight > 0.0
    })
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

pub(super) async fn asset(
    req: HttpRequest,
    file: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let name = file.into_inner();
    if name == "index.html" {
        return Ok(index().await);
    }
    let cached = |mut res: HttpResponseBuilder| {
        res.insert_header((header::CACHE_CONTROL, "public, max-age=3600"));
        res
    };
    if name == "swagger-initializer.js" {
        return Ok(cached(page(HttpResponse::Ok()))
            .content_type("text/javascript; charset=utf-8")
            .body(INITIALIZER));
    }
    let Some(index) = FILES.iter().position(|(n, _, _)| *n == name) else {
        return Err(ApiError(Error::not_found(format!("No docs file [{name}]"))));
    };
    let (_, content_type, gz) = FILES[index];
    let mut res = cached(page(HttpResponse::Ok()));
    res.content_type(content_type)
        .insert_header((header::VARY, "Accept-Encoding"));
    if accepts_gzip(&req) {
        return Ok(res
            .insert_header((header::CONTENT_ENCODING, "gzip"))
            .body(gz));
    }
    let plain = match PLAIN[index].get() {
        Some(plain) => plain,
        None => {
            let mut plain = Vec::new();
            flate2::read::GzDecoder::new(gz)
                .read_to_end(&mut plain)
                .map_err(|e| Error::internal(format!("docs file {name}: {e}")))?;
            PLAIN[index].get_or_init(|| plain)
        }
    };
    Ok(res.body(plain.as_slice()))
}
