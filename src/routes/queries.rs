//! `POST /datasets/{layer}/{domain}/{dataset}/query`: small results, synchronously.

use actix_web::http::header;
use actix_web::{web, HttpRequest, HttpResponse};
use rapid_actors::query::output::{to_arrow_stream, to_csv, to_json, to_parquet};
use rapid_actors::query::{engine, PreparedQuery, QueryKind, SYNC_ROW_LIMIT};
use rapid_actors::registry::DatasetRecord;
use rapid_actors::Error;

use crate::auth::{DatasetAccess, Read};
use crate::error::ApiResult;
use crate::openapi::schemas as doc;
use crate::routes::datasets::{pick_version, VersionQuery};
use crate::state::AppState;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Format {
    Json,
    Csv,
    Arrow,
    Parquet,
}

/// From the Accept header: missing, `*/*` or a browser-style list mean JSON.
pub fn negotiate(accept: Option<&str>) -> Result<Format, Error> {
    let Some(accept) = accept.map(str::trim).filter(|a| !a.is_empty()) else {
        return Ok(Format::Json);
    };
    for range in accept.split(',') {
        let media = range
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        match media.as_str() {
            "application/json" | "*/*" | "application/*" => return Ok(Format::Json),
            "text/csv" | "text/*" => return Ok(Format::Csv),
            "application/vnd.apache.arrow.stream" => return Ok(Format::Arrow),
            "application/vnd.apache.parquet" | "application/octet-stream" => {
                return Ok(Format::Parquet)
            }
            _ => {}
        }
    }
    Err(Error::invalid(format!(
        "Provided value for Accept header parameter [{accept}] is not supported. Supported formats: \
         application/json, text/csv, application/vnd.apache.arrow.stream, application/vnd.apache.parquet"
    )))
}

/// The checked query over the chosen version's files as of now (400 for a bad query, 404 for an
/// unknown version), and that version.
/// Runs on the query threads: the checks walk the expressions.
fn prepare(
    state: &AppState,
    record: &DatasetRecord,
    asked_version: Option<i64>,
    body: &[u8],
    cap: Option<u64>,
) -> Result<(PreparedQuery, i64), Error> {
    let request = rapid_actors::query::parse_request(body, &engine().settings().limits)?;
    let version = pick_version(asked_version, record.latest_version);
    let schema = state.registry.schema(&record.key, Some(version))?;
    let prepared = PreparedQuery::new(
        state.registry.catalog(),
        state.registry.storage(),
        record,
        &schema,
        version,
        &request,
        cap,
    )?;
    Ok((prepared, version))
}

/// Admitted to the sync pool, then everything (parse, check, plan, run, render) on the query
/// threads within the sync time limit.
#[utoipa::path(post, path = "/api/datasets/{layer}/{domain}/{dataset}/query", tag = "queries",
    params(("layer" = String, Path, example = "default"), ("domain" = String, Path, example = "demo"), ("dataset" = String, Path, example = "visits"), ("version" = Option<i64>, Query, description = "Schema version; absent, 0 or less: the latest")),
    request_body(content = Option<doc::QueryRequest>, description = "The query; empty: every row", content_type = "application/json"),
    responses(
        (status = 200, description = "The rows (READ access), in the format the Accept header asks for", content(
            (doc::QueryRows = "application/json"),
            (String = "text/csv"),
            (Vec<u8> = "application/vnd.apache.arrow.stream"),
            (Vec<u8> = "application/vnd.apache.parquet"),
        )),
        (status = 404, description = "No such dataset or version", body = doc::ErrorBody),
    ))]
pub async fn query_dataset(
    access: DatasetAccess<Read>,
    state: web::Data<AppState>,
    version: web::Query<VersionQuery>,
    req: HttpRequest,
    payload: web::Payload,
) -> ApiResult<HttpResponse> {
    let format = negotiate(
        req.headers()
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok()),
    )?;
    let body = read_query_body(&req, payload, state.query_max_body_bytes).await?;
    let (content_type, bytes) =
        run_sync_query(state, access.record, version.version, body, format).await?;
    Ok(HttpResponse::Ok().content_type(content_type).body(bytes))
}

