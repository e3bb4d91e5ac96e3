//! Operations settings: log format, who may read metrics, graceful shutdown, compaction,
//! history and audit retention. Part of
//! [`ServeArgs`](crate::config::ServeArgs).

use clap::{Args, ValueEnum};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines (the default).
    Text,
    /// One JSON object a line, for log shippers.
    Json,
}

#[derive(Debug, Clone, Args)]
pub struct OpsArgs {
    /// Log format: `text` or `json` (one JSON object a line).
    #[arg(long, env = "RAPID_LOG_FORMAT", value_enum, default_value = "text")]
    pub log_format: LogFormat,

    /// Also serve `GET /metrics` WITHOUT a token on this separate address (meant for a local
    /// Prometheus scraper, e.g. 127.0.0.1:9464). Unset: metrics only at `/api/metrics` with a token.
    #[arg(long, env = "RAPID_METRICS_BIND")]
    pub metrics_bind: Option<String>,

    /// On SIGTERM/SIGINT: seconds running requests (uploads being received) and upload commits
    /// may take to finish before the rest are failed and the process exits.
    #[arg(long, env = "RAPID_SHUTDOWN_TIMEOUT_SECONDS", default_value_t = 30,
          value_parser = clap::value_parser!(u64).range(0..=3600))]
    pub shutdown_timeout_seconds: u64,

    /// Compaction merges a partition's small data files into files of about this many bytes
    /// (a file of at least half of it is not small).
    #[arg(long, env = "RAPID_COMPACT_TARGET_BYTES", default_value_t = 128 * 1024 * 1024,
          value_parser = clap::value_parser!(u64).range(1024..))]
    pub compact_target_bytes: u64,

    /// While commits keep coming, a partition is compacted once it has this many small files.
    #[arg(long, env = "RAPID_COMPACT_MIN_FILES", default_value_t = 16,
          value_parser = clap::value_parser!(u64).range(2..=100_000))]
    pub compact_min_files: u64,

    /// A dataset version with no commit for this many seconds has every partition with two or
    /// more small files compacted.
    #[arg(long, env = "RAPID_COMPACT_IDLE_SECS", default_value_t = 10,
          value_parser = clap::value_parser!(u64).range(0..=86_400))]
    pub compact_idle_secs: u64,

    /// Whether compaction starts on its own (`false`: only when asked, by the API or
    /// `rapid-rs admin compact`).
    #[arg(long, env = "RAPID_COMPACT_AUTO", default_value_t = true, action = clap::ArgAction::Set)]
    pub compact_auto: bool,

    /// Whether each upload's columns are profiled (null counts, distinct estimate, bounds,
    /// frequent values, histograms) in the validating pass; `false` saves that CPU time.
    #[arg(long, env = "RAPID_PROFILE_UPLOADS", default_value_t = true, action = clap::ArgAction::Set)]
    pub profile_uploads: bool,

    /// History: a dataset version's commit stays readable (as-of reads; the files it replaced
    /// kept) while it is among this many newest commits of its version (at least 1, the current).
    #[arg(long, env = "RAPID_HISTORY_KEEP_COMMITS", default_value_t = 100,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub history_keep_commits: u64,

    /// History: ... or while it is younger than this many seconds (0: the count alone decides).
    #[arg(long, env = "RAPID_HISTORY_KEEP_SECONDS", default_value_t = 86_400)]
    pub history_keep_seconds: u64,

    /// Delta log: a Parquet checkpoint of each stored version's table every this many log
    /// versions (readers replay at most this many JSON files); 0: none.
    #[arg(long, env = "RAPID_DELTA_CHECKPOINT_INTERVAL", default_value_t = 10)]
    pub delta_checkpoint_interval: u64,

    /// Audit log: rows older than this many days are removed (checked hourly); 0 keeps them
    /// for ever. The newest row always stays, so the hash chain goes on from it.
    #[arg(long, env = "RAPID_AUDIT_RETENTION_DAYS", default_value_t = 365,
          value_parser = clap::value_parser!(u64).range(0..=36_500))]
    pub audit_retention_days: u64,

    /// Webhooks: the networks receivers may be in, comma-separated (`10.0.0.0/8,127.0.0.1`).
    /// Empty: any address but link-local (cloud metadata), unspecified, multicast and broadcast.
    #[arg(long, env = "RAPID_WEBHOOK_ALLOW", default_value = "")]
    pub webhook_allow: String,

    /// Webhooks: how long a delivery is retried (backoff doubling from 1 s to an hour) before it
    /// is dead, kept for redelivery on demand.
    #[arg(long, env = "RAPID_WEBHOOK_RETRY_SECS", default_value_t = 86_400,
          value_parser = clap::value_parser!(u64).range(1..=2_592_000))]
    pub webhook_retry_secs: u64,

    /// Webhooks: one attempt's time limit (connecting, sending, the receiver's answer).
    #[arg(long, env = "RAPID_WEBHOOK_TIMEOUT_SECS", default_value_t = 10,
          value_parser = clap::value_parser!(u64).range(1..=300))]
    pub webhook_timeout_secs: u64,
}

impl OpsArgs {
    /// The compaction settings these flags give.
    pub fn compaction(&self) -> rapid_actors::compaction::CompactionSettings {
        rapid_actors::compaction::CompactionSettings {
            target_bytes: self.compact_target_bytes,
            min_files: self.compact_min_files as usize,
            idle: std::time::Duration::from_secs(self.compact_idle_secs),
            automatic: self.compact_auto,
        }
    }

    /// How long audit rows are kept (`None`: for ever).
    pub fn audit_retention(&self) -> Option<std::time::Duration> {
        (self.audit_retention_days > 0)
            .then(|| std::time::Duration::from_secs(self.audit_retention_days * 86_400))
    }

    /// How webhooks are delivered; `origin` is the public URL events name as their source.
    pub fn deliveries(
        &self,
        origin: &str,
    ) -> Result<rapid_actors::events::delivery::DeliverySettings, rapid_actors::Error> {
        let rule = rapid_actors::events::receivers::ReceiverRule::parse(&self.webhook_allow)
            .map_err(|e| e.context("RAPID_WEBHOOK_ALLOW"))?;
        Ok(rapid_actors::events::delivery::DeliverySettings {
            rule: std::sync::Arc::new(rule),
            retry_for: std::time::Duration::from_secs(self.webhook_retry_secs),
            timeout: std::time::Duration::from_secs(self.webhook_timeout_secs),
            origin: origin.trim_end_matches('/').to_string(),
            shared: false,
        })
    }

    /// The history retention these flags give.
    pub fn history(&self) -> rapid_actors::history::HistorySettings {
        rapid_actors::history::HistorySettings {
            keep_commits: self.history_keep_commits,
            keep_for: std::time::Duration::from_secs(self.history_keep_seconds),
        }
    }
}
