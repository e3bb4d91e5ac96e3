//! Counters of sign-in outcomes by reason, for the log today and a metrics endpoint later.
//! They hold counts only: never an attempted secret, and never an unknown account's name (people
//! type passwords into the name field).

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

/// What happened to one sign-in attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Succeeded,
    WrongPassword,
    UnknownUser,
    WrongSecret,
    UnknownClient,
    /// Refused before any check: too many failures of this account from this address.
    ThrottledPair,
    /// Refused before any check: too many failures of this account from any address.
    ThrottledAccount,
    /// Refused before any check: too many failed user sign-ins from this address, any names.
    ThrottledAddress,
    /// Refused before any check: the hash pool was full.
    Busy,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Succeeded => "succeeded",
            Outcome::WrongPassword => "wrong_password",
            Outcome::UnknownUser => "unknown_user",
            Outcome::WrongSecret => "wrong_secret",
            Outcome::UnknownClient => "unknown_client",
            Outcome::ThrottledPair => "throttled_pair",
            Outcome::ThrottledAccount => "throttled_account",
            Outcome::ThrottledAddress => "throttled_address",
            Outcome::Busy => "busy",
        }
    }

    const ALL: [Outcome; 9] = [
        Outcome::Succeeded,
        Outcome::WrongPassword,
        Outcome::UnknownUser,
        Outcome::WrongSecret,
        Outcome::UnknownClient,
        Outcome::ThrottledPair,
        Outcome::ThrottledAccount,
        Outcome::ThrottledAddress,
        Outcome::Busy,
    ];
}

/// The counters, one per outcome, plus the argon2 checks actually computed.
#[derive(Default)]
pub struct SignInStats {
    counts: [AtomicU64; 9],
    /// Password hashes verified (known users and decoys alike).
    password_checks: AtomicU64,
    /// Seconds since the epoch of the last summary line, to write at most one every ten seconds.
    last_summary: AtomicI64,
}

/// A copy of the counters at one moment.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SignInCounts {
    pub by_outcome: Vec<(&'static str, u64)>,
    pub password_checks: u64,
}

const SUMMARY_EVERY_SECONDS: i64 = 10;

impl SignInStats {
    pub fn password_checked(&self) {
        self.password_checks.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts `outcome` and logs it (debug; the account only when it exists), with a summary of
    /// every counter at most once every ten seconds at info, so a flood cannot flood the log.
    pub fn record(&self, outcome: Outcome, known_account: Option<&str>) {
        self.counts[outcome as usize].fetch_add(1, Ordering::Relaxed);
        tracing::debug!(
            target: "rapid_actors::auth::signin",
            outcome = outcome.as_str(),
            account = known_account.unwrap_or("-"),
            "sign-in"
        );
        if outcome == Outcome::Succeeded {
            return;
        }
        let now = chrono::Utc::now().timestamp();
        let last = self.last_summary.load(Ordering::Relaxed);
        if now - last >= SUMMARY_EVERY_SECONDS
            && self
                .last_summary
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            let c = self.counts();
            tracing::info!(
                target: "rapid_actors::auth::signin",
                counts = ?c.by_outcome,
                password_checks = c.password_checks,
                "sign-in counters since start"
            );
        }
    }

    pub fn counts(&self) -> SignInCounts {
        SignInCounts {
            by_outcome: Outcome::ALL
                .iter()
                .map(|o| (o.as_str(), self.counts[*o as usize].load(Ordering::Relaxed)))
                .collect(),
            password_checks: self.password_checks.load(Ordering::Relaxed),
        }
    }

    pub fn count(&self, outcome: Outcome) -> u64 {
        self.counts[outcome as usize].load(Ordering::Relaxed)
    }
}