/// A synchronous query (the caller checked READ access): admitted to the sync pool, then
/// everything (parse, check, plan, run, render) on the query threads within the sync time limit.
/// Shared with the web pages.
pub(crate) async fn run_sync_query(
    state: web::Data<AppState>,
    record: DatasetRecord,
    asked: Option<i64>,
    body: web::Bytes,
    format: Format,
) -> Result<(&'static str, Vec<u8>), Error> {
    let engine = engine();
    let slot = engine.admit(QueryKind::Sync).await?;
    let limit = engine.settings().timeout;
    let key = record.key.clone();
    engine
        .run(
            Some(slot),
            limit,
            async move {
                let (prepared, _) =
                    prepare(&state, &record, asked, &body, Some(SYNC_ROW_LIMIT + 1))?;
                let (arrow_schema, batches) = prepared.collect().await?;
                drop(prepared);
                let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
                if rows as u64 > SYNC_ROW_LIMIT {
                    return Err(too_many_rows(&record));
                }
                let names: Vec<String> = arrow_schema
                    .fields()
                    .iter()
                    .map(|f| f.name().clone())
                    .collect();
                Ok(match format {
                    Format::Json => ("application/json", to_json(&batches)),
                    Format::Csv => ("text/csv; charset=utf-8", to_csv(&names, &batches)?),
                    Format::Arrow => (
                        "application/vnd.apache.arrow.stream",
                        to_arrow_stream(arrow_schema, &batches)?,
                    ),
                    Format::Parquet => (
                        "application/vnd.apache.parquet",
                        to_parquet(arrow_schema, &batches)?,
                    ),
                })
            },
            Error::invalid(format!(
                "The query ran longer than the limit of {} seconds for synchronous queries \
                     (RAPID_QUERY_TIMEOUT_SECONDS) and was stopped: run it with POST \
                     /api/datasets/{}/{}/{}/query/large, or narrow it (filter, limit)",
                limit.as_secs(),
                key.layer,
                key.domain,
                key.dataset
            )),
        )
        .await
}

fn too_many_rows(record: &DatasetRecord) -> Error {
    Error::invalid(format!(
        "The result has more than {SYNC_ROW_LIMIT} rows: use POST /api/datasets/{}/{}/{}/query/large, \
         or narrow the query (filter, limit)",
        record.key.layer, record.key.domain, record.key.dataset
    ))
}

#[derive(Debug, serde::Deserialize)]
pub struct InfoQuery {
    version: Option<i64>,
}

#[utoipa::path(get, path = "/api/datasets/{layer}/{domain}/{dataset}/info", tag = "datasets",
    params(("layer" = String, Path, example = "default"), ("domain" = String, Path, example = "demo"), ("dataset" = String, Path, example = "visits"), ("version" = Option<i64>, Query, description = "Schema version; absent, 0 or less: the latest")),
    responses(
        (status = 200, description = "Schema and figures (READ access)", body = doc::DatasetInfo),
        (status = 404, description = "No such dataset or version, or no data", body = doc::ErrorBody),
    ))]
pub async fn get_dataset_info(
    access: DatasetAccess<Read>,
    state: web::Data<AppState>,
    query: web::Query<InfoQuery>,
) -> ApiResult<HttpResponse> {
    let record = access.record;
    let version = pick_version(query.version, record.latest_version);
    let schema = state.registry.schema(&record.key, Some(version))?;
    let info = rapid_actors::query::info::dataset_info(
        state.registry.catalog(),
        state.registry.storage(),
        &record,
        &schema,
        version,
    )
    .await?;
    Ok(HttpResponse::Ok().json(info))
}

#[derive(Debug, serde::Deserialize)]
pub struct ListQuery {
    #[serde(default)]
    enriched: bool,
}

