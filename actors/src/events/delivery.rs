//! The delivery loop: one thread per node, on a small runtime of its own, so that neither a slow
//! receiver nor a dead one delays an upload (uploads never wait for it) or another receiver
//! (each attempt is its own task with a time limit; a receiver has at most a few at once).
//!
//! Every 200 ms, or sooner when an attempt ends: events the catalog recorded since the last turn
//! become deliveries for the webhooks that want them ([`crate::catalog::EventsCatalog::fan_out`],
//! one transaction that also moves the fan-out on), then due deliveries are claimed for a lease
//! and attempted. An attempt is done only once its outcome is written: a crash between the
//! receiver's answer and that write sends the event again (at least once; receivers deduplicate
//! by `webhook-id`). A node that dies holding a lease leaves its deliveries to any node once the
//! lease ends; a single node (SQLite) releases its own leases at start.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinSet;

use super::receivers::{CheckedResolver, ReceiverRule};
use super::signing::signature;
use super::{cloud_event, visible_to, Interest};
use crate::auth::Auth;
use crate::catalog::{DeliveryRow, DeliveryState, EventRow, SharedCatalog, WebhookRow};
use crate::error::{Error, Result};

/// How long a claimed delivery is this node's before another may take it.
const LEASE_MS: i64 = 60_000;
/// Attempts in flight on a node, and for one receiver.
const MAX_IN_FLIGHT: usize = 32;
const MAX_PER_RECEIVER: usize = 4;
/// Events turned into deliveries per transaction.
const FAN_OUT_BATCH: usize = 500;
const TURN: Duration = Duration::from_millis(200);
/// The longest wait between two attempts.
const MAX_BACKOFF_MS: i64 = 3_600_000;

/// How deliveries are made.
#[derive(Debug, Clone)]
pub struct DeliverySettings {
    pub rule: Arc<ReceiverRule>,
    /// How long a delivery is retried, from its first attempt, before it is dead.
    pub retry_for: Duration,
    /// One attempt's time limit (connect, send, answer).
    pub timeout: Duration,
    /// The service's public URL, for the events' `source` (empty: relative references).
    pub origin: String,
    /// Whether other nodes deliver from the same catalog (PostgreSQL).
    pub shared: bool,
}

impl Default for DeliverySettings {
    fn default() -> Self {
        DeliverySettings {
            rule: Arc::default(),
            retry_for: Duration::from_secs(24 * 3600),
            timeout: Duration::from_secs(10),
            origin: String::new(),
            shared: false,
        }
    }
}

/// The running loop; stops when dropped.
pub struct Dispatcher {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Dispatcher {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Dispatcher {
    pub fn start(catalog: SharedCatalog, auth: Auth, settings: DeliverySettings) -> Result<Self> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::internal(format!("starting the webhook runtime: {e}")))?;
        let thread = std::thread::Builder::new()
            .name("webhooks".into())
            .spawn(move || {
                let worker = Worker {
                    catalog,
                    auth,
                    settings,
                };
                runtime.block_on(worker.run(flag));
            })
            .map_err(|e| Error::internal(format!("starting the webhook thread: {e}")))?;
        Ok(Dispatcher {
            stop,
            thread: Some(thread),
        })
    }
}

struct Worker {
    catalog: SharedCatalog,
    auth: Auth,
    settings: DeliverySettings,
}

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

impl Worker {
    async fn run(self, stop: Arc<AtomicBool>) {
        let client = match self.client() {
            Ok(c) => c,
            Err(e) => return tracing::error!(error = %e, "webhooks cannot be delivered"),
        };
        if !self.settings.shared {
            if let Err(e) = self.catalog.release_claims() {
                tracing::warn!(error = %e, "releasing webhook deliveries");
            }
        }
        let mut attempts: JoinSet<String> = JoinSet::new();
        let mut per_receiver: HashMap<String, usize> = HashMap::new();
        while !stop.load(Ordering::Relaxed) {
            if let Err(e) = self.turn(&client, &mut attempts, &mut per_receiver) {
                tracing::warn!(error = %e, "webhook delivery turn");
            }
            tokio::select! {
                _ = tokio::time::sleep(TURN) => {}
                Some(done) = attempts.join_next() => {
                    if let Ok(hook) = done {
                        release(&mut per_receiver, &hook);
                    }
                }
            }
            while let Some(done) = attempts.try_join_next() {
                if let Ok(hook) = done {
                    release(&mut per_receiver, &hook);
                }
            }
        }
        // Attempts still running are dropped: their leases end and they are sent again.
        attempts.abort_all();
    }

