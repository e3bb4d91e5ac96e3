//! Dataset data: upload, raw file listing and deletion, dataset deletion.

use actix_multipart::Multipart;
use actix_web::{web, HttpResponse};
use rapid_actors::dataset::manifest::raw_files;
use rapid_actors::dataset::{check_before_answer, CommitUpload, DeleteRawFile, StagedUpload};
use rapid_actors::file_kind::FileKind;
use rapid_actors::ingest::{ingest_stream, messages, IngestPlan};
use rapid_actors::jobs::{JobKind, NewJob};
use rapid_actors::registry::{DatasetKey, Registry};
use rapid_actors::storage::safe_segment;
use rapid_actors::Error;
use serde::Deserialize;
use serde_json::json;

use crate::auth::{AnySubject, Authorized, DataAdmin, DatasetAccess, Write};
use crate::error::{not_found_as_invalid, ApiResult};
use crate::openapi::schemas as doc;
use crate::state::AppState;
use crate::upload::{file_field, stream_to_ingest};

#[derive(Debug, Deserialize)]
pub struct VersionQuery {
    pub version: Option<i64>,
}

/// The version asked for, or the latest when absent or 0 (as rAPId).
pub fn pick_version(asked: Option<i64>, latest: i64) -> i64 {
    asked.filter(|v| *v > 0).unwrap_or(latest)
}

/// A raw file name: UTC timestamp, a random part, the original name made path-safe, its extension.
fn new_raw_filename(original: &str, kind: FileKind) -> String {
    let stem = std::path::Path::new(original)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("upload");
    let mut safe: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(80)
        .collect();
    if safe.is_empty() {
        safe.push_str("upload");
    }
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%S%3fZ");
    let random = &uuid::Uuid::new_v4().simple().to_string()[..8];
    format!("{stamp}-{random}-{safe}.{}", kind.extension())
}

#[utoipa::path(post, path = "/api/datasets/{layer}/{domain}/{dataset}", tag = "datasets",
    params(("layer" = String, Path, example = "default"), ("domain" = String, Path, example = "demo"), ("dataset" = String, Path, example = "visits"), ("version" = Option<i64>, Query, description = "Schema version; absent, 0 or less: the latest")),
    request_body(content = doc::FileUpload, content_type = "multipart/form-data"),
    responses(
        (status = 202, description = "Valid: its job commits it (WRITE access)", body = doc::UploadAccepted),
        (status = 404, description = "No such dataset or version", body = doc::ErrorBody),
        (status = 413, description = "The file is over the upload limit", body = doc::ErrorBody),
        (status = 422, description = "The data fails validation: every error listed", body = doc::ErrorBody),
    ))]
pub async fn upload_dataset(
    access: DatasetAccess<Write>,
    state: web::Data<AppState>,
    query: web::Query<VersionQuery>,
    mut payload: Multipart,
) -> ApiResult<HttpResponse> {
    let record = access.record;
    let version = pick_version(query.version, record.latest_version);
    let schema = state.registry.schema(&record.key, Some(version))?;
    let (field, filename) = file_field(&mut payload).await?;
    let kind = FileKind::from_filename(&filename)?;
    let raw_filename = new_raw_filename(&filename, kind);
    let job_id = state.jobs.create(NewJob {
        kind: JobKind::Upload,
        step: "VALIDATION",
        key: &record.key,
        version,
        subject_id: &access.subject.id,
        filename: Some(&filename),
        raw_filename: Some(&raw_filename),
    })?;

    let staging = state.registry.storage().staging_dir(&job_id);
    let raw_staged = staging.join("raw");
    let received = {
        let (jobs, job, staging, raw_staged) = (
            state.jobs.clone(),
            job_id.clone(),
            staging.clone(),
            raw_staged.clone(),
        );
        let schema = schema.clone();
        let max_value_bytes = state.max_value_bytes;
        stream_to_ingest(field, state.max_upload_bytes, move |rx| {
            std::fs::create_dir_all(&staging)?;
            let progress = move |rows: u64| {
                let _ = jobs.set_progress(&job, rows);
            };
            let plan = IngestPlan {
                schema: &schema,
                staging: &staging.join("data"),
                progress: &progress,
                max_value_bytes,
            };
            ingest_stream(kind, rx, &raw_staged, &plan)
        })
        .await
    };
    // A clash with stored rows is a 422 now, not a 202 and a failed job.
    let received = match received {
        Ok((output, raw_bytes)) => {
            let (catalog, storage) = (
                state.registry.catalog().clone(),
                state.registry.storage().clone(),
            );
            let (dataset_id, behaviour) = (record.id, schema.update_behaviour());
            web::block(move || {
                check_before_answer(&catalog, &storage, dataset_id, version, behaviour, &output)
                    .map(|()| (output, raw_bytes))
            })
            .await
            .map_err(|e| Error::internal(format!("unique check task: {e}")))
            .and_then(|r| r)
        }
        Err(e) => Err(e),
    };
    let (output, raw_bytes) = match received {
        Ok(done) => done,
        Err(e) => {
            state.jobs.fail(&job_id, &messages(&e))?;
            let _ = std::fs::remove_dir_all(&staging);
            return Err(e.into());
        }
    };

    state.jobs.set_step(&job_id, "COMMIT")?;
    let upload = StagedUpload {
        job_id: job_id.clone(),
        version,
        behaviour: schema.update_behaviour(),
        raw_staged,
        raw_filename: raw_filename.clone(),
        original_filename: filename.clone(),
        uploaded_by: access.subject.name.clone(),
        raw_bytes,
        output,
    };
    spawn_commit(
        state.registry.clone(),
        state.jobs.clone(),
        record.key.clone(),
        staging,
        upload,
    );
    Ok(HttpResponse::Accepted().json(json!({
        "details": {
            "original_filename": filename,
            "raw_filename": raw_filename,
            "dataset_version": version,
            "status": "Data processing",
            "job_id": job_id,
        }
    })))
}

