//! Throttling of failed sign-ins: per (account, client address), more loosely per account, and
//! for users per address across every name.
//!
//! Every credential check (token endpoint, password change, web sign-in) asks
//! [`SignInThrottle::begin`] first. After `free_failures` consecutive failures of one account from
//! one address, each further attempt must wait a delay that doubles per failure up to a cap, and
//! attempts inside the delay are refused before any hash is computed. Attempts already in flight
//! count against the free failures, so a burst of concurrent guesses cannot slip past the limit.
//! A looser bound per account, whatever the address, slows an attacker with many addresses; an
//! address that has signed in to the account successfully is exempt from it, so such an attacker
//! cannot lock the real user out from their usual address. A success resets these counters.
//!
//! Each new name is a new account, so an attacker trying many names (unknown ones included) is
//! stopped by a third bound, per address whatever the name, before any password is hashed. It
//! applies to users only (a client secret is a cheap digest), a success does not clear it (one
//! held account must not launder guesses at others), and an address's own real users (pairs
//! that signed in before) are exempt, so an attacker sharing their address cannot lock them out.
//!
//! The table is bounded: entries are keyed by a keyed hash of the account (never the name
//! itself, whatever its length), forgotten after `forget_after` of quiet, and when it is full the
//! oldest entries that hold no lock are evicted first.

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The policy's figures (all settings of the service).
#[derive(Debug, Clone, Copy)]
pub struct ThrottleSettings {
    /// Consecutive failures of one account from one address before delays start.
    pub free_failures: u32,
    /// Consecutive failures of one account from any address before delays start.
    pub account_free_failures: u32,
    /// Consecutive failed user sign-ins from one address, whatever the names, before delays start.
    pub address_free_failures: u32,
    /// The first delay; each further failure doubles it.
    pub base_delay: Duration,
    /// The longest delay.
    pub max_delay: Duration,
    /// An entry quiet (no attempt) for this long is forgotten, failures and all.
    pub forget_after: Duration,
    /// Most entries kept; the table never grows beyond it.
    pub max_entries: usize,
}

impl Default for ThrottleSettings {
    fn default() -> Self {
        ThrottleSettings {
            free_failures: 5,
            account_free_failures: 15,
            address_free_failures: 10,
            base_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(300),
            forget_after: Duration::from_secs(3600),
            max_entries: 50_000,
        }
    }
}

/// Which kind of account is signing in: the two never share a counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AccountKind {
    User,
    Client,
}

/// Which bound refused an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// This account from this address.
    Pair,
    /// This account from any address.
    Account,
    /// Any user name from this address.
    Address,
}

/// Why an attempt was refused, and for how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refused {
    pub scope: Scope,
    pub retry_after: Duration,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Key {
    Pair(u64, IpAddr),
    Account(u64),
    Address(IpAddr),
}

#[derive(Debug, Clone)]
struct Entry {
    failures: u32,
    in_flight: u32,
    locked_until: Option<Instant>,
    last_seen: Instant,
    /// A pair that has signed in successfully: exempt from the per-account bound.
    signed_in_here: bool,
}

impl Entry {
    fn new(now: Instant) -> Entry {
        Entry {
            failures: 0,
            in_flight: 0,
            locked_until: None,
            last_seen: now,
            signed_in_here: false,
        }
    }

    fn locked_at(&self, now: Instant) -> bool {
        self.locked_until.is_some_and(|t| t > now)
    }

    /// None when an attempt may start now; otherwise how long until one may. `bounded`: attempts
    /// in flight count against the failures left (slow checks, where a burst could otherwise all
    /// start before the first failure is known).
    fn admits(&self, free: u32, now: Instant, bounded: bool) -> Option<Duration> {
        if let Some(until) = self.locked_until.filter(|t| *t > now) {
            return Some(until - now);
        }
        // Below the threshold, as many at once as failures are left; past it, one at a time.
        let room = free.saturating_sub(self.failures).max(1);
        (bounded && self.in_flight >= room).then_some(Duration::from_secs(1))
    }