    fn client(&self) -> Result<reqwest::Client> {
        reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(self.settings.timeout)
            .connect_timeout(self.settings.timeout.min(Duration::from_secs(5)))
            .dns_resolver(Arc::new(CheckedResolver(self.settings.rule.clone())))
            .user_agent(concat!("rapid-rs-webhooks/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| Error::internal(format!("the webhook HTTP client: {e}")))
    }

    fn turn(
        &self,
        client: &reqwest::Client,
        attempts: &mut JoinSet<String>,
        per_receiver: &mut HashMap<String, usize>,
    ) -> Result<()> {
        self.catalog.sequence_events()?;
        let hooks: HashMap<String, WebhookRow> = self
            .catalog
            .webhooks()?
            .into_iter()
            .map(|h| (h.id.clone(), h))
            .collect();
        // No subscription: no catalog write every turn. A later one is owed only events after
        // it (`after_event`), so the fan-out skips what piled up meanwhile.
        if hooks.is_empty() {
            return Ok(());
        }
        self.fan_out(&hooks)?;
        let room = MAX_IN_FLIGHT.saturating_sub(attempts.len());
        if room == 0 {
            return Ok(());
        }
        let now = now_ms();
        for delivery in self.catalog.claim_deliveries(now, LEASE_MS, room)? {
            let Some(hook) = hooks.get(&delivery.webhook_id) else {
                continue; // deleted meanwhile: its deliveries went with it
            };
            let busy = per_receiver.entry(hook.id.clone()).or_default();
            if *busy >= MAX_PER_RECEIVER {
                // Back in the queue, untried: this receiver has enough attempts running.
                let mut later = delivery.clone();
                later.next_at = now + TURN.as_millis() as i64;
                self.catalog.finish_delivery(&later)?;
                continue;
            }
            let Some(event) = self.catalog.event(delivery.event_id)? else {
                continue;
            };
            *busy += 1;
            let attempt = Attempt {
                client: client.clone(),
                catalog: self.catalog.clone(),
                hook: hook.clone(),
                event,
                delivery,
                origin: self.settings.origin.clone(),
                retry_for_ms: self.settings.retry_for.as_millis() as i64,
            };
            attempts.spawn(attempt.run());
        }
        Ok(())
    }

    /// Events not yet fanned out become deliveries for the webhooks that want them and whose
    /// maker may still see them.
    fn fan_out(&self, hooks: &HashMap<String, WebhookRow>) -> Result<()> {
        let auth = self.auth.snapshot();
        let interests: Vec<(&WebhookRow, Interest)> = hooks
            .values()
            .filter_map(|h| Some((h, interest_of(h)?)))
            .collect();
        let mut wanted = |event: &EventRow| -> Vec<String> {
            interests
                .iter()
                .filter(|(hook, interest)| {
                    event.position > hook.after_event
                        && interest.wants(event)
                        && auth
                            .subjects
                            .get(&hook.created_by)
                            .is_some_and(|maker| visible_to(maker, event))
                })
                .map(|(hook, _)| hook.id.clone())
                .collect()
        };
        while self.catalog.fan_out(FAN_OUT_BATCH, now_ms(), &mut wanted)? == FAN_OUT_BATCH {}
        Ok(())
    }
}

fn release(per_receiver: &mut HashMap<String, usize>, hook: &str) {
    if let Some(n) = per_receiver.get_mut(hook) {
        *n = n.saturating_sub(1);
    }
}

/// A stored subscription's interest (`None`: unreadable, delivered nothing).
pub fn interest_of(hook: &WebhookRow) -> Option<Interest> {
    Some(Interest {
        events: serde_json::from_str(&hook.events).ok()?,
        datasets: serde_json::from_str(&hook.datasets).ok()?,
    })
}

/// One attempt to deliver one event to one receiver.
struct Attempt {
    client: reqwest::Client,
    catalog: SharedCatalog,
    hook: WebhookRow,
    event: EventRow,
    delivery: DeliveryRow,
    origin: String,
    retry_for_ms: i64,
}

impl Attempt {
    /// Sends, then records the outcome; answers the receiver's webhook id.
    async fn run(self) -> String {
        let result = self.send().await;
        let outcome = after_attempt(&self.delivery, now_ms(), result, self.retry_for_ms);
        if let Err(e) = self.catalog.finish_delivery(&outcome) {
            // The lease ends and the event is sent again.
            tracing::warn!(error = %e, webhook = %self.hook.id, "recording a webhook delivery");
        }
        self.hook.id
    }

    async fn send(&self) -> std::result::Result<i64, (Option<i64>, String)> {
        let body = serde_json::to_vec(&cloud_event(&self.event, &self.origin))
            .map_err(|e| (None, e.to_string()))?;
        let id = self.event.id.to_string();
        let timestamp = chrono::Utc::now().timestamp();
        let signed = signature(&self.hook.secret, &id, timestamp, &body)
            .map_err(|e| (None, e.to_string()))?;
        let answer = self
            .client
            .post(&self.hook.url)
            .header(
                "content-type",
                "application/cloudevents+json; charset=utf-8",
            )
            .header("webhook-id", &id)
            .header("webhook-timestamp", timestamp.to_string())
            .header("webhook-signature", signed)
            .body(body)
            .send()
            .await
            .map_err(|e| (None, describe(&e)))?;
        let status = i64::from(answer.status().as_u16());
        match answer.status().is_success() {
            true => Ok(status),
            false => Err((Some(status), format!("the receiver answered {status}"))),
        }
    }
}

/// reqwest's error with its causes (the resolver's refusal is a cause).
fn describe(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// The delivery after an attempt at `now` that answered `result` (the status, or the status if
/// any and the error): delivered; or due again after a backoff doubling from 1 s up to an hour;
/// or dead once `retry_for_ms` has passed since the first attempt.
pub fn after_attempt(
    delivery: &DeliveryRow,
    now: i64,
    result: std::result::Result<i64, (Option<i64>, String)>,
    retry_for_ms: i64,
) -> DeliveryRow {
    let mut next = delivery.clone();
    next.attempts += 1;
    let first = *next.first_at.get_or_insert(now);
    match result {
        Ok(status) => {
            next.state = DeliveryState::Delivered;
            next.last_status = Some(status);
            next.last_error = None;
            next.done_at = Some(crate::catalog::now_text());
        }
        Err((status, error)) => {
            next.last_status = status;
            next.last_error = Some(error.chars().take(500).collect());
            let backoff = 1000i64
                .saturating_mul(1i64 << (next.attempts - 1).clamp(0, 40))
                .min(MAX_BACKOFF_MS);
            if now + backoff - first > retry_for_ms {
                next.state = DeliveryState::Dead;
                next.done_at = Some(crate::catalog::now_text());
            } else {
                next.state = DeliveryState::Pending;
                next.next_at = now + backoff;
            }
        }
    }
    next
}
