//! What every handler can reach.

use std::path::PathBuf;

use rapid_actors::auth::Auth;
use rapid_actors::jobs::Jobs;
use rapid_actors::registry::Registry;
use rapid_actors::work_permits::WorkPermits;

use crate::client_addr::TrustedProxies;

pub struct AppState {
    pub auth: Auth,
    pub registry: Registry,
    pub jobs: Jobs,
    pub max_upload_bytes: u64,
    pub result_ttl_seconds: i64,
    /// Largest query body accepted (RAPID_QUERY_MAX_BODY_BYTES).
    pub query_max_body_bytes: u64,
    /// Whose `X-Forwarded-For` is believed for the client address.
    pub trusted_proxies: TrustedProxies,
    /// Schema generations running at once.
    pub generations: WorkPermits,
    /// The longest single value in an upload or sample.
    pub max_value_bytes: usize,
    /// The web pages' sessions (src/web).
    pub web: crate::web::WebState,
}

impl AppState {
    /// Work in progress (uploads being received, samples being read); wiped at start-up.
    pub fn staging_dir(&self) -> PathBuf {
        self.registry.storage().staging_root()
    }
}
