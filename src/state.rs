//! What every handler can reach.

use std::path::PathBuf;

use rapid_actors::auth::Auth;
use rapid_actors::registry::Registry;

pub struct AppState {
    pub auth: Auth,
    pub registry: Registry,
    pub data_dir: PathBuf,
    pub max_upload_bytes: u64,
}

impl AppState {
    /// Work in progress (uploads being received, samples being read); wiped at start-up.
    pub fn staging_dir(&self) -> PathBuf {
        self.data_dir.join("staging")
    }
}
