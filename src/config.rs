//! The service's settings: every one is a flag of `rapid-rs serve` and an environment variable
//! (the command line itself is [`crate::cli`]).

use std::path::PathBuf;

use clap::{Args, Parser};
use rapid_actors::auth::names::parse_domain_list;
use rapid_actors::auth::{AdminCredentials, AuthSettings};
use rapid_actors::storage::Storage;
use rapid_actors::Error;

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

    /// The token signing key's file (kept 0600; created on first start). Nodes of one service
    /// must share it (the same file or a copy of it), so that a token or download link from one
    /// node verifies on another. Default: `token-signing.key` in the data folder.
    #[arg(long, env = "RAPID_KEY_FILE")]
    pub key_file: Option<PathBuf>,

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

    /// `full`: every acknowledged change is fsynced first and survives a power cut. `off`: no
    /// fsyncs (faster); a power cut may lose recently acknowledged changes (docs/durability.md).
    #[arg(long, env = "RAPID_DURABILITY", default_value = "full")]
    pub durability: rapid_actors::storage::Durability,

    /// Open connections at most (over all workers); further clients wait in the listen queue.
    #[arg(long, env = "RAPID_MAX_CONNECTIONS", default_value_t = 1024,
          value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub max_connections: u64,

    /// Longest request URL (path and query), in bytes (longer: 414).
    #[arg(long, env = "RAPID_MAX_URL_BYTES", default_value_t = 8192,
          value_parser = clap::value_parser!(u64).range(64..=65_536))]
    pub max_url_bytes: u64,

    /// Largest request head (request line and headers), in bytes (larger: 431).
    #[arg(long, env = "RAPID_MAX_HEADER_BYTES", default_value_t = 32_768,
          value_parser = clap::value_parser!(u64).range(1024..=65_536))]
    pub max_header_bytes: u64,

    /// Most header fields in one request (more: 431).
    #[arg(long, env = "RAPID_MAX_HEADERS", default_value_t = 64,
          value_parser = clap::value_parser!(u64).range(8..=96))]
    pub max_headers: u64,

    /// Seconds a client has to send a whole request head (counted from its first byte, or from
    /// connecting for the first request); slower: 408 and the connection closed.
    #[arg(long, env = "RAPID_HEAD_TIMEOUT_SECONDS", default_value_t = 10,
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub head_timeout_seconds: u64,

    /// Seconds a request body may receive nothing before the connection is closed.
    #[arg(long, env = "RAPID_BODY_TIMEOUT_SECONDS", default_value_t = 60,
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub body_timeout_seconds: u64,

    /// Seconds an idle connection is kept open between requests.
    #[arg(long, env = "RAPID_KEEP_ALIVE_SECONDS", default_value_t = 5,
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub keep_alive_seconds: u64,

    /// After an answer given without reading the request body (a refusal), milliseconds the
    /// unread bytes are discarded before the connection closes, so the client reads the answer.
    #[arg(long, env = "RAPID_CLOSE_LINGER_MS", default_value_t = 1000,
          value_parser = clap::value_parser!(u64).range(1..=60_000))]
    pub close_linger_ms: u64,
    /// Largest query body, in bytes (larger: 413).
    #[arg(long, env = "RAPID_QUERY_MAX_BODY_BYTES", default_value_t = 256 * 1024,
          value_parser = clap::value_parser!(u64).range(1024..=(1 << 30)))]
    pub query_max_body_bytes: u64,

    /// Longest string (expression) in any query field, in bytes (at most 10,000: the query
    /// checker's own ceiling).
    #[arg(long, env = "RAPID_QUERY_MAX_EXPRESSION_BYTES", default_value_t = 10_000,
          value_parser = clap::value_parser!(u64).range(16..=10_000))]
    pub query_max_expression_bytes: u64,

    /// Most terms (operands and operators) in one query, all fields together.
    #[arg(long, env = "RAPID_QUERY_MAX_NODES", default_value_t = 1_000,
          value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub query_max_nodes: u64,

    /// Deepest nesting of a query expression (brackets, calls, filter groups, operator chains).
    #[arg(long, env = "RAPID_QUERY_MAX_DEPTH", default_value_t = 50,
          value_parser = clap::value_parser!(u64).range(4..=rapid_actors::query::DEPTH_CEILING as u64))]
    pub query_max_depth: u64,

    /// Longest a synchronous query may run, in seconds (then 400, pointing to /query/large).
    #[arg(long, env = "RAPID_QUERY_TIMEOUT_SECONDS", default_value_t = 30,
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub query_timeout_seconds: u64,

    /// Longest a large-query job may run, in seconds (then the job FAILS).
    #[arg(long, env = "RAPID_LARGE_QUERY_TIMEOUT_SECONDS", default_value_t = 3600,
          value_parser = clap::value_parser!(u64).range(1..=604_800))]
    pub large_query_timeout_seconds: u64,

    /// Memory all running queries may use together, in bytes; beyond it they spill or fail.
    #[arg(long, env = "RAPID_QUERY_MEMORY_BYTES", default_value_t = 1 << 30,
          value_parser = clap::value_parser!(u64).range((1 << 20)..))]
    pub query_memory_bytes: u64,

    /// Most bytes queries may spill to `{data-dir}/spill` at once.
    #[arg(long, env = "RAPID_QUERY_SPILL_BYTES", default_value_t = 10 << 30)]
    pub query_spill_bytes: u64,

    /// Synchronous queries running at once (default: twice the cores, at least 4).
    #[arg(long, env = "RAPID_QUERY_CONCURRENCY",
          value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub query_concurrency: Option<u64>,

    /// Large-query jobs running at once (default: half the cores, at least 1).
    #[arg(long, env = "RAPID_LARGE_QUERY_CONCURRENCY",
          value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub large_query_concurrency: Option<u64>,

    /// Large-query jobs accepted while every large-query slot is taken; they start in turn
    /// (default: eight per slot). With these full too, a new job is refused (503).
    #[arg(long, env = "RAPID_LARGE_QUERY_QUEUE",
          value_parser = clap::value_parser!(u64).range(0..=65_536))]
    pub large_query_queue: Option<u64>,

    /// How long a query waits for a free slot before it is refused (503), in milliseconds.
    #[arg(long, env = "RAPID_QUERY_QUEUE_WAIT_MS", default_value_t = 1000,
          value_parser = clap::value_parser!(u64).range(0..=60_000))]
    pub query_queue_wait_ms: u64,

    /// Threads running queries (default: one per query slot, sync and large).
    #[arg(long, env = "RAPID_QUERY_THREADS",
          value_parser = clap::value_parser!(u64).range(1..=256))]
    pub query_threads: Option<u64>,

    /// How long a web page session lasts after sign-in, in seconds (server-side expiry).
    #[arg(long, env = "RAPID_WEB_SESSION_TTL_SECONDS", default_value_t = 28_800,
          value_parser = clap::value_parser!(i64).range(60..=2_592_000))]
    pub web_session_ttl_seconds: i64,

    /// The origin clients reach the service at (`https://data.example.com`, optionally with a
    /// path prefix): every link the service gives starts with it. Unset: the request's host
    /// (forwarded host and scheme believed only from trusted proxies).
    #[arg(long, env = "RAPID_PUBLIC_URL")]
    pub public_url: Option<String>,

    /// Mark the web session cookie `Secure` (set it when the pages are served over HTTPS).
    #[arg(long, env = "RAPID_WEB_SECURE_COOKIE", default_value_t = false)]
    pub web_secure_cookie: bool,

    /// Where raw uploads, data Parquet and large-query results are kept: unset = the data
    /// folder; `s3://bucket/prefix` = an S3-compatible bucket, reached with the standard AWS
    /// settings (AWS_ENDPOINT_URL, AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
    /// AWS_ALLOW_HTTP). Staging, the catalog and the key files stay in the data folder.
    #[arg(long, env = "RAPID_STORAGE_URL")]
    pub storage_url: Option<String>,

    /// On S3 storage: seconds an object no catalog row lists is kept before the sweeper removes
    /// it (so another node's commit in flight is never swept).
    #[arg(long, env = "RAPID_SWEEP_GRACE_SECS", default_value_t = 3600)]
    pub sweep_grace_secs: u64,

    /// The catalog: unset (or empty) for the SQLite file in the data folder;
    /// `postgres://user:password@host:port/database` for PostgreSQL, shared by several nodes.
    #[arg(long, env = "RAPID_CATALOG_URL", hide_env_values = true)]
    pub catalog_url: Option<String>,

    /// This node's name among the nodes sharing a PostgreSQL catalog (its jobs carry it; its
    /// start fails its own unfinished jobs). Default: `local` with SQLite, a random one with
    /// PostgreSQL.
    #[arg(long, env = "RAPID_NODE_ID")]
    pub node_id: Option<String>,

    /// A running job whose node has not refreshed its heartbeat for this long is failed by any
    /// node, in seconds.
    #[arg(long, env = "RAPID_JOB_LEASE_SECS", default_value_t = 60,
          value_parser = clap::value_parser!(u64).range(3..=86_400))]
    pub job_lease_secs: u64,

    /// Address of the PostgreSQL wire listener (psql, pandas, DBeaver: docs/guide.md); unset or
    /// empty: off. Loopback addresses only unless TLS is set (passwords travel in clear text);
    /// port 0 picks a free port, printed at start-up (`postgresql listening on ADDR`).
    #[arg(long, env = "RAPID_PG_LISTEN", default_value = "")]
    pub pg_listen: String,

    /// The PostgreSQL listener's TLS certificate chain (PEM); with `RAPID_PG_TLS_KEY` it offers
    /// TLS and may listen beyond loopback (clients from other hosts must use it).
    #[arg(long, env = "RAPID_PG_TLS_CERT", requires = "pg_tls_key")]
    pub pg_tls_cert: Option<PathBuf>,

    /// The PostgreSQL listener's TLS private key (PEM, PKCS#8 or RSA).
    #[arg(long, env = "RAPID_PG_TLS_KEY", requires = "pg_tls_cert")]
    pub pg_tls_key: Option<PathBuf>,

    /// A PostgreSQL connection that has not finished startup and sign-in within this many
    /// seconds is closed.
    #[arg(long, env = "RAPID_PG_STARTUP_SECONDS", default_value_t = 10,
          value_parser = clap::value_parser!(u64).range(1..=300))]
    pub pg_startup_seconds: u64,

    /// Open PostgreSQL connections from one source address; more are refused with SQLSTATE
    /// 53300 (too_many_connections).
    #[arg(long, env = "RAPID_PG_CONNECTIONS_PER_ADDRESS", default_value_t = 16,
          value_parser = clap::value_parser!(u64).range(1..=256))]
    pub pg_connections_per_address: u64,
    #[command(flatten)]
    pub limits: crate::config_limits::LimitArgs,
    #[command(flatten)]
    pub ops: crate::config_ops::OpsArgs,
    #[command(flatten)]
    pub mcp: crate::config_mcp::McpArgs,
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