/// Any subject may list; PROTECTED datasets show only to those with access to them.
#[utoipa::path(post, path = "/api/datasets", tag = "datasets",
    params(("enriched" = Option<bool>, Query, description = "Add description and last_updated_date")),
    request_body(content = Option<doc::DatasetFilter>, description = "Optional filters", content_type = "application/json"),
    responses(
        (status = 200, description = "The latest version of every dataset the caller may see", body = Vec<doc::DatasetEntry>),
    ))]
pub async fn list_datasets(
    caller: crate::auth::Authorized<crate::auth::AnySubject>,
    state: web::Data<AppState>,
    query: web::Query<ListQuery>,
    body: web::Bytes,
) -> ApiResult<HttpResponse> {
    let filter: rapid_actors::registry::DatasetFilter =
        if body.iter().all(|b| b.is_ascii_whitespace()) {
            Default::default()
        } else {
            serde_json::from_slice(&body)
                .map_err(|e| Error::invalid(format!("Invalid dataset filter: {e}")))?
        };
    let list = rapid_actors::registry::list_datasets(
        state.registry.catalog(),
        &caller.subject.permissions,
        &filter,
        query.enriched,
    )?;
    Ok(HttpResponse::Ok().json(list))
}

/// `POST .../query/large`: 202 with a QUERY job that writes the whole result as CSV; the finished
/// job's `result_url` downloads it without a token until it expires.
#[utoipa::path(post, path = "/api/datasets/{layer}/{domain}/{dataset}/query/large", tag = "queries",
    params(("layer" = String, Path, example = "default"), ("domain" = String, Path, example = "demo"), ("dataset" = String, Path, example = "visits"), ("version" = Option<i64>, Query, description = "Schema version; absent, 0 or less: the latest")),
    request_body(content = Option<doc::QueryRequest>, description = "The query; empty: every row", content_type = "application/json"),
    responses(
        (status = 202, description = "A QUERY job; when it succeeds its result_url downloads the CSV", body = doc::QueryJobAccepted),
        (status = 404, description = "No such dataset or version", body = doc::ErrorBody),
    ))]
pub async fn query_dataset_large(
    access: DatasetAccess<Read>,
    state: web::Data<AppState>,
    version: web::Query<VersionQuery>,
    req: HttpRequest,
    payload: web::Payload,
) -> ApiResult<HttpResponse> {
    let body = read_query_body(&req, payload, state.query_max_body_bytes).await?;
    let base = {
        let info = req.connection_info();
        format!("{}://{}", info.scheme(), info.host())
    };
    let job_id = start_large_query(
        state,
        access.record,
        &access.subject,
        version.version,
        body,
        base,
    )
    .await?;
    Ok(HttpResponse::Accepted().json(serde_json::json!({ "details": { "job_id": job_id } })))
}

