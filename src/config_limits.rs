//! Settings that bound what hostile clients can make the service spend: per-address budgets at
//! the connection front, the sign-in throttle,
//! the password hashing pool, schema generation's pool, the size of one decoded value, and which
//! proxies' `X-Forwarded-For` is believed. Part of [`ServeArgs`](crate::config::ServeArgs).

use std::time::Duration;

use clap::Args;
use rapid_actors::auth::hash_pool::HashPoolSettings;
use rapid_actors::auth::throttle::ThrottleSettings;

fn cores() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

#[derive(Debug, Clone, Args)]
pub struct LimitArgs {
    /// Comma list of reverse proxy addresses or CIDR networks whose X-Forwarded-For is believed
    /// for the client address; empty: the connection's peer address is the client.
    #[arg(long, env = "RAPID_TRUSTED_PROXIES", default_value = "")]
    pub trusted_proxies: String,

    /// Open connections one client address may hold at once (an IPv6 address counts by its
    /// /64); more: 429 and closed at once. Trusted proxies' connections are not counted.
    #[arg(long, env = "RAPID_ADDRESS_MAX_CONNECTIONS", default_value_t = 128,
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub address_max_connections: u32,

    /// Requests per second one client address may send, sustained (a token bucket); beyond its
    /// burst, requests are held to this rate, and refused (429 with Retry-After, before routing)
    /// past the longest wait.
    #[arg(long, env = "RAPID_ADDRESS_REQUESTS_PER_SECOND", default_value_t = 20,
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub address_requests_per_second: u32,

    /// Requests one client address may send at once on top of its rate (the bucket's size).
    #[arg(long, env = "RAPID_ADDRESS_REQUEST_BURST", default_value_t = 200,
          value_parser = clap::value_parser!(u32).range(1..=10_000_000))]
    pub address_request_burst: u32,

    /// Longest a request past its address's burst is held until the rate allows it, in
    /// milliseconds (nothing is read from its connection meanwhile); a longer wait: 429 at once.
    /// 0: no waiting, every request past the burst is refused. At most the keep-alive less half
    /// a second (a held request is not yet seen by the HTTP layer, whose idle timer runs).
    #[arg(long, env = "RAPID_ADDRESS_REQUEST_MAX_WAIT_MS", default_value_t = 1000,
          value_parser = clap::value_parser!(u64).range(0..=60_000))]
    pub address_request_max_wait_ms: u64,

    /// Comma list of addresses and CIDR networks without per-address budgets; the default is the
    /// host itself (local tools, benchmarks, a proxy on the same host that is not trusted).
    #[arg(
        long,
        env = "RAPID_ADDRESS_BUDGET_EXEMPT",
        default_value = "127.0.0.1,::1"
    )]
    pub address_budget_exempt: String,

    /// Most client addresses the per-address budgets track at once (about 100 bytes each); idle
    /// ones are forgotten, and when all are busy, newcomers share one budget.
    #[arg(long, env = "RAPID_ADDRESS_TABLE_ENTRIES", default_value_t = 100_000,
          value_parser = clap::value_parser!(u64).range(16..=10_000_000))]
    pub address_table_entries: u64,

    /// Consecutive failed sign-ins of one account from one address before each attempt waits.
    #[arg(long, env = "RAPID_SIGNIN_FREE_FAILURES", default_value_t = 5,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub signin_free_failures: u32,

    /// Consecutive failed sign-ins of one account from any address before each attempt waits.
    #[arg(long, env = "RAPID_SIGNIN_ACCOUNT_FREE_FAILURES", default_value_t = 15,
          value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub signin_account_free_failures: u32,

    /// Consecutive failed user sign-ins from one address, whatever the names (unknown ones
    /// included), before each attempt from it waits; users who signed in from it before are exempt.
    #[arg(long, env = "RAPID_SIGNIN_ADDRESS_FREE_FAILURES", default_value_t = 10,
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub signin_address_free_failures: u32,

    /// First delay after the free failures, in milliseconds; it doubles with each failure.
    #[arg(long, env = "RAPID_SIGNIN_BASE_DELAY_MS", default_value_t = 1000,
          value_parser = clap::value_parser!(u64).range(1..=3_600_000))]
    pub signin_base_delay_ms: u64,

    /// Longest delay between attempts of a throttled account, in seconds.
    #[arg(long, env = "RAPID_SIGNIN_MAX_DELAY_SECONDS", default_value_t = 300,
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub signin_max_delay_seconds: u64,

    /// Seconds without an attempt after which an account's failures are forgotten.
    #[arg(long, env = "RAPID_SIGNIN_FORGET_SECONDS", default_value_t = 3600,
          value_parser = clap::value_parser!(u64).range(1..=2_592_000))]
    pub signin_forget_seconds: u64,

    /// Most entries in the sign-in throttle's table (about 100 bytes each).
    #[arg(long, env = "RAPID_SIGNIN_TABLE_ENTRIES", default_value_t = 50_000,
          value_parser = clap::value_parser!(u64).range(100..=10_000_000))]
    pub signin_table_entries: u64,

    /// Threads checking passwords at once, each holding 19 MiB for argon2 (default: one fewer
    /// than the cores, at least one, so hashing never holds every core).
    #[arg(long, env = "RAPID_HASH_WORKERS")]
    pub hash_workers: Option<usize>,

    /// Password checks that may wait for a hashing thread; beyond it, 503 at once (default: 2 per worker).
    #[arg(long, env = "RAPID_HASH_QUEUE")]
    pub hash_queue: Option<usize>,

    /// Longest a password check waits for a hashing thread before 503, in milliseconds.
    #[arg(long, env = "RAPID_HASH_WAIT_MS", default_value_t = 1000)]
    pub hash_wait_ms: u64,

    /// Schema generations running at once (default: one per core); others wait, then 503.
    #[arg(long, env = "RAPID_GENERATE_WORKERS")]
    pub generate_workers: Option<usize>,

    /// Longest a schema generation waits for its turn before 503, in milliseconds.
    #[arg(long, env = "RAPID_GENERATE_WAIT_MS", default_value_t = 2000)]
    pub generate_wait_ms: u64,

    /// Longest single value (CSV field, Parquet value) accepted in uploads and samples, in bytes;
    /// a longer one is refused (422) naming its column and row.
    #[arg(long, env = "RAPID_MAX_VALUE_BYTES", default_value_t = 16 * 1024 * 1024,
          value_parser = clap::value_parser!(u64).range(1024..=1024 * 1024 * 1024))]
    pub max_value_bytes: u64,
}

impl LimitArgs {
    pub fn hash_pool(&self) -> HashPoolSettings {
        let workers = self
            .hash_workers
            .unwrap_or_else(|| cores().saturating_sub(1))
            .max(1);
        HashPoolSettings {
            workers,
            queue: self.hash_queue.unwrap_or(2 * workers),
            max_wait: Duration::from_millis(self.hash_wait_ms),
        }
    }

    pub fn throttle(&self) -> ThrottleSettings {
        ThrottleSettings {
            free_failures: self.signin_free_failures,
            account_free_failures: self.signin_account_free_failures,
            address_free_failures: self.signin_address_free_failures,
            base_delay: Duration::from_millis(self.signin_base_delay_ms),
            max_delay: Duration::from_secs(self.signin_max_delay_seconds),
            forget_after: Duration::from_secs(self.signin_forget_seconds),
            max_entries: self.signin_table_entries as usize,
        }
    }

    pub fn generate_workers(&self) -> usize {
        self.generate_workers.unwrap_or_else(cores).max(1)
    }
}
