//! Per-address budgets at the front, so that many connections or requests from some addresses
//! cannot delay everyone else's (issue 41): each source address may hold so many open
//! connections, and may send requests at a sustained rate with a burst above it (a token bucket).
//! A request past the burst is paced: the front holds it (reading nothing more from its
//! connection, so it costs nothing) until the rate allows it, if that is within the longest wait;
//! a sequential client is slowed to the rate, never refused. Past the connection cap, or when
//! the wait would be longer, the front answers 429 with `Retry-After` itself, before routing and
//! before any other work, and closes the connection.
//!
//! The address that counts is the one the trusted-proxy settings decide (`client_addr.rs`): a
//! connection's peer, or, from a trusted proxy, the client its `X-Forwarded-For` names (read from
//! each request head, so the request budget applies after the head is judged). Connections from
//! a trusted proxy carry many clients' requests and are not counted per address. Addresses in the
//! exempt list (the host itself by default) have no budgets. IPv6 addresses count by their /64,
//! which is what one subscriber usually holds.
//!
//! The table is bounded: idle addresses (no connection open, a full bucket) are forgotten, and
//! when it is full of busy ones, newcomers share one overflow budget until room is made.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::client_addr::{Networks, TrustedProxies};
use crate::config_limits::LimitArgs;

use super::head::header_values;

/// How long the front holds a request refused for its rate before answering (reading nothing but
/// a small capped amount meanwhile), so that a client retrying at once cannot turn refusals into
/// a busy loop. The connection counts against its address meanwhile.
pub const RATE_REFUSAL_HOLD: Duration = Duration::from_secs(1);

/// The process's figures, for metrics (one front per process).
static TRACKED: AtomicU64 = AtomicU64::new(0);
static REFUSED_CONNECTIONS: AtomicU64 = AtomicU64::new(0);
static REFUSED_REQUESTS: AtomicU64 = AtomicU64::new(0);

/// What the budgets did so far: addresses tracked now, connections and requests refused.
#[derive(Debug, Clone, Copy)]
pub struct BudgetFigures {
    pub tracked: u64,
    pub refused_connections: u64,
    pub refused_requests: u64,
}

pub fn figures() -> BudgetFigures {
    BudgetFigures {
        tracked: TRACKED.load(Ordering::Relaxed),
        refused_connections: REFUSED_CONNECTIONS.load(Ordering::Relaxed),
        refused_requests: REFUSED_REQUESTS.load(Ordering::Relaxed),
    }
}

/// Idle entries are looked for at least this often.
const SWEEP_EVERY: Duration = Duration::from_secs(10);

/// The budgets (RAPID_ADDRESS_*).
#[derive(Debug, Clone)]
pub struct BudgetSettings {
    /// Open connections one address may hold at once.
    pub max_connections: u32,
    /// Requests per second one address may send, sustained.
    pub requests_per_second: f64,
    /// Requests one address may send at once on top of the rate (the bucket's size).
    pub burst: f64,
    /// Longest a request past the burst is held for the rate before it is refused instead.
    pub max_wait: Duration,
    /// Most addresses tracked at once.
    pub max_entries: usize,
    /// Addresses and networks without budgets.
    pub exempt: Networks,
    pub proxies: TrustedProxies,
}

impl BudgetSettings {
    /// The per-address budgets, as `rapid-rs serve` is told them.
    pub fn from_limits(limits: &LimitArgs) -> Result<BudgetSettings, String> {
        Ok(BudgetSettings {
            max_connections: limits.address_max_connections,
            requests_per_second: f64::from(limits.address_requests_per_second),
            burst: f64::from(limits.address_request_burst),
            max_wait: Duration::from_millis(limits.address_request_max_wait_ms),
            max_entries: limits.address_table_entries as usize,
            exempt: Networks::parse(&limits.address_budget_exempt, "budget-exempt address")?,
            proxies: TrustedProxies::parse(&limits.trusted_proxies)?,
        })
    }
}

/// An answer the front gives instead of serving.
#[derive(Debug, Clone, PartialEq)]
pub struct OverBudget {
    pub message: String,
    /// Whole seconds for `Retry-After`.
    pub retry_after: u64,
    /// How long to hold the answer back.
    pub hold: Duration,
}

/// An address as budgets count it: IPv4 whole, IPv6 by its /64.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Key {
    V4(u32),
    V6(u64),
}