    fn useless(&self, now: Instant) -> bool {
        self.failures == 0 && self.in_flight == 0 && !self.signed_in_here && !self.locked_at(now)
    }
}

pub struct SignInThrottle {
    settings: ThrottleSettings,
    hasher: RandomState,
    table: Mutex<HashMap<Key, Entry>>,
}

impl SignInThrottle {
    pub fn new(settings: ThrottleSettings) -> Arc<SignInThrottle> {
        Arc::new(SignInThrottle {
            settings,
            hasher: RandomState::new(),
            table: Mutex::new(HashMap::new()),
        })
    }

    /// Asks to check a credential of `account` presented from `addr`. While the returned
    /// [`Attempt`] lives it counts as in flight; report its outcome with `succeeded` or `failed`
    /// (dropping it unreported, e.g. when the hash pool was busy, counts as nothing).
    pub fn begin(
        self: &Arc<Self>,
        kind: AccountKind,
        account: &str,
        addr: IpAddr,
    ) -> Result<Attempt, Refused> {
        let account = self.hasher.hash_one((kind, account));
        let net = network_of(addr);
        let (pair, whole) = (Key::Pair(account, net), Key::Account(account));
        // Users only: a wrong client secret costs a digest, not a hash.
        let address = (kind == AccountKind::User).then_some(Key::Address(net));
        let keys: Vec<Key> = [Some(pair), Some(whole), address]
            .into_iter()
            .flatten()
            .collect();
        let now = Instant::now();
        let s = &self.settings;
        let mut table = self.lock();
        if table.len() + keys.len() > s.max_entries {
            self.make_room(&mut table, now);
        }
        let forget = s.forget_after;
        for key in &keys {
            let entry = table.entry(*key).or_insert_with(|| Entry::new(now));
            // Quiet for long enough: start afresh.
            if entry.in_flight == 0
                && !entry.locked_at(now)
                && now.duration_since(entry.last_seen) >= forget
            {
                *entry = Entry::new(now);
            }
        }
        // Client secrets are checked in microseconds, without awaiting, so their attempts are
        // never in flight together for long: only slow (password) checks bound concurrency,
        // which also leaves a busy client's many parallel token requests alone.
        let bounded = kind == AccountKind::User;
        // unwrap: every key was inserted just above, under the same lock.
        let pair_entry = table.get(&pair).unwrap().clone();
        let refusal = pair_entry
            .admits(s.free_failures, now, bounded)
            .map(|d| (Scope::Pair, d))
            .or_else(|| {
                // A pair that signed in before is this address's real user: exempt from the
                // bounds others' failures raise.
                if pair_entry.signed_in_here {
                    return None;
                }
                let by_address = address.and_then(|k| {
                    table[&k]
                        .admits(s.address_free_failures, now, bounded)
                        .map(|d| (Scope::Address, d))
                });
                by_address.or_else(|| {
                    table[&whole]
                        .admits(s.account_free_failures, now, bounded)
                        .map(|d| (Scope::Account, d))
                })
            });
        if let Some((scope, retry_after)) = refusal {
            for key in &keys {
                if table.get(key).is_some_and(|e| e.useless(now)) {
                    table.remove(key);
                }
            }
            return Err(Refused { scope, retry_after });
        }
        for key in &keys {
            if let Some(e) = table.get_mut(key) {
                e.in_flight += 1;
                e.last_seen = now;
            }
        }
        Ok(Attempt {
            throttle: self.clone(),
            keys,
            resolved: false,
        })
    }

    /// A client's true secret, checked before the throttle is asked: it always gets its token,
    /// and clears the failures others' guesses left on the client and on this pair.
    pub fn forgive(&self, kind: AccountKind, account: &str, addr: IpAddr) {
        let account = self.hasher.hash_one((kind, account));
        let mut table = self.lock();
        for key in [Key::Pair(account, network_of(addr)), Key::Account(account)] {
            if table.get(&key).is_some_and(|e| e.in_flight == 0) {
                table.remove(&key);
            }
        }
    }

