//! Operations settings: log format, who may read metrics, graceful shutdown. Part of
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
}
