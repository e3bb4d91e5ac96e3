//! The audit log over HTTP (docs/API.md, "Policies, audit, events, MCP"): its rows, oldest
//! first, narrowed by subject, dataset, action, front and time, paged by the last id seen.

use actix_web::{web, HttpResponse};
use rapid_actors::audit::{AuditFilter, AuditRecord, Front, MAX_AUDIT_PAGE};
use rapid_actors::Error;
use serde::Deserialize;

use crate::answers as doc;
use crate::auth::{AuditReader, Authorized};
use crate::error::ApiResult;
use crate::state::AppState;

/// The rows of a page when `limit` is not given.
const DEFAULT_PAGE: usize = 100;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AuditQuery {
    subject_id: Option<String>,
    layer: Option<String>,
    domain: Option<String>,
    dataset: Option<String>,
    action: Option<String>,
    front: Option<String>,
    since: Option<String>,
    until: Option<String>,
    after: Option<i64>,
    limit: Option<usize>,
}

impl AuditQuery {
    fn filter(self) -> Result<AuditFilter, Error> {
        let front = match self.front.as_deref() {
            None => None,
            Some(f) => Some(Front::parse(f).ok_or_else(|| {
                Error::invalid(format!(
                    "Unknown front {f:?}: one of http, sql, pg, web, mcp, job"
                ))
            })?),
        };
        let limit = self.limit.unwrap_or(DEFAULT_PAGE);
        if limit == 0 || limit > MAX_AUDIT_PAGE {
            return Err(Error::invalid(format!(
                "`limit` must be between 1 and {MAX_AUDIT_PAGE}"
            )));
        }
        Ok(AuditFilter {
            subject_id: self.subject_id,
            layer: self.layer,
            domain: self.domain,
            dataset: self.dataset,
            action: self.action,
            front,
            since: rapid_actors::audit::time_bound("since", self.since)?,
            until: rapid_actors::audit::time_bound("until", self.until)?,
            after: self.after,
            limit,
        })
    }
}

/// The audit log's rows, oldest first (USER_ADMIN or DATA_ADMIN).
#[utoipa::path(get, path = "/api/audit", tag = "audit",
    params(
        ("subject_id" = Option<String>, Query), ("layer" = Option<String>, Query),
        ("domain" = Option<String>, Query), ("dataset" = Option<String>, Query),
        ("action" = Option<String>, Query, description = "As recorded, e.g. `POST /api/datasets/{layer}/{domain}/{dataset}/query`"),
        ("front" = Option<Front>, Query, description = "Where the requests came in"),
        ("since" = Option<String>, Query, format = DateTime, description = "RFC 3339 time (or a date, 2026-11-29), inclusive"),
        ("until" = Option<String>, Query, format = DateTime, description = "RFC 3339 time (or a date), exclusive"),
        ("after" = Option<i64>, Query, description = "The last id seen: the rows after it"),
        ("limit" = Option<usize>, Query, minimum = 1, maximum = 1000, description = "Rows at most; 100 when absent")),
    responses(
        (status = 200, description = "The rows, oldest first", body = Vec<AuditRecord>),
        (status = 400, description = "A bad front, time or limit", body = doc::ErrorBody),
        (status = 403, description = "Neither USER_ADMIN nor DATA_ADMIN", body = doc::ErrorBody),
    ))]
pub(crate) async fn get_audit(
    reader: Authorized<AuditReader>,
    state: web::Data<AppState>,
    query: web::Query<AuditQuery>,
) -> ApiResult<HttpResponse> {
    let filter = query.into_inner().filter()?;
    let engine = state.engine.clone();
    let rows = web::block(move || engine.audit_events(&reader.pass, filter))
        .await
        .map_err(|e| Error::internal(format!("reading the audit log: {e}")))??;
    Ok(HttpResponse::Ok().json(rows))
}