    /// Entries held now (for tests and the stats).
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Key, Entry>> {
        // Entries are plain counters: a panic mid-update leaves nothing worse than a stale count.
        self.table.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The delay after `failures` consecutive failures with `free` allowed.
    fn delay(&self, failures: u32, free: u32) -> Option<Duration> {
        let over = failures.checked_sub(free)?;
        let factor = 1u32.checked_shl(over.min(31)).unwrap_or(u32::MAX);
        Some(
            self.settings
                .base_delay
                .saturating_mul(factor)
                .min(self.settings.max_delay),
        )
    }

    fn resolve(&self, keys: &[Key], succeeded: Option<bool>) {
        let now = Instant::now();
        let mut table = self.lock();
        for &key in keys {
            let free = match key {
                Key::Pair(..) => self.settings.free_failures,
                Key::Account(_) => self.settings.account_free_failures,
                Key::Address(_) => self.settings.address_free_failures,
            };
            let Some(e) = table.get_mut(&key) else {
                continue; // evicted meanwhile: nothing to record
            };
            e.in_flight = e.in_flight.saturating_sub(1);
            e.last_seen = now;
            match succeeded {
                // One real user signing in does not clear an address's failures under other
                // names: an attacker holding one account could otherwise launder its guesses.
                Some(true) if matches!(key, Key::Address(_)) => {}
                Some(true) => {
                    e.failures = 0;
                    e.locked_until = None;
                    if matches!(key, Key::Pair(..)) {
                        e.signed_in_here = true;
                    }
                }
                Some(false) => {
                    e.failures = e.failures.saturating_add(1);
                    if let Some(d) = self.delay(e.failures, free) {
                        e.locked_until = Some(now + d);
                    }
                }
                None => {}
            }
            if e.useless(now) {
                table.remove(&key);
            }
        }
    }

    /// Frees at least a tenth of the table: forgotten entries first, then the oldest entries
    /// holding no lock and nothing in flight, then (only if every entry is locked) the oldest.
    fn make_room(&self, table: &mut HashMap<Key, Entry>, now: Instant) {
        let forget = self.settings.forget_after;
        table.retain(|_, e| {
            e.in_flight > 0 || e.locked_at(now) || now.duration_since(e.last_seen) < forget
        });
        let target = self.settings.max_entries - self.settings.max_entries / 10 - 2;
        if table.len() <= target {
            return;
        }
        let mut order: Vec<(bool, bool, Instant, Key)> = table
            .iter()
            .map(|(k, e)| (e.in_flight > 0, e.locked_at(now), e.last_seen, *k))
            .collect();
        order.sort_unstable_by_key(|(busy, locked, seen, _)| (*busy, *locked, *seen));
        let excess = table.len() - target;
        for (_, _, _, key) in order.into_iter().take(excess) {
            table.remove(&key);
        }
    }
}

/// The address a pair is keyed by: IPv4 as is; IPv6 by its /64 network, which one holder usually
/// owns whole (so rotating through it does not give an attacker fresh counters).
fn network_of(addr: IpAddr) -> IpAddr {
    match addr.to_canonical() {
        IpAddr::V6(v6) => {
            let bits = u128::from(v6) & !((1u128 << 64) - 1);
            IpAddr::V6(bits.into())
        }
        v4 => v4,
    }
}

/// One credential check in flight. Report it; dropped unreported it counts as nothing.
pub struct Attempt {
    throttle: Arc<SignInThrottle>,
    keys: Vec<Key>,
    resolved: bool,
}

impl Attempt {
    pub fn succeeded(mut self) {
        self.resolved = true;
        self.throttle.resolve(&self.keys, Some(true));
    }

    pub fn failed(mut self) {
        self.resolved = true;
        self.throttle.resolve(&self.keys, Some(false));
    }
}

impl Drop for Attempt {
    fn drop(&mut self) {
        if !self.resolved {
            self.throttle.resolve(&self.keys, None);
        }
    }
}

#[cfg(test)]
#[path = "throttle_tests.rs"]
mod tests;
