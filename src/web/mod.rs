//! The web pages at `/`: the service usable from a browser.
//!
//! Server-rendered HTML (maud templates, checked at compile time), one stylesheet and one small
//! script, both embedded in the binary. Sessions are server-side ([`session`]); every changing form
//! carries a CSRF token; the Content-Security-Policy allows no inline script or style ([`page`]).
//! Pages call the engine facade directly, as the API's handlers do, with the passes their
//! extractors mint ([`guard`]), and read its typed models (no JSON round trip).
//!
//! Pages: [`catalogue`], [`signin`] (and password, sign-out), [`jobs`], [`subjects`]
//! (USER_ADMIN), [`domains`] (DATA_ADMIN).

mod catalogue;
mod chart;
mod checks_edit;
mod dataset;
mod dataset_policy;
mod domains;
mod done;
mod facets;
mod file_delete;
mod files;
mod format;
pub mod guard;
mod history;
mod job_result;
mod jobs;
mod layout;
mod not_found;
pub mod page;
mod plain;
mod posts;
mod preview;
mod problems;
mod profile;
mod query;
mod query_form;
mod query_links;
mod sample_store;
mod sample_upload;
mod samples;
mod schema_edit;
mod schema_editor;
mod schema_in_place;
pub mod session;
mod signin;
mod sql;
pub(crate) mod subjects;
mod upload;
mod view_sql;
mod webhooks;

use actix_web::http::header;
use actix_web::{web, HttpResponse};

pub use not_found::not_found;
pub use session::WebState;

/// Paths served by the pages (everything outside `/api`): the bearer-token middleware lets
/// them through, and each page checks its session cookie itself.
pub fn is_page(path: &str) -> bool {
    path != "/api" && !path.starts_with("/api/")
}

const APP_CSS: &str = include_str!("assets/app.css");
const APP_JS: &str = include_str!("assets/app.js");
const FAVICON: &str = include_str!("assets/favicon.svg");

fn asset(content_type: &'static str, body: &'static str) -> HttpResponse {
    page::secure(
        HttpResponse::Ok()
            .content_type(content_type)
            .insert_header((header::CACHE_CONTROL, "public, max-age=3600"))
            .body(body),
    )
}

async fn app_css() -> HttpResponse {
    let mut res = asset("text/css; charset=utf-8", APP_CSS);
    // `secure` sets no-store for pages; assets may be cached.
    res.headers_mut().insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("public, max-age=3600"),
    );
    res
}

async fn app_js() -> HttpResponse {
    let mut res = asset("text/javascript; charset=utf-8", APP_JS);
    res.headers_mut().insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("public, max-age=3600"),
    );
    res
}

async fn favicon() -> HttpResponse {
    let mut res = asset("image/svg+xml", FAVICON);
    res.headers_mut().insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("public, max-age=86400"),
    );
    res
}

/// The pages, with their sessions (one store for every worker) as app data.
pub fn configure(sessions: web::Data<WebState>) -> impl FnOnce(&mut web::ServiceConfig) {
    move |cfg| {
        cfg.app_data(sessions);
        routes(cfg);
    }
}

fn routes(cfg: &mut web::ServiceConfig) {
    schema_routes(cfg);
    webhook_routes(cfg);
    cfg.route("/", web::get().to(catalogue::get_catalogue))
        .route("/static/app.css", web::get().to(app_css))
        .route("/static/app.js", web::get().to(app_js))
        .route("/static/favicon.svg", web::get().to(favicon))
        .route("/signin", web::get().to(signin::get_signin))
        .route("/signin", web::post().to(signin::post_signin))
        .route("/signout", web::post().to(signin::post_signout))
        .route("/password", web::get().to(signin::get_password))
        .route("/password", web::post().to(signin::post_password))
        .route("/jobs", web::get().to(jobs::get_jobs))
        .route("/sql", web::get().to(sql::get_sql))
        .route("/jobs/{job_id}", web::get().to(jobs::get_job))
        .route("/jobs/{job_id}/status", web::get().to(jobs::job_status))
        .route(
            "/jobs/{job_id}/result.csv",
            web::get().to(job_result::get_result),
        )
        .route("/subjects", web::get().to(subjects::get_subjects))
        .route("/subjects/new", web::post().to(subjects::post_new))
        .route("/subjects/{id}", web::get().to(subjects::get_subject))
        .route(
            "/subjects/{id}/permissions",
            web::post().to(subjects::post_permissions),
        )
        .route(
            "/subjects/{id}/delete",
            web::post().to(subjects::post_delete),
        )
        .route("/protected-domains", web::get().to(domains::get_domains))
        .route("/protected-domains", web::post().to(domains::post_domain))
        .route(
            "/protected-domains/{domain}/delete",
            web::post().to(domains::post_delete),
        )
        .route(
            "/datasets/{layer}/{domain}/{dataset}",
            web::get().to(dataset::get_dataset),
        )
        .route(
            "/datasets/{layer}/{domain}/{dataset}/delete",
            web::post().to(dataset::post_delete_dataset),
        )
        .route(
            "/datasets/{layer}/{domain}/{dataset}/files/{version}/{filename}/delete",
            web::post().to(file_delete::post_delete_file),
        )
        .route(
            "/datasets/{layer}/{domain}/{dataset}/query",
            web::get().to(query::get_query),
        )
        .route(
            "/datasets/{layer}/{domain}/{dataset}/history",
            web::get().to(history::get_history),
        )
        .route(
            "/datasets/{layer}/{domain}/{dataset}/rollback",
            web::post().to(history::post_rollback),
        )
        .route(
            "/datasets/{layer}/{domain}/{dataset}/query/job",
            web::post().to(query::post_query_job),
        )
        .route("/upload", web::get().to(upload::get_upload))
        .route(
            "/datasets/{layer}/{domain}/{dataset}/upload",
            web::post().to(upload::post_upload),
        );
}

/// The webhook pages (DATA_ADMIN).
fn webhook_routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/webhooks", web::get().to(webhooks::get_webhooks))
        .route("/webhooks", web::post().to(webhooks::post_webhook))
        .route("/webhooks/{id}", web::get().to(webhooks::get_webhook))
        .route(
            "/webhooks/{id}/redeliver",
            web::post().to(webhooks::post_redeliver),
        )
        .route(
            "/webhooks/{id}/delete",
            web::post().to(webhooks::post_delete),
        );
}

/// The schema pages: a new schema from a sample, the editor, a saved sample's upload.
fn schema_routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/schema/new", web::get().to(schema_edit::get_new))
        .route(
            "/schema/generate",
            web::post().to(schema_edit::post_generate),
        )
        .route("/schema/save", web::post().to(schema_edit::post_save))
        .route(
            "/schema/saved/{token}",
            web::get().to(sample_upload::get_saved),
        )
        .route(
            "/schema/saved/{token}/upload",
            web::post().to(sample_upload::post_upload),
        )
        .route(
            "/schema/edit/{layer}/{domain}/{dataset}",
            web::get().to(schema_edit::get_edit),
        );
}
