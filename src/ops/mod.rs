//! Operating the service: request ids and one log line per request ([`request_log`]), Prometheus
//! metrics ([`metrics`]), readiness ([`ready`]), work that must finish before shutdown
//! ([`inflight`]), the log format ([`logging`]) and the SIGTERM sequence ([`shutdown`]).

pub mod audit_log;
pub mod inflight;
pub mod logging;
pub mod metrics;
pub mod metrics_bind;
mod metrics_wire;
pub mod ready;
pub mod request_log;
pub mod shutdown;

// `/api/ready` and `/api/metrics` are routed in `crate::routes` (its one table) and documented in
// the OpenAPI document like every route.
