//! `POST /sql`: one SELECT over the datasets the caller may read, named
//! `"{layer}"."{domain}"."{dataset}"` (docs/API.md, "Growth, SQL"), answered as `/query` is.

use actix_web::{web, HttpRequest, HttpResponse};

use super::queries::accepted_format;
use crate::answers as doc;
use crate::auth::{AnySubject, Authorized};
use crate::error::ApiResult;
use crate::state::AppState;

/// The statement to run.
#[derive(Debug, serde::Deserialize, utoipa::ToSchema)]
#[schema(example = json!({"sql": "SELECT city, count(*) AS n FROM \"default\".\"demo\".\"visits\" GROUP BY city"}))]
pub(crate) struct SqlRequest {
    /// One SELECT (or EXPLAIN). A dataset's latest schema version is
    /// `"{layer}"."{domain}"."{dataset}"`, an older one `"{layer}"."{domain}"."{dataset}@v{n}"`.
    pub sql: String,
}

/// Admitted to the sync pool; parsed (read-only), planned and run on the query threads within
/// the sync time limit; more than 100,000 rows is a 400.
#[utoipa::path(post, path = "/api/sql", tag = "queries",
    request_body(content = SqlRequest, content_type = "application/json"),
    responses(
        (status = 200, description = "The rows, in the format the Accept header asks for; only datasets the caller may read exist", content(
            (doc::QueryRows = "application/json"),
            (String = "text/csv"),
            (Vec<u8> = "application/vnd.apache.arrow.stream"),
            (Vec<u8> = "application/vnd.apache.parquet"),
        )),
        (status = 400, description = "Not one SELECT, a statement that writes, an unknown table, or too many rows", body = doc::ErrorBody),
    ))]
pub(crate) async fn run_sql(
    caller: Authorized<AnySubject>,
    state: web::Data<AppState>,
    req: HttpRequest,
    body: web::Json<SqlRequest>,
) -> ApiResult<HttpResponse> {
    let format = accepted_format(&req)?;
    let (content_type, bytes) = state
        .engine
        .sql(&caller.pass, body.into_inner().sql, format)
        .await?;
    Ok(HttpResponse::Ok().content_type(content_type).body(bytes))
}

/// `POST /sql/large`: the statement is checked and planned now (400 for a bad one), then a QUERY
/// job writes the whole result as CSV; the finished job's `result_url` downloads it. The job
/// names no dataset (a statement may read several): empty layer, domain and dataset.
#[utoipa::path(post, path = "/api/sql/large", tag = "queries",
    request_body(content = SqlRequest, content_type = "application/json"),
    responses(
        (status = 202, description = "A QUERY job; when it succeeds its result_url downloads the CSV", body = doc::QueryJobAccepted),
        (status = 400, description = "Not one SELECT, a statement that writes, or an unknown table", body = doc::ErrorBody),
    ))]
pub(crate) async fn run_sql_large(
    caller: Authorized<AnySubject>,
    state: web::Data<AppState>,
    req: HttpRequest,
    body: web::Json<SqlRequest>,
) -> ApiResult<HttpResponse> {
    let base_url = state.link_origin(&req);
    let job_id = state
        .engine
        .start_large_sql(&caller.pass, body.into_inner().sql, &base_url)
        .await?;
    Ok(HttpResponse::Accepted().json(doc::QueryJobAccepted::new(job_id)))
}