/// A large-query job (the caller checked READ access): checked now, run in the background into
/// a CSV whose signed link (under `base`) the finished job holds. Shared with the web pages.
pub(crate) async fn start_large_query(
    state: web::Data<AppState>,
    record: DatasetRecord,
    subject: &rapid_actors::auth::Subject,
    asked: Option<i64>,
    body: web::Bytes,
    base: String,
) -> Result<String, Error> {
    let engine = engine();
    // The job's slot is taken now: when every one is busy the answer is 503, not a queued job.
    let slot = engine.admit(QueryKind::Large).await?;
    let check_limit = engine.settings().timeout;
    let (prepared, version) = {
        let (state, record, asked) = (state.clone(), record.clone(), asked);
        engine
            .run(
                None,
                check_limit,
                async move { prepare(&state, &record, asked, &body, None) },
                Error::invalid(format!(
                    "Checking the query took longer than {} seconds (RAPID_QUERY_TIMEOUT_SECONDS)",
                    check_limit.as_secs()
                )),
            )
            .await?
    };
    let job_id = state.jobs.create(rapid_actors::jobs::NewJob {
        kind: rapid_actors::jobs::JobKind::Query,
        step: "RUNNING",
        key: &record.key,
        version,
        subject_id: &subject.id,
        filename: None,
        raw_filename: None,
    })?;
    let (jobs, auth, results) = (
        state.jobs.clone(),
        state.auth.clone(),
        state.registry.storage().results_dir(),
    );
    let ttl = state.result_ttl_seconds;
    let limit = engine.settings().large_timeout;
    let id = job_id.clone();
    actix_web::rt::spawn(async move {
        let job = id.clone();
        let jobs_for_run = jobs.clone();
        let outcome = engine
            .run(
                Some(slot),
                limit,
                async move {
                    rapid_actors::query::large::write_csv_result(
                        prepared,
                        &jobs_for_run,
                        &job,
                        &results,
                    )
                    .await
                },
                Error::invalid(format!(
                    "The query ran longer than the limit of {} seconds for large-query jobs \
                         (RAPID_LARGE_QUERY_TIMEOUT_SECONDS) and was stopped: narrow it (filter, \
                         fewer columns)",
                    limit.as_secs()
                )),
            )
            .await;
        let recorded = match outcome {
            Ok(_) => {
                let name = format!("{id}.csv");
                let expires = rapid_actors::auth::now_seconds() + ttl;
                let signature = auth.sign_link(&name, expires);
                let url =
                    format!("{base}/api/results/{name}?expires={expires}&signature={signature}");
                jobs.succeed_with_url(&id, &url)
            }
            Err(e) => jobs.fail(&id, &rapid_actors::ingest::messages(&e)),
        };
        if let Err(e) = recorded {
            tracing::error!(job_id = id, error = %e, "could not record a query job's outcome");
        }
    });
    Ok(job_id)
}

/// The query body, at most `limit` bytes (413 beyond, told from Content-Length when it is sent).
async fn read_query_body(
    req: &HttpRequest,
    mut payload: web::Payload,
    limit: u64,
) -> Result<web::Bytes, Error> {
    use futures_util::StreamExt;
    let too_large = || {
        Error::new(
            rapid_actors::ErrorKind::TooLarge,
            format!("The query body is larger than {limit} bytes (RAPID_QUERY_MAX_BODY_BYTES)"),
        )
    };
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit) {
        return Err(too_large());
    }
    let mut body = web::BytesMut::new();
    while let Some(chunk) = payload.next().await {
        let chunk = chunk.map_err(|e| Error::invalid(format!("Reading the query body: {e}")))?;
        if (body.len() + chunk.len()) as u64 > limit {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body.freeze())
}

#[derive(Debug, serde::Deserialize)]
pub struct LinkQuery {
    expires: i64,
    signature: String,
}

/// `GET /api/results/{name}`: no token; the link's signature and expiry are the authorisation.
#[utoipa::path(get, path = "/api/results/{name}", tag = "queries", security(()),
    params(("name" = String, Path), ("expires" = i64, Query), ("signature" = String, Query)),
    responses(
        (status = 200, description = "The CSV result; the signed link is the authorisation", content_type = "text/csv", body = String),
        (status = 403, description = "The link is not valid or has expired", body = doc::ErrorBody),
        (status = 404, description = "No such result", body = doc::ErrorBody),
    ))]
pub async fn download_result(
    state: web::Data<AppState>,
    path: web::Path<String>,
    link: web::Query<LinkQuery>,
) -> ApiResult<HttpResponse> {
    let name = path.into_inner();
    if !rapid_actors::storage::safe_segment(&name) || !name.ends_with(".csv") {
        return Err(Error::not_found(format!("No result [{name}]")).into());
    }
    state
        .auth
        .verify_link(&name, link.expires, &link.signature)?;
    let file_path = state.registry.storage().results_dir().join(&name);
    let file = tokio::fs::File::open(&file_path).await.map_err(|_| {
        Error::not_found(format!(
            "The result [{name}] is no longer available: run the query again"
        ))
    })?;
    Ok(HttpResponse::Ok()
        .content_type("text/csv; charset=utf-8")
        .insert_header((
            header::CONTENT_DISPOSITION,
            format!("attachment; filename=\"{name}\""),
        ))
        .streaming(tokio_util::io::ReaderStream::with_capacity(
            file,
            256 * 1024,
        )))
}
