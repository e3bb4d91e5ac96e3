//! Change events (docs/API.md, "Webhooks", "Pull feed"): what the catalog's outbox records of
//! every change, who may see each event, its CloudEvents 1.0 form, webhook subscriptions with
//! their Standard Webhooks signatures, and the delivery loop ([`delivery`]).
//!
//! The outbox rows are written by the catalog in the change's own transaction
//! (`catalog::sqlite::events`), so an event exists exactly when its change does; delivery reads
//! them afterwards, at least once, retried with backoff.

pub mod delivery;
pub mod receivers;
pub mod signing;

use std::str::FromStr;

use serde_json::{json, Map, Value};

use crate::auth::permission::{Access, Permission};
use crate::auth::Subject;
use crate::catalog::EventRow;
use crate::sensitivity::Sensitivity;

/// Every event type, as API.md names them.
pub const EVENT_TYPES: [&str; 10] = [
    "dataset.committed",
    "upload.rejected",
    "upload.quarantined",
    "schema.created",
    "schema.updated",
    "dataset.rolled_back",
    "dataset.erased",
    "dataset.deleted",
    "permission.changed",
    "policy.changed",
];

/// The most events one feed page answers.
pub const MAX_FEED_PAGE: usize = 1000;

/// Whether `subject` may see `event`: a dataset's events go to those who may read the dataset
/// (by its layer, domain and sensitivity when the event was written); a subject's permission
/// change to USER_ADMIN holders. An event naming no sensitivity (an upload refused for a dataset
/// that does not exist) is shown to no reader.
pub fn visible_to(subject: &Subject, event: &EventRow) -> bool {
    if event.kind == "permission.changed" {
        return subject.has(&Permission::UserAdmin);
    }
    let (Some(layer), Some(domain), Some(sensitivity)) =
        (&event.layer, &event.domain, &event.sensitivity)
    else {
        return false;
    };
    let Ok(sensitivity) = Sensitivity::from_str(sensitivity) else {
        return false;
    };
    subject
        .permissions
        .iter()
        .any(|p| p.grants(Access::Read, sensitivity, layer, domain))
}

/// `{layer}/{domain}/{dataset}` of a dataset's event.
pub fn dataset_path(event: &EventRow) -> Option<String> {
    match (&event.layer, &event.domain, &event.dataset) {
        (Some(l), Some(d), Some(s)) => Some(format!("{l}/{d}/{s}")),
        _ => None,
    }
}

/// The event as a CloudEvents 1.0 JSON object (structured mode). `origin` is the service's
/// public URL when known (the `source` is then absolute; otherwise a URI reference).
pub fn cloud_event(event: &EventRow, origin: &str) -> Value {
    let path = dataset_path(event);
    let source = match (&path, &event.about) {
        (Some(p), _) => format!("{origin}/api/datasets/{p}"),
        (None, Some(subject)) => format!("{origin}/api/subjects/{subject}"),
        (None, None) => format!("{origin}/api"),
    };
    let mut data = Map::new();
    let mut put = |k: &str, v: Value| {
        if !v.is_null() {
            data.insert(k.to_string(), v);
        }
    };
    put("layer", json!(event.layer));
    put("domain", json!(event.domain));
    put("dataset", json!(event.dataset));
    put("version", json!(event.version));
    put("commit", json!(event.commit));
    put("operation", json!(event.operation));
    put("subject", json!(event.subject));
    if event.kind.starts_with("upload.") {
        put("rows_rejected", json!(event.rows_removed));
    } else {
        put("rows_added", json!(event.rows_added));
        put("rows_removed", json!(event.rows_removed));
    }
    put("job_id", json!(event.job_id));
    put("raw_filename", json!(event.raw_filename));
    put("subject_id", json!(event.about));
    let mut out = json!({
        "specversion": "1.0",
        "id": event.id.to_string(),
        "source": source,
        "type": event.kind,
        "time": event.at,
        "datacontenttype": "application/json",
        "data": data,
    });
    if let Some(p) = path {
        out["subject"] = json!(p);
    }
    out
}

/// What a subscription asks for, checked: event types and datasets (`"*"` for all).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Interest {
    pub events: Vec<String>,
    pub datasets: Vec<String>,
}

impl Interest {
    /// Whether an event of this interest (its type and dataset) is wanted.
    pub fn wants(&self, event: &EventRow) -> bool {
        let kind_ok = self.events.iter().any(|e| e == "*" || *e == event.kind);
        let dataset_ok = self.datasets.iter().any(|d| {
            d == "*"
                || dataset_path(event)
                    .map(|p| p.eq_ignore_ascii_case(d))
                    .unwrap_or(false)
        });
        kind_ok && dataset_ok
    }
}

#[cfg(test)]
mod tests;
