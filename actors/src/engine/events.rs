//! Change events as use cases (docs/API.md, "Webhooks", "Pull feed"): the pull feed for any
//! subject (the events of datasets it may read), and webhook subscriptions for DATA_ADMIN.

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use super::Engine;
use crate::auth::pass::{AdminPass, SubjectPass};
use crate::catalog::{DeliveryRow, WebhookRow};
use crate::error::{Error, Result};
use crate::events::delivery::{interest_of, Dispatcher};
use crate::events::receivers::ReceiverRule;
use crate::events::{cloud_event, visible_to, Interest, EVENT_TYPES, MAX_FEED_PAGE};

/// What the engine holds for events.
pub(super) struct EventsState {
    /// Dropped with the last engine handle, which stops the loop.
    #[allow(dead_code)]
    pub(super) dispatcher: Dispatcher,
    pub(super) receivers: Arc<ReceiverRule>,
}

/// Feed rows read per page at most, visible or not: a subject that may see few events still
/// gets an answer (and a cursor further on) in bounded time.
const SCAN_FACTOR: usize = 10;
/// Deliveries shown with a webhook.
const SHOWN_DELIVERIES: usize = 100;

/// One page of the pull feed.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EventPage {
    /// CloudEvents 1.0 objects, oldest first.
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<Object>))]
    pub events: Vec<Value>,
    /// Pass as `after` for the next page (it moves past events this subject may not see too).
    pub next: i64,
}

/// A subscription as the API shows it (never its secret).
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WebhookView {
    pub id: String,
    pub url: String,
    pub events: Vec<String>,
    pub datasets: Vec<String>,
    pub created_by: String,
    pub created_at: String,
    /// Deliveries by state (with one webhook's details only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counts: Option<DeliveryCounts>,
    /// The newest deliveries, newest first (with one webhook's details only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deliveries: Option<Vec<DeliveryView>>,
}

#[derive(Debug, Default, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DeliveryCounts {
    pub pending: usize,
    pub delivered: usize,
    pub dead: usize,
}

#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DeliveryView {
    pub event_id: String,
    /// PENDING, DELIVERED or DEAD (retried for the whole retry period; redeliver on demand).
    pub state: String,
    pub attempts: i64,
    pub last_status: Option<i64>,
    pub last_error: Option<String>,
    /// When the next attempt is due (pending only), RFC 3339.
    pub next_attempt_at: Option<String>,
    pub done_at: Option<String>,
}

/// A new subscription's answer: its secret is shown this once.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NewWebhook {
    pub id: String,
    pub secret: String,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct WebhookBody {
    url: String,
    events: Vec<String>,
    datasets: Vec<String>,
}

fn view(hook: &WebhookRow) -> WebhookView {
    let interest = interest_of(hook).unwrap_or(Interest {
        events: vec![],
        datasets: vec![],
    });
    WebhookView {
        id: hook.id.clone(),
        url: hook.url.clone(),
        events: interest.events,
        datasets: interest.datasets,
        created_by: hook.created_by.clone(),
        created_at: hook.created_at.clone(),
        counts: None,
        deliveries: None,
    }
}

fn delivery_view(d: &DeliveryRow) -> DeliveryView {
    let time = |ms: i64| {
        chrono::DateTime::from_timestamp_millis(ms)
            .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
    };
    DeliveryView {
        event_id: d.event_id.to_string(),
        state: d.state.as_str().to_string(),
        attempts: d.attempts,
        last_status: d.last_status,
        last_error: d.last_error.clone(),
        next_attempt_at: match d.state {
            crate::catalog::DeliveryState::Pending => time(d.next_at),
            _ => None,
        },
        done_at: d.done_at.clone(),
    }
}

/// Checks a subscription's lists: known event types (or `"*"`), datasets as
/// `{layer}/{domain}/{dataset}` (or `"*"`), neither empty.
fn checked_interest(events: Vec<String>, datasets: Vec<String>) -> Result<Interest> {
    if events.is_empty() || datasets.is_empty() || events.len() > 64 || datasets.len() > 1000 {
        return Err(Error::invalid(
            "`events` and `datasets` each need at least one entry (\"*\" for all)",
        ));
    }
    if let Some(bad) = events
        .iter()
        .find(|e| *e != "*" && !EVENT_TYPES.contains(&e.as_str()))
    {
        return Err(Error::invalid(format!(
            "Unknown event type {bad:?}: one of {}, or \"*\"",
            EVENT_TYPES.join(", ")
        )));
    }
    if let Some(bad) = datasets
        .iter()
        .find(|d| *d != "*" && (d.split('/').count() != 3 || d.split('/').any(str::is_empty)))
    {
        return Err(Error::invalid(format!(
            "{bad:?} is not a dataset: write \"{{layer}}/{{domain}}/{{dataset}}\" or \"*\""
        )));
    }
    Ok(Interest { events, datasets })
}

