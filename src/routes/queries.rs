//! `POST /datasets/{layer}/{domain}/{dataset}/query`: small results, synchronously.

use actix_web::http::header;
use actix_web::{web, HttpRequest, HttpResponse};
pub(crate) use rapid_actors::engine::OutputFormat as Format;
use rapid_actors::Error;

use crate::answers as doc;
use crate::auth::{AnySubject, Authorized, DatasetAccess, Read};
use crate::error::ApiResult;
use crate::params::{QueryAt, COMMIT_HEADER};
use crate::state::AppState;

/// The answer's format from the request's Accept header (see [`negotiate`]).
pub(crate) fn accepted_format(req: &HttpRequest) -> Result<Format, Error> {
    negotiate(
        req.headers()
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok()),
    )
}

/// From the Accept header: missing, `*/*` or a browser-style list mean JSON.
pub(crate) fn negotiate(accept: Option<&str>) -> Result<Format, Error> {
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

/// Admitted to the sync pool, then everything (parse, check, plan, run, render) on the query
/// threads within the sync time limit.
#[utoipa::path(post, path = "/api/datasets/{layer}/{domain}/{dataset}/query", tag = "queries",
    params(("layer" = String, Path, example = "default"), ("domain" = String, Path, example = "demo"), ("dataset" = String, Path, example = "visits"), ("version" = Option<i64>, Query, description = "Schema version; absent, 0 or less: the latest"), ("as_of_commit" = Option<i64>, Query, description = "Read the version as it was at this commit (GET .../history lists them); absent: the newest"), ("as_of" = Option<String>, Query, description = "Read the version as it was at this RFC 3339 time (its newest commit then); not with as_of_commit")),
    request_body(content = doc::QueryRequest, description = "The query (a JSON object, not null); an empty body: every row", content_type = "application/json"),
    responses(
        (status = 200, description = "The rows (READ access), in the format the Accept header asks for; header X-Rapid-Commit names the commit read", headers(("X-Rapid-Commit" = i64, description = "The commit read (0: the version has none yet)")), content(
            (doc::QueryRows = "application/json"),
            (String = "text/csv"),
            (Vec<u8> = "application/vnd.apache.arrow.stream"),
            (Vec<u8> = "application/vnd.apache.parquet"),
        )),
        (status = 400, description = "A bad query, or as_of_commit and as_of both given, or as_of not an RFC 3339 time", body = doc::ErrorBody),
        (status = 404, description = "No such dataset or version, no such commit (or none at or before as_of), or a commit past history retention", body = doc::ErrorBody),
    ))]
pub(crate) async fn query_dataset(
    access: DatasetAccess<Read>,
    state: web::Data<AppState>,
    query: web::Query<QueryAt>,
    req: HttpRequest,
    payload: web::Payload,
) -> ApiResult<HttpResponse> {
    let format = accepted_format(&req)?;
    let at = query.at()?;
    let body = read_query_body(&req, payload, state.query_max_body_bytes).await?;
    let (content_type, bytes, commit) = state
        .engine
        .query(access.pass, query.version, at, body, format)
        .await?;
    Ok(HttpResponse::Ok()
        .content_type(content_type)
        .insert_header((COMMIT_HEADER, commit.to_string()))
        .body(bytes))
}

#[derive(Debug, serde::Deserialize)]
pub(crate) struct InfoQuery {
    version: Option<i64>,
}

#[utoipa::path(get, path = "/api/datasets/{layer}/{domain}/{dataset}/info", tag = "datasets",
    params(("layer" = String, Path, example = "default"), ("domain" = String, Path, example = "demo"), ("dataset" = String, Path, example = "visits"), ("version" = Option<i64>, Query, description = "Schema version; absent, 0 or less: the latest")),
    responses(
        (status = 200, description = "Schema and figures (READ access)", body = doc::DatasetInfo),
        (status = 404, description = "No such dataset or version, or no data", body = doc::ErrorBody),
    ))]
pub(crate) async fn get_dataset_info(
    access: DatasetAccess<Read>,
    state: web::Data<AppState>,
    query: web::Query<InfoQuery>,
) -> ApiResult<HttpResponse> {
    let info = state.engine.info(&access.pass, query.version).await?;
    Ok(HttpResponse::Ok().json(info))
}

#[derive(Debug, serde::Deserialize)]
pub(crate) struct ListQuery {
    #[serde(default)]
    enriched: bool,
}

/// Any subject may list; PROTECTED datasets show only to those with access to them.
#[utoipa::path(post, path = "/api/datasets", tag = "datasets",
    params(("enriched" = Option<bool>, Query, description = "Add description and last_updated_date")),
    request_body(content = doc::DatasetFilter, description = "Filters (a JSON object, not null); an empty body: every dataset", content_type = "application/json"),
    responses(
        (status = 200, description = "The latest version of every dataset the caller may see", body = Vec<doc::DatasetEntry>),
    ))]
