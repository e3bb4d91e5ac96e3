//! Schemas: create, new version, and drafts generated from a sample file.

use actix_multipart::Multipart;
use actix_web::{web, HttpResponse};
use rapid_actors::auth::pass::SubjectPass;
use rapid_actors::infer::DraftTarget;
use rapid_actors::schema::{Schema, DEFAULT_LAYER};
use serde::Deserialize;

use crate::answers as doc;
use crate::auth::{AnySubject, Authorized, DataAdmin};
use crate::error::ApiResult;
use crate::state::AppState;
use crate::upload::{draft_from_field, file_field};

#[utoipa::path(post, path = "/api/schema", tag = "schemas",
    request_body = doc::Schema,
    responses(
        (status = 201, description = "Stored as version 1 (DATA_ADMIN)", body = doc::SchemaStored),
        (status = 409, description = "The dataset exists", body = doc::ErrorBody),
    ))]
pub(crate) async fn create_schema(
    admin: Authorized<DataAdmin>,
    state: web::Data<AppState>,
    body: web::Json<Schema>,
) -> ApiResult<HttpResponse> {
    let schema = state.engine.create_schema(&admin.pass, &body).await?;
    Ok(HttpResponse::Created().json(doc::SchemaStored {
        details: format!(
            "The schema for [{}/{}/{}] has been created as version 1",
            schema.layer(),
            schema.domain(),
            schema.dataset()
        ),
        version: 1,
    }))
}

#[utoipa::path(put, path = "/api/schema", tag = "schemas",
    request_body = doc::Schema,
    responses(
        (status = 200, description = "Stored as the next version (DATA_ADMIN)", body = doc::SchemaStored),
        (status = 404, description = "No such dataset", body = doc::ErrorBody),
    ))]
pub(crate) async fn update_schema(
    admin: Authorized<DataAdmin>,
    state: web::Data<AppState>,
    body: web::Json<Schema>,
) -> ApiResult<HttpResponse> {
    let schema = state.engine.update_schema(&admin.pass, &body).await?;
    let version = schema.version().unwrap_or_default();
    Ok(HttpResponse::Ok().json(doc::SchemaStored {
        details: format!(
            "The schema for [{}/{}/{}] has been stored as version {version}",
            schema.layer(),
            schema.domain(),
            schema.dataset()
        ),
        version,
    }))
}

/// Metadata in place (docs/API.md, metadata in place): no new version, so the version's data
/// stays what every default read shows.
#[utoipa::path(patch, path = "/api/schema/{layer}/{domain}/{dataset}", tag = "schemas",
    params(("layer" = String, Path, example = "default"), ("domain" = String, Path, example = "demo"),
        ("dataset" = String, Path, example = "visits"),
        ("version" = Option<i64>, Query, description = "Schema version; absent, 0 or less: the latest")),
    request_body(content = rapid_actors::schema::MetadataPatch,
        description = "Any of description, owners, key_value_tags, key_only_tags, history (null: the service's retention)"),
    responses(
        (status = 200, description = "The version's schema with the metadata changed, same version (DATA_ADMIN)", body = doc::Schema),
        (status = 400, description = "Sensitivity, columns or an unknown key, or metadata that fails validation", body = doc::ErrorBody),
        (status = 404, description = "No such dataset or version", body = doc::ErrorBody),
    ))]
pub(crate) async fn patch_metadata(
    admin: Authorized<DataAdmin>,
    state: web::Data<AppState>,
    path: web::Path<(String, String, String)>,
    query: web::Query<crate::params::VersionQuery>,
    body: web::Json<serde_json::Value>,
) -> ApiResult<HttpResponse> {
    let (layer, domain, dataset) = path.into_inner();
    let key = rapid_actors::key::DatasetKey::new(&layer, &domain, &dataset);
    let patch = rapid_actors::schema::MetadataPatch::from_json(&body)?;
    let schema = state
        .engine
        .patch_metadata(&admin.pass, &key, query.version, &patch)?;
    Ok(HttpResponse::Ok().json(schema))
}

#[derive(Debug, Deserialize)]
pub(crate) struct GenerateFullPath {
    layer: String,
    sensitivity: String,
    domain: String,
    dataset: String,
}

#[derive(Debug, Deserialize)]
pub(crate) struct GenerateShortPath {
    domain: String,
    dataset: String,
}

#[utoipa::path(post, path = "/api/schema/{layer}/{sensitivity}/{domain}/{dataset}/generate",
    tag = "schemas",
    params(("layer" = String, Path), ("sensitivity" = rapid_actors::sensitivity::Sensitivity, Path),
        ("domain" = String, Path), ("dataset" = String, Path)),
    request_body(content = doc::FileUpload, content_type = "multipart/form-data"),
    responses(
        (status = 200, description = "A draft schema to edit and store", body = doc::Schema),
        (status = 413, description = "The file is over the upload limit", body = doc::ErrorBody),
    ))]
pub(crate) async fn generate_schema(
    caller: Authorized<AnySubject>,
    state: web::Data<AppState>,
    path: web::Path<GenerateFullPath>,
    payload: Multipart,
) -> ApiResult<HttpResponse> {
    let p = path.into_inner();
    let target = DraftTarget {
        layer: p.layer,
        sensitivity: p.sensitivity,
        domain: p.domain,
        dataset: p.dataset,
        description: None,
    };
    let draft = generate(&state, &caller.pass, target, payload).await?;
    Ok(HttpResponse::Ok().json(draft))
}

/// The short form: default layer, sensitivity PUBLIC and a placeholder description, for the user to edit.
/// The layer is `default` (a schema's layer when it names none) if the instance has it, otherwise
/// the instance's first layer, so the draft passes the layer rule either way.
#[utoipa::path(post, path = "/api/schema/{domain}/{dataset}/generate",
    tag = "schemas",
    params(("domain" = String, Path), ("dataset" = String, Path)),
    request_body(content = doc::FileUpload, content_type = "multipart/form-data"),
    responses(
        (status = 200, description = "A draft schema to edit and store", body = doc::Schema),
        (status = 413, description = "The file is over the upload limit", body = doc::ErrorBody),
    ))]
pub(crate) async fn generate_schema_short(
    caller: Authorized<AnySubject>,
    state: web::Data<AppState>,
    path: web::Path<GenerateShortPath>,
    payload: Multipart,
) -> ApiResult<HttpResponse> {
    let p = path.into_inner();
    let layers = state.engine.layers();
    let layer = layers
        .iter()
        .find(|l| l.as_str() == DEFAULT_LAYER)
        .unwrap_or(&layers[0])
        .clone();
    let target = DraftTarget {
        layer,
        sensitivity: "PUBLIC".into(),
        domain: p.domain,
        dataset: p.dataset,
        description: Some("Replace this with a description of the dataset".to_string()),
    };
    let draft = generate(&state, &caller.pass, target, payload).await?;
    Ok(HttpResponse::Ok().json(draft))
}

async fn generate(
    state: &AppState,
    pass: &SubjectPass,
    target: DraftTarget,
    mut payload: Multipart,
) -> ApiResult<Schema> {
    // A place in the bounded pool before the body is read: at most that many samples are
    // received and inferred at once, whatever arrives.
    let _permit = state.generations.acquire().await?;
    let (field, filename) = file_field(&mut payload).await?;
    Ok(draft_from_field(state, pass, target, field, &filename).await?)
}