impl Key {
    fn of(ip: IpAddr) -> Key {
        match ip.to_canonical() {
            IpAddr::V4(a) => Key::V4(a.into()),
            IpAddr::V6(a) => Key::V6((u128::from(a) >> 64) as u64),
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    tokens: f64,
    refilled: Instant,
    connections: u32,
}

impl Entry {
    fn new(burst: f64, now: Instant) -> Entry {
        Entry {
            tokens: burst,
            refilled: now,
            connections: 0,
        }
    }

    fn refill(&mut self, s: &BudgetSettings, now: Instant) {
        let elapsed = now.saturating_duration_since(self.refilled).as_secs_f64();
        self.tokens = (self.tokens + elapsed * s.requests_per_second).min(s.burst);
        self.refilled = now;
    }

    /// Takes one request's token: `Ok` with how long the request must wait for it (zero within
    /// the burst; the bucket goes into debt), or `Err` with how long until one is free, when that
    /// is longer than the longest wait.
    fn take(&mut self, s: &BudgetSettings, now: Instant) -> Result<Duration, Duration> {
        self.refill(s, now);
        let wait = (1.0 - self.tokens).max(0.0) / s.requests_per_second;
        if wait > s.max_wait.as_secs_f64() {
            return Err(Duration::from_secs_f64(wait));
        }
        self.tokens -= 1.0;
        Ok(Duration::from_secs_f64(
            (-self.tokens).max(0.0) / s.requests_per_second,
        ))
    }

    /// Nothing to remember: no connection open and the bucket full again.
    fn idle(&self, s: &BudgetSettings, now: Instant) -> bool {
        let full_at = (s.burst - self.tokens).max(0.0) / s.requests_per_second;
        self.connections == 0
            && now.saturating_duration_since(self.refilled).as_secs_f64() >= full_at
    }
}

#[derive(Debug)]
struct Table {
    entries: HashMap<Key, Entry>,
    /// The shared budget of addresses that found the table full.
    overflow: Entry,
    swept: Instant,
}

/// Which entry a connection is counted in (`None`: the overflow entry).
type Slot = Option<Key>;

impl Table {
    /// The entry of `key`, creating it if there is room (else the overflow entry).
    fn entry(&mut self, s: &BudgetSettings, key: Key, now: Instant) -> (Slot, &mut Entry) {
        let since = now.saturating_duration_since(self.swept);
        let full = self.entries.len() >= s.max_entries && !self.entries.contains_key(&key);
        if since >= SWEEP_EVERY || (full && since >= Duration::from_secs(1)) {
            self.entries.retain(|_, e| !e.idle(s, now));
            self.swept = now;
        }
        if self.entries.len() >= s.max_entries && !self.entries.contains_key(&key) {
            TRACKED.store(self.entries.len() as u64, Ordering::Relaxed);
            return (None, &mut self.overflow);
        }
        let tracked = self.entries.len() + usize::from(!self.entries.contains_key(&key));
        TRACKED.store(tracked as u64, Ordering::Relaxed);
        let entry = self
            .entries
            .entry(key)
            .or_insert_with(|| Entry::new(s.burst, now));
        (Some(key), entry)
    }
}

/// The budgets of every address, shared by all workers.
#[derive(Debug)]
pub struct AddressBudgets {
    settings: BudgetSettings,
    table: Mutex<Table>,
}

/// A connection counted against its address; dropping it gives the place back.
#[derive(Debug)]
pub struct ConnectionSlot {
    budgets: Arc<AddressBudgets>,
    slot: Slot,
}

impl Drop for ConnectionSlot {
    fn drop(&mut self) {
        let mut table = self.budgets.lock();
        let entry = match self.slot {
            None => Some(&mut table.overflow),
            Some(key) => table.entries.get_mut(&key),
        };
        if let Some(e) = entry {
            e.connections = e.connections.saturating_sub(1);
        }
    }
}

impl AddressBudgets {
    pub fn new(settings: BudgetSettings) -> AddressBudgets {
        let now = Instant::now();
        AddressBudgets {
            table: Mutex::new(Table {
                entries: HashMap::new(),
                overflow: Entry::new(settings.burst, now),
                swept: now,
            }),
            settings,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Addresses tracked now (for tests and metrics).
    pub fn tracked(&self) -> usize {
        self.lock().entries.len()
    }

    /// A new connection from `peer`: counted (`Some`), not counted (exempt, a trusted proxy, no
    /// peer), or refused.
    pub fn open(
        self: &Arc<Self>,
        peer: Option<IpAddr>,
    ) -> Result<Option<ConnectionSlot>, OverBudget> {
        let Some(peer) = peer.map(|p| p.to_canonical()) else {
            return Ok(None);
        };
        let s = &self.settings;
        if s.exempt.contains(peer) || s.proxies.trusts(peer) {
            return Ok(None);
        }
        let mut table = self.lock();
        let (slot, entry) = table.entry(s, Key::of(peer), Instant::now());
        if entry.connections >= s.max_connections {
            REFUSED_CONNECTIONS.fetch_add(1, Ordering::Relaxed);
            return Err(OverBudget {
                message: format!(
                    "Too many connections from your address (at most {}): close some, or retry later",
                    s.max_connections
                ),
                retry_after: 1,
                hold: Duration::ZERO,
            });
        }
        entry.connections += 1;
        drop(table);
        Ok(Some(ConnectionSlot {
            budgets: self.clone(),
            slot,
        }))
    }

    /// A request whose complete head is `head`, on a connection from `peer`: charged to its
    /// client's budget (`Ok`: how long to hold it first), or refused.
    pub fn request(&self, peer: Option<IpAddr>, head: &[u8]) -> Result<Duration, OverBudget> {
        let Some(peer) = peer.map(|p| p.to_canonical()) else {
            return Ok(Duration::ZERO);
        };
        let s = &self.settings;
        let client = if s.proxies.trusts(peer) {
            s.proxies
                .resolve(peer, &header_values(head, "x-forwarded-for"))
        } else {
            peer
        };
        // A proxy's own requests (no forwarded client) are not budgeted either.
        if s.exempt.contains(client) || s.proxies.trusts(client) {
            return Ok(Duration::ZERO);
        }
        let mut table = self.lock();
        let (_, entry) = table.entry(s, Key::of(client), Instant::now());
        let taken = entry.take(s, Instant::now());
        drop(table);
        if taken.is_err() {
            REFUSED_REQUESTS.fetch_add(1, Ordering::Relaxed);
        }
        taken.map_err(|wait| OverBudget {
            message: format!(
                "Too many requests from your address (at most {} a second, {} at once): retry later",
                s.requests_per_second, s.burst
            ),
            retry_after: wait.as_secs_f64().ceil().max(1.0) as u64,
            hold: RATE_REFUSAL_HOLD,
        })
    }
}

#[cfg(test)]
#[path = "budget_tests.rs"]
mod tests;
