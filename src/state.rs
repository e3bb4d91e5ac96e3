//! What every handler can reach: the engine, and the edge's own limits.

use rapid_actors::auth::Auth;
use rapid_actors::engine::Engine;
use rapid_actors::work_permits::WorkPermits;
use rapid_actors::Error;

use crate::client_addr::TrustedProxies;

pub struct AppState {
    /// The one entrance to the engine: every use case is a method of it.
    pub engine: Engine,
    pub max_upload_bytes: u64,
    /// Largest query body accepted (RAPID_QUERY_MAX_BODY_BYTES).
    pub query_max_body_bytes: u64,
    /// Whose `X-Forwarded-For` is believed for the client address.
    pub trusted_proxies: TrustedProxies,
    /// The origin links start with, when set (RAPID_PUBLIC_URL).
    pub public_url: Option<crate::origin::PublicUrl>,
    /// Schema generations running at once.
    pub generations: WorkPermits,
    /// The longest single value in an upload or sample.
    pub max_value_bytes: usize,
    /// The MCP endpoint's answer caps and whether it offers write tools.
    pub mcp: crate::config_mcp::McpSettings,
}

impl AppState {
    /// Subjects, credentials, tokens, permissions and protected domains.
    pub fn auth(&self) -> &Auth {
        self.engine.auth()
    }

    /// The address sign-in attempts are throttled by.
    pub fn client_addr(&self, req: &actix_web::HttpRequest) -> Result<std::net::IpAddr, Error> {
        self.trusted_proxies
            .client_of(req)
            .ok_or_else(|| Error::internal("a request without a peer address"))
    }

    /// The origin (`scheme://host[:port][/prefix]`) of links in the answer to `req`.
    pub fn link_origin(&self, req: &actix_web::HttpRequest) -> String {
        crate::origin::link_origin(req, self.public_url.as_ref(), &self.trusted_proxies)
    }
}
