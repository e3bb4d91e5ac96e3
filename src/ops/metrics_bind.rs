//! `RAPID_METRICS_BIND`: metrics without a token on a separate address, for a scraper. Only
//! `GET /metrics` is served there; a non-loopback address is allowed (behind a firewall) but
//! logged as a warning, since anyone reaching it reads the metrics.

use actix_web::dev::ServerHandle;
use actix_web::{web, App, HttpServer};

use crate::config_ops::OpsArgs;
use crate::state::AppState;

/// Starts the metrics listener when configured; prints `metrics on http://ADDR` once bound.
pub fn start(args: &OpsArgs, state: web::Data<AppState>) -> std::io::Result<Option<ServerHandle>> {
    let Some(bind) = &args.metrics_bind else {
        return Ok(None);
    };
    let server = HttpServer::new(move || {
        App::new()
            .app_data(state.clone())
            .route("/metrics", web::get().to(super::metrics::get_open_metrics))
    })
    .workers(1)
    .disable_signals()
    .shutdown_timeout(1)
    .bind(bind)
    .map_err(|e| std::io::Error::other(format!("RAPID_METRICS_BIND {bind}: {e}")))?;
    for addr in server.addrs() {
        if !addr.ip().is_loopback() {
            tracing::warn!(%addr, "metrics are served without a token on a non-loopback address");
        }
        let url = format!("http://{addr}");
        super::logging::announce(args.log_format, &format!("metrics on {url}"), &url);
    }
    let server = server.run();
    let handle = server.handle();
    actix_web::rt::spawn(server);
    Ok(Some(handle))
}
