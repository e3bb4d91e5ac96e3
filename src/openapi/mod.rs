//! The API's contract: `GET /api/openapi.json`, an OpenAPI 3.1 document generated from the
//! `#[utoipa::path]` attributes beside each handler and the types in [`crate::answers`], and
//! `GET /api/docs`, Swagger UI served from the binary (no CDN), where a person authorises with a
//! token and tries calls. Neither needs a token (docs/API.md, Authentication).
//!
//! tests/api/openapi.rs checks that the document's operations are exactly the router's
//! ([`crate::routes::ROUTES`]); scripts/test-openapi.sh runs schemathesis against a live server.

mod docs;
mod modifiers;

use std::sync::OnceLock;

use actix_web::{web, HttpResponse};
use utoipa::OpenApi;

use crate::routes::{
    clients, datasets, jobs, protected_domains, queries, schemas as schema_routes,
};
use crate::routes::{history, profiles, status, subjects, token, users};
use modifiers::{Aliases, CommonErrors, OptionalBodies, SecuritySchemes};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "rapid-rs",
        description = "Self-hosted dataset data service, compatible with rAPId's API and SDK. \
            Get a token from `POST /api/oauth2/token` (HTTP Basic client_id:client_secret), then \
            send it as `Authorization: Bearer <token>`. Every error is `{\"details\": ...}`."
    ),
    paths(
        status::get_status,
        status::list_layers,
        crate::ops::ready::get_ready,
        crate::ops::metrics::get_metrics,
        token::issue_token,
        subjects::list_permissions,
        subjects::get_subject_permissions,
        clients::create_client,
        clients::delete_client,
        users::create_user,
        users::delete_user,
        users::change_password,
        subjects::list_subjects,
        subjects::set_subject_permissions,
        crate::routes::policies::set_subject_attributes,
        schema_routes::create_schema,
        schema_routes::update_schema,
        schema_routes::generate_schema,
        schema_routes::generate_schema_short,
        schema_routes::patch_metadata,
        datasets::upload_dataset,
        datasets::delete_dataset,
        queries::list_datasets,
        queries::get_dataset_info,
        profiles::get_profile,
        crate::routes::policies::put_policy,
        crate::routes::policies::get_policy,
        crate::routes::policies::delete_policy,
        history::get_history,
        history::rollback,
        queries::query_dataset,
        queries::query_dataset_large,
        queries::download_result,
        crate::routes::sql::run_sql,
        crate::routes::sql::run_sql_large,
        datasets::list_raw_files,
        datasets::delete_raw_file,
        datasets::compact_dataset,
        crate::routes::audit::get_audit,
        crate::routes::events::get_events,
        crate::routes::events::create_webhook,
        crate::routes::events::list_webhooks,
        crate::routes::events::get_webhook,
        crate::routes::events::delete_webhook,
        crate::routes::events::redeliver,
        crate::routes::events::get_changes,
        jobs::list_jobs,
        jobs::get_job,
        protected_domains::list_protected_domains,
        protected_domains::create_protected_domain,
        protected_domains::delete_protected_domain,
    ),
    components(schemas(crate::answers::ErrorBody)),
    modifiers(&SecuritySchemes, &OptionalBodies, &Aliases, &CommonErrors),
    security(("bearer" = [])),
    tags(
        (name = "service", description = "Status and configuration"),
        (name = "tokens", description = "OAuth2 tokens"),
        (name = "subjects", description = "Clients, users and their permissions"),
        (name = "protected domains", description = "Domains whose data needs their own permission"),
        (name = "schemas", description = "Dataset schemas and drafts from sample files"),
        (name = "datasets", description = "Uploads, files, listing, info and deletion"),
        (name = "queries", description = "Queries, large-query results"),
        (name = "jobs", description = "Upload and large-query jobs"),
        (name = "policies", description = "Row filters and column masks per schema version"),
        (name = "audit", description = "Who read, wrote or changed what, on every front"),
        (name = "events", description = "Change events: webhooks (Standard Webhooks, CloudEvents) and the pull feed"),
    )
)]
pub struct ApiDoc;

/// The document, rendered once.
pub fn document() -> &'static str {
    static DOC: OnceLock<String> = OnceLock::new();
    DOC.get_or_init(|| {
        // unwrap: the document is plain data (strings, maps); serialising it cannot fail.
        ApiDoc::openapi().to_pretty_json().unwrap()
    })
}

async fn openapi_json() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("application/json")
        .body(document())
}

/// Registered before the `/api` scope of [`crate::routes::configure`], which would otherwise
/// answer these paths 404.
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(web::resource("/api/openapi.json").route(web::get().to(openapi_json)))
        .service(web::resource("/api/docs").route(web::get().to(docs::index)))
        .service(web::resource("/api/docs/{file}").route(web::get().to(docs::asset)));
}

/// The paths anyone may fetch without a token.
pub fn is_public(path: &str) -> bool {
    path == "/api/openapi.json" || path == "/api/docs" || path.starts_with("/api/docs/")
}
