//! The listeners beside the main address, each started by `server` when its setting is set: the
//! PostgreSQL wire front (`RAPID_PG_LISTEN`) and the MCP endpoint alone (`RAPID_MCP_LISTEN`).

use actix_web::middleware::{from_fn, NormalizePath, TrailingSlash};
use actix_web::{web, App};
use rapid_actors::engine::Engine;
use rapid_actors::Error;

use crate::auth::authenticate;
use crate::config::ServeArgs;
use crate::connection;
use crate::connection::hold::hold_unread_body;
use crate::error::{json_errors, ApiError};
use crate::state::AppState;

/// Binds the PostgreSQL listener when `RAPID_PG_LISTEN` is set and serves it on the query
/// threads (rapid-sqlwire); its address.
pub fn start_pg_listener(
    args: &ServeArgs,
    engine: &Engine,
) -> std::io::Result<Option<std::net::SocketAddr>> {
    if args.pg_listen.trim().is_empty() {
        return Ok(None);
    }
    let tls = match (&args.pg_tls_cert, &args.pg_tls_key) {
        (Some(cert), Some(key)) => Some(rapid_sqlwire::TlsFiles {
            cert: cert.clone(),
            key: key.clone(),
        }),
        _ => None,
    };
    let listener = rapid_sqlwire::PgListener::bind(args.pg_listen.trim(), tls.as_ref())?
        .with_bounds(rapid_sqlwire::Bounds {
            startup: std::time::Duration::from_secs(args.pg_startup_seconds),
            per_address: args.pg_connections_per_address as usize,
        });
    let addr = listener.local_addr()?;
    let engine = engine.clone();
    actix_web::rt::spawn(async move {
        if let Err(e) = listener.serve(engine).await {
            tracing::error!(error = %e.report(), "the PostgreSQL listener stopped");
        }
    });
    Ok(Some(addr))
}

/// Serves the MCP endpoint alone on `RAPID_MCP_LISTEN` when set, with the main address's
/// connection front and middleware (so the same tokens, budgets and audit rows); its handle.
pub fn start_mcp_listener(
    args: &ServeArgs,
    state: web::Data<AppState>,
) -> std::io::Result<Option<actix_web::dev::ServerHandle>> {
    let addr = args.mcp.mcp_listen.trim();
    if addr.is_empty() {
        return Ok(None);
    }
    let listeners = connection::bind(addr)?;
    let addrs: Vec<_> = listeners
        .iter()
        .map(|l| l.local_addr())
        .collect::<std::io::Result<_>>()?;
    let settings =
        connection::ConnectionSettings::from_args(args).map_err(std::io::Error::other)?;
    let server = connection::server(listeners, settings, move || {
        App::new()
            .app_data(state.clone())
            .configure(crate::mcp::configure)
            .default_service(web::to(|| async {
                let only = Error::not_found("This address serves only POST /api/mcp");
                Err::<actix_web::HttpResponse, ApiError>(ApiError(only))
            }))
            .wrap(from_fn(authenticate))
            .wrap(from_fn(json_errors))
            .wrap(from_fn(crate::ops::audit_log::audit_requests))
            .wrap(NormalizePath::new(TrailingSlash::Trim))
            .wrap(from_fn(hold_unread_body))
            .wrap(from_fn(crate::ops::request_log::log_requests))
    })?;
    let handle = server.handle();
    actix_web::rt::spawn(server);
    for addr in addrs {
        let url = format!("http://{addr}{}", crate::mcp::PATH);
        crate::ops::logging::announce(
            args.ops.log_format,
            &format!("mcp listening on {url}"),
            &url,
        );
    }
    Ok(Some(handle))
}