impl ServeArgs {
    /// The query engine's settings; its spill folder is `{data-dir}/spill`.
    pub fn query_settings(&self) -> rapid_actors::query::QuerySettings {
        use std::time::Duration;
        let defaults = rapid_actors::query::QuerySettings::default();
        let size = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        let concurrency = self.query_concurrency.map_or(defaults.concurrency, size);
        let large_concurrency = self
            .large_query_concurrency
            .map_or(defaults.large_concurrency, size);
        rapid_actors::query::QuerySettings {
            limits: rapid_actors::query::QueryLimits {
                max_expression_bytes: size(self.query_max_expression_bytes),
                max_nodes: size(self.query_max_nodes),
                max_depth: size(self.query_max_depth),
            },
            timeout: Duration::from_secs(self.query_timeout_seconds),
            large_timeout: Duration::from_secs(self.large_query_timeout_seconds),
            memory_bytes: size(self.query_memory_bytes),
            spill_dir: Some(rapid_actors::storage::Storage::new(&self.data_dir).spill_dir()),
            spill_bytes: self.query_spill_bytes,
            concurrency,
            large_concurrency,
            large_queue: self.large_query_queue.map_or_else(
                || rapid_actors::query::default_large_queue(large_concurrency),
                size,
            ),
            queue_wait: Duration::from_millis(self.query_queue_wait_ms),
            threads: self.query_threads.map_or_else(
                || rapid_actors::query::default_threads(concurrency, large_concurrency),
                size,
            ),
        }
    }
}