/// Hands the staged upload to the dataset's actor; the job records the outcome.
fn spawn_commit(
    registry: Registry,
    jobs: rapid_actors::jobs::Jobs,
    key: DatasetKey,
    staging: std::path::PathBuf,
    upload: StagedUpload,
) {
    // Graceful shutdown waits for this commit (ops::inflight); its logs keep the request's id.
    let pending = crate::ops::inflight::commit_started();
    let stored = (upload.output.rows, upload.raw_bytes);
    let span = tracing::Span::current();
    let commit = async move {
        let _pending = pending;
        let job_id = upload.job_id.clone();
        let outcome = match registry.dataset_actor(&key).await {
            Ok(actor) => actor
                .send(CommitUpload(upload))
                .await
                .map_err(Error::from)
                .and_then(|r| r),
            Err(e) => Err(e),
        };
        if outcome.is_ok() {
            crate::ops::metrics::observe_stored_upload(stored.0, stored.1);
        }
        if let Err(e) = outcome {
            tracing::warn!(job_id, error = %e, "upload commit failed");
            // The actor records its own failures; this covers it being unreachable.
            if let Ok(job) = jobs.get(&job_id) {
                if job.status == rapid_actors::jobs::IN_PROGRESS {
                    let _ = jobs.fail(&job_id, &messages(&e));
                }
            }
        }
        let _ = tokio::fs::remove_dir_all(&staging).await;
    };
    actix_web::rt::spawn(tracing::Instrument::instrument(commit, span));
}

#[derive(Debug, Deserialize)]
pub struct VersionPath {
    layer: String,
    domain: String,
    dataset: String,
    version: i64,
}

fn no_files(key: &DatasetKey, version: i64) -> Error {
    Error::not_found(format!(
        "There are no uploaded files for the layer [{}], domain [{}], dataset [{}] and version [{version}]",
        key.layer, key.domain, key.dataset
    ))
}

#[utoipa::path(get, path = "/api/datasets/{layer}/{domain}/{dataset}/{version}/files", tag = "datasets",
    params(("layer" = String, Path, example = "default"), ("domain" = String, Path, example = "demo"), ("dataset" = String, Path, example = "visits"), ("version" = i64, Path, example = 1)),
    responses(
        (status = 200, description = "The raw file names of the version", body = Vec<String>),
        (status = 404, description = "No such dataset, or no files", body = doc::ErrorBody),
    ))]
pub async fn list_raw_files(
    _: Authorized<AnySubject>,
    state: web::Data<AppState>,
    path: web::Path<VersionPath>,
) -> ApiResult<HttpResponse> {
    let p = path.into_inner();
    let key = DatasetKey::new(&p.layer, &p.domain, &p.dataset);
    let record = state.registry.find(&key)?;
    let files = state
        .registry
        .catalog()
        .with(|c| raw_files(c, record.id, p.version))?;
    if files.is_empty() {
        return Err(no_files(&key, p.version).into());
    }
    let names: Vec<String> = files.into_iter().map(|f| f.raw_filename).collect();
    Ok(HttpResponse::Ok().json(names))
}

#[utoipa::path(delete, path = "/api/datasets/{layer}/{domain}/{dataset}/{version}/{filename}", tag = "datasets",
    params(("layer" = String, Path, example = "default"), ("domain" = String, Path, example = "demo"), ("dataset" = String, Path, example = "visits"), ("version" = i64, Path, example = 1), ("filename" = String, Path, description = "A raw file name")),
    responses(
        (status = 200, description = "The file and its rows are deleted (WRITE access)", body = doc::Confirmation),
        (status = 404, description = "No such dataset or file", body = doc::ErrorBody),
    ))]
pub async fn delete_raw_file(
    access: DatasetAccess<Write>,
    state: web::Data<AppState>,
    path: web::Path<(String, String, String, i64, String)>,
) -> ApiResult<HttpResponse> {
    let (_, _, _, version, filename) = path.into_inner();
    if !safe_segment(&filename) {
        return Err(Error::invalid(format!("Invalid file name [{filename}]")).into());
    }
    let actor = state.registry.dataset_actor(&access.record.key).await?;
    actor
        .send(DeleteRawFile {
            version,
            raw_filename: filename.clone(),
        })
        .await
        .map_err(Error::from)??;
    Ok(HttpResponse::Ok().json(json!({ "details": format!("{filename} has been deleted.") })))
}

#[utoipa::path(delete, path = "/api/datasets/{layer}/{domain}/{dataset}", tag = "datasets",
    params(("layer" = String, Path), ("domain" = String, Path), ("dataset" = String, Path)),
    responses(
        (status = 202, description = "Deleted: every version, file and schema (DATA_ADMIN); unknown is 400, as rAPId", body = doc::Confirmation),
    ))]
pub async fn delete_dataset(
    _: Authorized<DataAdmin>,
    state: web::Data<AppState>,
    path: web::Path<(String, String, String)>,
) -> ApiResult<HttpResponse> {
    let (layer, domain, dataset) = path.into_inner();
    let record = state
        .registry
        .delete_dataset(&DatasetKey::new(&layer, &domain, &dataset))
        .await
        .map_err(not_found_as_invalid)?;
    Ok(HttpResponse::Accepted()
        .json(json!({ "details": format!("{} has been deleted.", record.name) })))
}