pub(crate) async fn list_datasets(
    caller: Authorized<AnySubject>,
    state: web::Data<AppState>,
    query: web::Query<ListQuery>,
    body: web::Bytes,
) -> ApiResult<HttpResponse> {
    let text = body.trim_ascii();
    let filter: rapid_actors::engine::DatasetFilter = if text.is_empty() {
        Default::default()
    } else if text.starts_with(b"[") {
        // serde would read an array as the filter's fields in order; the document says object.
        return Err(
            Error::invalid("Invalid dataset filter: the body must be a JSON object").into(),
        );
    } else {
        serde_json::from_slice(text)
            .map_err(|e| Error::invalid(format!("Invalid dataset filter: {e}")))?
    };
    let list = state.engine.list(&caller.pass, &filter, query.enriched)?;
    Ok(HttpResponse::Ok().json(list))
}

/// `POST .../query/large`: 202 with a QUERY job that writes the whole result as CSV; the finished
/// job's `result_url` downloads it without a token until it expires.
#[utoipa::path(post, path = "/api/datasets/{layer}/{domain}/{dataset}/query/large", tag = "queries",
    params(("layer" = String, Path, example = "default"), ("domain" = String, Path, example = "demo"), ("dataset" = String, Path, example = "visits"), ("version" = Option<i64>, Query, description = "Schema version; absent, 0 or less: the latest"), ("as_of_commit" = Option<i64>, Query, description = "Read the version as it was at this commit (GET .../history lists them); absent: the newest"), ("as_of" = Option<String>, Query, description = "Read the version as it was at this RFC 3339 time (its newest commit then); not with as_of_commit")),
    request_body(content = doc::QueryRequest, description = "The query (a JSON object, not null); an empty body: every row", content_type = "application/json"),
    responses(
        (status = 202, description = "A QUERY job; when it succeeds its result_url downloads the CSV; header X-Rapid-Commit names the commit it reads", body = doc::QueryJobAccepted, headers(("X-Rapid-Commit" = i64, description = "The commit read (0: the version has none yet)"))),
        (status = 400, description = "A bad query, or as_of_commit and as_of both given, or as_of not an RFC 3339 time", body = doc::ErrorBody),
        (status = 404, description = "No such dataset or version, no such commit (or none at or before as_of), or a commit past history retention", body = doc::ErrorBody),
    ))]
pub(crate) async fn query_dataset_large(
    access: DatasetAccess<Read>,
    state: web::Data<AppState>,
    query: web::Query<QueryAt>,
    req: HttpRequest,
    payload: web::Payload,
) -> ApiResult<HttpResponse> {
    let at = query.at()?;
    let body = read_query_body(&req, payload, state.query_max_body_bytes).await?;
    let base_url = state.link_origin(&req);
    let (job_id, commit) = state
        .engine
        .start_large_query(access.pass, query.version, at, body, &base_url)
        .await?;
    Ok(HttpResponse::Accepted()
        .insert_header((COMMIT_HEADER, commit.to_string()))
        .json(doc::QueryJobAccepted::new(job_id)))
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
pub(crate) struct LinkQuery {
    expires: i64,
    signature: String,
    /// What the reader was allowed when the result was made (a query job's links).
    bound: Option<String>,
}

/// `GET /api/results/{name}`: no token; the link's signature and expiry are the authorisation.
#[utoipa::path(get, path = "/api/results/{name}", tag = "queries", security(()),
    params(("name" = String, Path), ("expires" = i64, Query), ("signature" = String, Query),
        ("bound" = Option<String>, Query, description = "A query job's link: what its reader was allowed, checked again at download")),
    responses(
        (status = 200, description = "The result: a large query's CSV, or a refused upload's report (`-problems.csv`, `-problems.parquet`); the signed link is the authorisation", content(
            (String = "text/csv"),
            (Vec<u8> = "application/vnd.apache.parquet"),
        )),
        (status = 403, description = "The link is not valid or has expired, or (a large query's or a SQL job's link) its reader may no longer read what it read: a revoked permission, a deleted subject, a policy set, changed or removed since", body = doc::ErrorBody),
        (status = 404, description = "No such result", body = doc::ErrorBody),
    ))]
pub(crate) async fn download_result(
    state: web::Data<AppState>,
    path: web::Path<String>,
    link: web::Query<LinkQuery>,
) -> ApiResult<HttpResponse> {
    let name = path.into_inner();
    let stream = state
        .engine
        .result(&name, link.expires, &link.signature, link.bound.as_deref())
        .await?;
    let content_type = if name.ends_with(".parquet") {
        "application/vnd.apache.parquet"
    } else {
        "text/csv; charset=utf-8"
    };
    Ok(HttpResponse::Ok()
        .content_type(content_type)
        .insert_header((
            header::CONTENT_DISPOSITION,
            format!("attachment; filename=\"{name}\""),
        ))
        .streaming(stream))
}
