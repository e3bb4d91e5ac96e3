//! Change events over HTTP (docs/API.md, "Webhooks", "Pull feed"): webhook subscriptions for
//! DATA_ADMIN, and the pull feed for any subject (the events of datasets it may read).

use actix_web::{web, HttpRequest, HttpResponse};
use rapid_actors::engine::{CommitRange, EventPage, NewWebhook, WebhookView};
use rapid_actors::Error;
use serde::Deserialize;

use super::queries::accepted_format;
use crate::answers as doc;
use crate::auth::{AnySubject, Authorized, DataAdmin, DatasetAccess, Read};
use crate::error::ApiResult;
use crate::state::AppState;

const DEFAULT_PAGE: usize = 100;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FeedQuery {
    after: Option<i64>,
    limit: Option<usize>,
}

#[utoipa::path(get, path = "/api/events", tag = "events",
    params(
        ("after" = Option<i64>, Query, minimum = 0, description = "The `next` of the previous page (absent: from the start)"),
        ("limit" = Option<usize>, Query, minimum = 1, maximum = 1000, description = "Events per page, 1 to 1000 (default 100)"),
    ),
    responses(
        (status = 200, description = "CloudEvents 1.0 objects of datasets the caller may read, oldest first, and the cursor of the next page", body = EventPage),
        (status = 400, description = "A bad `after` or `limit`", body = doc::ErrorBody),
    ))]
pub(crate) async fn get_events(
    caller: Authorized<AnySubject>,
    state: web::Data<AppState>,
    req: HttpRequest,
    query: web::Query<FeedQuery>,
) -> ApiResult<HttpResponse> {
    let origin = state.link_origin(&req);
    let engine = state.engine.clone();
    let FeedQuery { after, limit } = query.into_inner();
    let page = web::block(move || {
        engine.events(
            &caller.pass,
            after.unwrap_or(0),
            limit.unwrap_or(DEFAULT_PAGE),
            &origin,
        )
    })
    .await
    .map_err(|e| Error::internal(format!("reading events: {e}")))??;
    Ok(HttpResponse::Ok().json(page))
}

#[utoipa::path(post, path = "/api/webhooks", tag = "events",
    request_body(content = Object, description = "{\"url\", \"events\": [types or \"*\"], \"datasets\": [\"{layer}/{domain}/{dataset}\" or \"*\"]}",
        example = json!({"url": "https://hooks.example.com/rapid", "events": ["dataset.committed"], "datasets": ["default/demo/visits"]})),
    responses(
        (status = 201, description = "The subscription; its signing secret is shown this once (DATA_ADMIN)", body = NewWebhook),
        (status = 400, description = "A bad URL, a refused receiver address, an unknown event type or dataset form", body = doc::ErrorBody),
    ))]
pub(crate) async fn create_webhook(
    admin: Authorized<DataAdmin>,
    state: web::Data<AppState>,
    body: web::Bytes,
) -> ApiResult<HttpResponse> {
    let made = state.engine.create_webhook(&admin.pass, &body)?;
    Ok(HttpResponse::Created().json(made))
}

#[utoipa::path(get, path = "/api/webhooks", tag = "events",
    responses((status = 200, description = "Every subscription, without secrets (DATA_ADMIN)", body = Vec<WebhookView>)))]
pub(crate) async fn list_webhooks(
    admin: Authorized<DataAdmin>,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    Ok(HttpResponse::Ok().json(state.engine.webhooks(&admin.pass)?))
}

#[utoipa::path(get, path = "/api/webhooks/{id}", tag = "events",
    params(("id" = String, Path)),
    responses(
        (status = 200, description = "The subscription with its delivery counts and newest deliveries (DATA_ADMIN)", body = WebhookView),
        (status = 404, description = "No such webhook", body = doc::ErrorBody),
    ))]
pub(crate) async fn get_webhook(
    admin: Authorized<DataAdmin>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    Ok(HttpResponse::Ok().json(state.engine.webhook(&admin.pass, &id)?))
}

#[utoipa::path(delete, path = "/api/webhooks/{id}", tag = "events",
    params(("id" = String, Path)),
    responses(
        (status = 204, description = "Removed, with what it was still owed (DATA_ADMIN)"),
        (status = 404, description = "No such webhook", body = doc::ErrorBody),
    ))]
pub(crate) async fn delete_webhook(
    admin: Authorized<DataAdmin>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    state.engine.delete_webhook(&admin.pass, &id)?;
    Ok(HttpResponse::NoContent().finish())
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RedeliverQuery {
    event_id: String,
}

#[utoipa::path(post, path = "/api/webhooks/{id}/redeliver", tag = "events",
    params(("id" = String, Path), ("event_id" = String, Query, description = "The event's id (CloudEvents `id`)")),
    responses(
        (status = 202, description = "The event is due for the webhook again (DATA_ADMIN)"),
        (status = 404, description = "No such webhook, or no such event visible to the caller", body = doc::ErrorBody),
    ))]
pub(crate) async fn redeliver(
    admin: Authorized<DataAdmin>,
    state: web::Data<AppState>,
    id: web::Path<String>,
    query: web::Query<RedeliverQuery>,
) -> ApiResult<HttpResponse> {
    state.engine.redeliver(&admin.pass, &id, &query.event_id)?;
    Ok(HttpResponse::Accepted().finish())
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ChangesQuery {
    version: Option<i64>,
    from_commit: Option<i64>,
    to_commit: Option<i64>,
}

#[utoipa::path(get, path = "/api/datasets/{layer}/{domain}/{dataset}/changes", tag = "events",
    params(("layer" = String, Path, example = "default"), ("domain" = String, Path, example = "demo"),
        ("dataset" = String, Path, example = "visits"),
        ("version" = Option<i64>, Query, description = "Schema version; absent, 0 or less: the latest"),
        ("from_commit" = Option<i64>, Query, minimum = 1, description = "The first commit (default: the oldest whose changes are kept)"),
        ("to_commit" = Option<i64>, Query, minimum = 1, description = "The last commit (default: the newest); at most 100 commits a call")),
    responses(
        (status = 200, description = "The rows the commits changed, as the caller may see them (READ access): the dataset's columns, `_change_type` (`delete` or `insert`) and `_commit`; in commit order, a commit's deletes first. Every row of a file a commit removed is a delete, every row of one it added an insert; compactions change no row", content(
            (doc::QueryRows = "application/json"),
            (String = "text/csv"),
            (Vec<u8> = "application/vnd.apache.arrow.stream"),
            (Vec<u8> = "application/vnd.apache.parquet"),
        )),
        (status = 400, description = "Commits outside the kept history, in the wrong order, more than 100, or more rows than a synchronous answer holds", body = doc::ErrorBody),
        (status = 404, description = "No such dataset or version", body = doc::ErrorBody),
    ))]
pub(crate) async fn get_changes(
    access: DatasetAccess<Read>,
    state: web::Data<AppState>,
    req: HttpRequest,
    query: web::Query<ChangesQuery>,
) -> ApiResult<HttpResponse> {
    let format = accepted_format(&req)?;
    let range = CommitRange {
        from: query.from_commit,
        to: query.to_commit,
    };
    let (content_type, bytes) = state
        .engine
        .changes(access.pass, query.version, range, format)
        .await?;
    Ok(HttpResponse::Ok().content_type(content_type).body(bytes))
}
