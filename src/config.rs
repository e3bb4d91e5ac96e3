//! Command line and environment configuration. Every setting is a flag and an environment variable.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "rapid-rs",
    version,
    about = "Self-hosted dataset data service: schema-validated uploads, Parquet storage, queries, permissions",
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// With no subcommand, `rapid-rs` serves with these settings.
    #[command(flatten)]
    pub serve: ServeArgs,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the service (the default).
    Serve(ServeArgs),
    /// Benchmark concurrent uploads against a running service, and check every row is stored once.
    Bench(crate::bench::BenchArgs),
}

#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Address and port to listen on; port 0 picks a free port (printed at start-up).
    #[arg(long, env = "RAPID_BIND", default_value = "127.0.0.1:8000")]
    pub bind: String,

    /// Folder holding the catalog, raw uploads, Parquet data and query results.
    #[arg(long, env = "RAPID_DATA_DIR", default_value = "./data")]
    pub data_dir: PathBuf,

    /// Comma-separated layer names this instance offers.
    #[arg(long, env = "RAPID_LAYERS", default_value = "default")]
    pub layers: String,

    /// Comma-separated e-mail domains users may have; empty refuses every user e-mail.
    #[arg(long, env = "ALLOWED_EMAIL_DOMAINS", default_value = "")]
    pub allowed_email_domains: String,

    /// Lifetime of issued access tokens, in seconds.
    #[arg(long, env = "RAPID_TOKEN_TTL_SECONDS", default_value_t = 3600,
          value_parser = clap::value_parser!(i64).range(1..=31_536_000))]
    pub token_ttl_seconds: i64,

    /// Largest accepted upload body, in bytes (larger: 413).
    #[arg(long, env = "RAPID_MAX_UPLOAD_BYTES", default_value_t = 10 * 1024 * 1024 * 1024)]
    pub max_upload_bytes: u64,

    /// How long large-query results (and their download links) live, in seconds.
    #[arg(long, env = "RAPID_RESULT_TTL_SECONDS", default_value_t = 86_400,
          value_parser = clap::value_parser!(i64).range(1..=31_536_000))]
    pub result_ttl_seconds: i64,

    /// Log filter, e.g. `info` or `rapid_rs=debug,info`.
    #[arg(long, env = "RUST_LOG", default_value = "info")]
    pub log_level: String,

    /// Admin client id to create (or re-key) at start-up, instead of a generated one.
    #[arg(long, env = "RAPID_ADMIN_CLIENT_ID", requires = "admin_client_secret")]
    pub admin_client_id: Option<String>,

    /// Secret of that admin client. Prefer the environment variable to the flag.
    #[arg(
        long,
        env = "RAPID_ADMIN_CLIENT_SECRET",
        hide_env_values = true,
        requires = "admin_client_id"
    )]
    pub admin_client_secret: Option<String>,

    /// HTTP worker threads (default: one per core).
    #[arg(long, env = "RAPID_WORKERS")]
    pub workers: Option<usize>,

    #[command(flatten)]
    pub limits: crate::config_limits::LimitArgs,
}

impl ServeArgs {
    /// Layers lower-cased and checked: each a simple lower-case name.
    pub fn layer_list(&self) -> Result<Vec<String>, String> {
        let layers: Vec<String> = self
            .layers
            .split(',')
            .map(|l| l.trim().to_ascii_lowercase())
            .filter(|l| !l.is_empty())
            .collect();
        if layers.is_empty() {
            return Err("at least one layer is required (--layers)".into());
        }
        for l in &layers {
            let mut chars = l.chars();
            let ok = matches!(chars.next(), Some(c) if c.is_ascii_lowercase())
                && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
            if !ok {
                return Err(format!(
                    "layer [{l}] must start with a letter and use only letters, digits and underscores"
                ));
            }
        }
        Ok(layers)
    }
}