impl ServeArgs {
    /// The PostgreSQL catalog's URL; `None` (unset or empty): the SQLite catalog in the data folder.
    pub fn postgres_catalog(&self) -> Option<&str> {
        postgres_catalog(self.catalog_url.as_deref())
    }

    /// This node's id: as set, else `local` for the one node of a SQLite catalog, else a new
    /// random one (a restarted node's old jobs then fail by their lease).
    pub fn node_id(&self) -> String {
        match (
            self.node_id.as_deref().map(str::trim),
            self.postgres_catalog(),
        ) {
            (Some(id), _) if !id.is_empty() => id.to_string(),
            (_, None) => "local".into(),
            (_, Some(_)) => format!("node-{}", uuid::Uuid::new_v4().simple()),
        }
    }
}

/// A catalog URL setting, `None` when unset or empty.
pub fn postgres_catalog(url: Option<&str>) -> Option<&str> {
    url.map(str::trim).filter(|u| !u.is_empty())
}

/// Only to read the environment the way `rapid-rs serve` does.
#[derive(Parser)]
#[command(name = "rapid-rs")]
struct ServeOnly {
    #[command(flatten)]
    serve: ServeArgs,
}

impl ServeArgs {
    /// The settings of a command run on a stopped data folder (`rapid-rs admin`): the service's
    /// defaults and its `RAPID_*` environment variables, with `layers` and one hash worker.
    pub fn for_admin(data_dir: &std::path::Path, layers: &str) -> Result<ServeArgs, Error> {
        let only =
            ServeOnly::try_parse_from(["rapid-rs", "--layers", layers, "--hash-workers", "1"])
                .map_err(|e| Error::invalid(e.to_string()))?;
        let mut args = only.serve;
        args.data_dir = data_dir.to_path_buf();
        Ok(args)
    }

    /// What auth needs from the settings.
    pub fn auth_settings(&self) -> Result<AuthSettings, Error> {
        let admin_override = match (&self.admin_client_id, &self.admin_client_secret) {
            (Some(id), Some(secret)) => Some(AdminCredentials {
                client_id: id.clone(),
                client_secret: secret.clone(),
            }),
            _ => None,
        };
        let data = Storage::new(&self.data_dir);
        Ok(AuthSettings {
            token_ttl_seconds: self.token_ttl_seconds,
            allowed_email_domains: parse_domain_list(&self.allowed_email_domains),
            admin_override,
            credentials_file: data.admin_credentials_file(),
            key_file: self.key_file.clone().unwrap_or_else(|| data.key_file()),
            layers: self.layer_list().map_err(Error::invalid)?,
            hash_pool: self.limits.hash_pool(),
            throttle: self.limits.throttle(),
        })
    }
}