impl Engine {
    /// The pull feed: events after position `after` that `pass`'s subject may see, at most
    /// `limit`, oldest first; `origin` makes their `source` absolute.
    pub fn events(
        &self,
        pass: &SubjectPass,
        after: i64,
        limit: usize,
        origin: &str,
    ) -> Result<EventPage> {
        if limit == 0 || limit > MAX_FEED_PAGE {
            return Err(Error::invalid(format!(
                "`limit` must be between 1 and {MAX_FEED_PAGE}"
            )));
        }
        if after < 0 {
            return Err(Error::invalid("`after` is a position: 0 or more"));
        }
        // On a shared catalog events are positioned by the delivery loop; doing it here too
        // makes a commit acknowledged to this client visible in its next read.
        self.catalog.sequence_events()?;
        let subject = pass.subject();
        let mut events = Vec::new();
        let mut next = after;
        let mut scanned = 0;
        while events.len() < limit && scanned < limit * SCAN_FACTOR {
            let batch = self.catalog.events_after(next, limit)?;
            let Some(last) = batch.last() else { break };
            scanned += batch.len();
            for event in &batch {
                next = event.position;
                if visible_to(subject, event) {
                    events.push(cloud_event(event, origin));
                    if events.len() == limit {
                        break;
                    }
                }
            }
            if batch.len() < limit && next == last.position {
                break;
            }
        }
        Ok(EventPage { events, next })
    }

    /// Subscribes `url` to `events` of `datasets`; answers the id and the secret (shown once).
    /// The events delivered are those its maker may see, at delivery time.
    pub fn create_webhook(&self, pass: &AdminPass, body: &[u8]) -> Result<NewWebhook> {
        let body: WebhookBody = serde_json::from_slice(body).map_err(|e| {
            Error::invalid(format!(
                "The body must be {{\"url\", \"events\": [...], \"datasets\": [...]}}: {e}"
            ))
        })?;
        self.events.receivers.check_url(&body.url)?;
        let interest = checked_interest(body.events, body.datasets)?;
        let secret = crate::events::signing::new_secret()?;
        let id = format!("wh_{}", uuid::Uuid::new_v4().simple());
        let json = |v: &Vec<String>| serde_json::to_string(v).unwrap_or_default();
        self.catalog.create_webhook(&WebhookRow {
            id: id.clone(),
            url: body.url,
            events: json(&interest.events),
            datasets: json(&interest.datasets),
            secret: secret.clone(),
            created_by: pass.subject().id.clone(),
            created_at: String::new(),
            after_event: 0,
        })?;
        Ok(NewWebhook { id, secret })
    }

    /// Every subscription.
    pub fn webhooks(&self, _: &AdminPass) -> Result<Vec<WebhookView>> {
        Ok(self.catalog.webhooks()?.iter().map(view).collect())
    }

    /// One subscription with its delivery state; 404 when there is none.
    pub fn webhook(&self, _: &AdminPass, id: &str) -> Result<WebhookView> {
        let hook = self.find_webhook(id)?;
        let deliveries = self.catalog.deliveries(id, usize::MAX >> 1)?;
        let mut counts = DeliveryCounts::default();
        for d in &deliveries {
            match d.state {
                crate::catalog::DeliveryState::Pending => counts.pending += 1,
                crate::catalog::DeliveryState::Delivered => counts.delivered += 1,
                crate::catalog::DeliveryState::Dead => counts.dead += 1,
            }
        }
        let mut shown = view(&hook);
        shown.counts = Some(counts);
        shown.deliveries = Some(
            deliveries
                .iter()
                .take(SHOWN_DELIVERIES)
                .map(delivery_view)
                .collect(),
        );
        Ok(shown)
    }

    /// Removes a subscription and what it was owed; 404 when there is none.
    pub fn delete_webhook(&self, _: &AdminPass, id: &str) -> Result<()> {
        match self.catalog.delete_webhook(id)? {
            true => Ok(()),
            false => Err(no_webhook(id)),
        }
    }

    /// Sends event `event_id` to the subscription again (a dead one, or any it may see).
    pub fn redeliver(&self, pass: &AdminPass, id: &str, event_id: &str) -> Result<()> {
        let hook = self.find_webhook(id)?;
        let event = event_id
            .parse::<i64>()
            .ok()
            .map(|n| self.catalog.event(n))
            .transpose()?
            .flatten()
            .filter(|e| visible_to(pass.subject(), e))
            .ok_or_else(|| Error::not_found(format!("No event {event_id:?} to redeliver")))?;
        let now = chrono::Utc::now().timestamp_millis();
        self.catalog.redeliver(&hook.id, event.id, now)?;
        Ok(())
    }

    fn find_webhook(&self, id: &str) -> Result<WebhookRow> {
        self.catalog
            .webhooks()?
            .into_iter()
            .find(|h| h.id == id)
            .ok_or_else(|| no_webhook(id))
    }
}

fn no_webhook(id: &str) -> Error {
    Error::not_found(format!("No webhook {id:?}"))
}
