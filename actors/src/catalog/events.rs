//! What the catalog keeps of change events (issue 58): the outbox, written in the same
//! transaction as each change, and the webhooks with their deliveries.

use crate::error::Result;

/// One recorded change. `position` orders the pull feed: in SQLite it is the id (one writer
/// commits in id order); in PostgreSQL it is given once the event's transaction is visible
/// ([`EventsCatalog::sequence_events`]), so a cursor never passes an event committed later
/// with a smaller id.
#[derive(Debug, Clone, PartialEq)]
pub struct EventRow {
    pub id: i64,
    pub position: i64,
    pub at: String,
    /// `dataset.committed`, `upload.rejected`, ... (API.md, "Webhooks").
    pub kind: String,
    pub layer: Option<String>,
    pub domain: Option<String>,
    pub dataset: Option<String>,
    /// The dataset's sensitivity when the event was written (who may see it).
    pub sensitivity: Option<String>,
    pub version: Option<i64>,
    pub commit: Option<i64>,
    pub operation: Option<String>,
    /// The subject that made the change, where the catalog knows it (commits, uploads).
    pub subject: Option<String>,
    pub rows_added: Option<i64>,
    pub rows_removed: Option<i64>,
    pub job_id: Option<String>,
    /// The subject a `permission.changed` is about.
    pub about: Option<String>,
    /// The upload a commit or a refusal is of (as the history names it).
    pub raw_filename: Option<String>,
}

/// A subscription. `events` and `datasets` are JSON arrays of texts as the API took them.
#[derive(Debug, Clone, PartialEq)]
pub struct WebhookRow {
    pub id: String,
    pub url: String,
    pub events: String,
    pub datasets: String,
    /// `whsec_` and the base64 key: the service signs with it, so it is kept, not digested.
    pub secret: String,
    pub created_by: String,
    pub created_at: String,
    /// The newest event position when it was made: it gets only events after it.
    pub after_event: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeliveryState {
    Pending,
    Delivered,
    /// Retried for the whole retry period without success: kept for redelivery on demand.
    Dead,
}

impl DeliveryState {
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryState::Pending => "PENDING",
            DeliveryState::Delivered => "DELIVERED",
            DeliveryState::Dead => "DEAD",
        }
    }

    pub fn parse(text: &str) -> DeliveryState {
        match text {
            "DELIVERED" => DeliveryState::Delivered,
            "DEAD" => DeliveryState::Dead,
            _ => DeliveryState::Pending,
        }
    }
}

/// One event owed to one webhook. Times in milliseconds since the epoch.
#[derive(Debug, Clone, PartialEq)]
pub struct DeliveryRow {
    pub webhook_id: String,
    pub event_id: i64,
    pub state: DeliveryState,
    pub attempts: i64,
    /// When the next attempt is due.
    pub next_at: i64,
    pub last_status: Option<i64>,
    pub last_error: Option<String>,
    /// When the first attempt was made (the retry period counts from it).
    pub first_at: Option<i64>,
    pub done_at: Option<String>,
}

/// The outbox and the webhooks.
pub trait EventsCatalog {
    /// Events after feed position `after`, in feed order, at most `limit`.
    fn events_after(&self, after: i64, limit: usize) -> Result<Vec<EventRow>>;

    /// One event by id.
    fn event(&self, id: i64) -> Result<Option<EventRow>>;

    /// The newest feed position (0 when there is none).
    fn last_event_position(&self) -> Result<i64>;

    /// Gives feed positions to committed events that have none yet; answers how many.
    fn sequence_events(&self) -> Result<usize>;

    /// Stores a subscription; answers the feed position it starts after.
    fn create_webhook(&self, hook: &WebhookRow) -> Result<i64>;

    /// Every subscription, oldest first.
    fn webhooks(&self) -> Result<Vec<WebhookRow>>;

    /// Removes a subscription and its deliveries; false when there was none.
    fn delete_webhook(&self, id: &str) -> Result<bool>;

    /// Turns up to `limit` events not yet fanned out into deliveries for the webhooks `wanted`
    /// names for each, due at `now_ms`, and moves the fan-out past them, in one transaction;
    /// answers how many events it went through.
    fn fan_out(
        &self,
        limit: usize,
        now_ms: i64,
        wanted: &mut dyn FnMut(&EventRow) -> Vec<String>,
    ) -> Result<usize>;

    /// Claims up to `limit` due deliveries for `lease_ms` (another node takes them over once
    /// the lease ends, so a node that dies mid-delivery loses none).
    fn claim_deliveries(
        &self,
        now_ms: i64,
        lease_ms: i64,
        limit: usize,
    ) -> Result<Vec<DeliveryRow>>;

    /// Ends every lease (a single node at start: no attempt of its own is running).
    fn release_claims(&self) -> Result<usize>;

    /// Records an attempt's outcome (state, attempts, next time, status, error) and releases it.
    fn finish_delivery(&self, outcome: &DeliveryRow) -> Result<()>;

    /// A webhook's deliveries, newest event first.
    fn deliveries(&self, webhook_id: &str, limit: usize) -> Result<Vec<DeliveryRow>>;

    /// Makes event `event_id` due again for the webhook now (also when it never had a
    /// delivery); false when there is no such event.
    fn redeliver(&self, webhook_id: &str, event_id: i64, now_ms: i64) -> Result<bool>;
}
