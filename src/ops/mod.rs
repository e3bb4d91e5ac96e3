//! Operating the service: request ids and one log line per request ([`request_log`]), Prometheus
//! metrics ([`metrics`]), readiness ([`ready`]), work that must finish before shutdown
//! ([`inflight`]), the log format ([`logging`]) and the SIGTERM sequence ([`shutdown`]).

pub mod inflight;
pub mod logging;
pub mod metrics;
pub mod metrics_bind;
pub mod ready;
pub mod request_log;
pub mod shutdown;

use actix_web::web;

/// `/api/ready` and `/api/metrics`. Registered before the `/api` scope: actix gives a request to
/// the first service whose prefix matches, and the scope would answer 404 for paths it lacks.
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(web::resource("/api/ready").route(web::get().to(ready::get_ready)))
        .service(web::resource("/api/metrics").route(web::get().to(metrics::get_metrics)));
}
