//! Start-up: open the engine (catalog, recovery, actors), bind, serve until SIGINT/SIGTERM.

use std::sync::Arc;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::error::{JsonPayloadError, PathError, QueryPayloadError};
use actix_web::middleware::{from_fn, NormalizePath, TrailingSlash};
use actix_web::{web, App, HttpRequest};
use rapid_actors::auth::Bootstrap;
use rapid_actors::engine::{Engine, EngineConfig};
use rapid_actors::work_permits::WorkPermits;
use rapid_actors::{Error, ErrorKind};

use crate::auth::{authenticate, PublicPaths};
use crate::client_addr::TrustedProxies;
use crate::config::ServeArgs;
use crate::connection;
use crate::connection::hold::hold_unread_body;
use crate::error::{json_errors, ApiError};
use crate::file_modes;
use crate::routes;
use crate::side_listeners;
use crate::state::AppState;
use crate::web::WebState;

/// Largest JSON body accepted by the JSON routes (schemas, queries, subjects).
const JSON_LIMIT: usize = 4 * 1024 * 1024;

/// Serves until SIGINT or SIGTERM, then shuts down gracefully.
pub async fn serve(args: ServeArgs) -> std::io::Result<()> {
    // Signal handlers are registered before the ready line is printed, so a SIGTERM sent the
    // moment a script sees that line still shuts down gracefully.
    let shutdown = shutdown_signal()?;
    serve_until(args, shutdown).await
}

/// Serves until `shutdown` resolves (a signal, or whatever an embedding program or test
/// chooses), then drains: the same graceful stop as on SIGTERM.
pub async fn serve_until(
    args: ServeArgs,
    shutdown: impl std::future::Future<Output = ()> + 'static,
) -> std::io::Result<()> {
    // Before any thread allocates: the same allocator behaviour for every request.
    rapid_actors::allocator::steady();
    // First, so a folder of another account is refused with its own reason; and before the
    // catalog opens: SQLite gives its WAL and SHM files the catalog file's mode.
    let tightened = file_modes::secure_data_dir(&args.data_dir).map_err(std::io::Error::other)?;
    for change in &tightened {
        tracing::warn!(change, "tightened a file mode in the data folder");
    }
    // One process per data folder with the SQLite catalog: a second service, or an admin command
    // needing the service stopped, is refused while this one runs (the kernel releases the lock
    // on exit). A PostgreSQL catalog is shared by several nodes, which may share the folder too.
    let _lock = match args.postgres_catalog() {
        Some(_) => None,
        None => Some(
            crate::admin::lock::DataLock::acquire(&args.data_dir).map_err(|e| {
                std::io::Error::other(format!("data folder {}: {e}", args.data_dir.display()))
            })?,
        ),
    };
    let state = build_state(&args).map_err(|e| std::io::Error::other(e.to_string()))?;
    let state = web::Data::from(Arc::new(state));
    spawn_result_cleanup(state.clone());

    let listeners = connection::bind(&args.bind)?;
    let addrs: Vec<_> = listeners
        .iter()
        .map(|l| l.local_addr())
        .collect::<std::io::Result<_>>()?;
    let app_state = state.clone();
    let settings =
        connection::ConnectionSettings::from_args(&args).map_err(std::io::Error::other)?;
    let sessions = web::Data::new(WebState::new(
        args.web_session_ttl_seconds,
        args.web_secure_cookie,
    ));
    let server = connection::server(listeners, settings, move || {
        build_app(app_state.clone(), sessions.clone())
    })?;
    let metrics_server = crate::ops::metrics_bind::start(&args.ops, state.clone())?;
    let pg_addr = side_listeners::start_pg_listener(&args, &state.engine)?;
    let mcp_server = side_listeners::start_mcp_listener(&args, state.clone())?;
    let handle = server.handle();
    let timeout = std::time::Duration::from_secs(args.ops.shutdown_timeout_seconds);
    let engine = state.engine.clone();
    actix_web::rt::spawn(async move {
        shutdown.await;
        if let Some(metrics) = metrics_server {
            metrics.stop(false).await;
        }
        if let Some(mcp) = &mcp_server {
            mcp.stop(true).await;
        }
        crate::ops::shutdown::drain(handle, engine, timeout).await;
    });
    if let Some(addr) = pg_addr {
        let message = format!("postgresql listening on {addr}");
        crate::ops::logging::announce(
            args.ops.log_format,
            &message,
            &format!("postgresql://{addr}"),
        );
    }
    for addr in addrs {
        // Scripts and tests wait for this exact line (text), or its `url` (JSON).
        let url = format!("http://{addr}");
        crate::ops::logging::announce(args.ops.log_format, &format!("listening on {url}"), &url);
    }
    server.await?;
    if let Err(e) = state.engine.audit().flush().await {
        tracing::error!(error = %e.report(), "shutdown: audit rows handed over were not all stored");
    }
    crate::ops::shutdown::fail_unfinished(&state);
    Ok(())
}

/// Served without a token: the API's public routes, its document and docs page, the web pages.
const PUBLIC: PublicPaths = PublicPaths(&[
    routes::is_public,
    crate::openapi::is_public,
    crate::web::is_page,
]);

/// The application: routes, body limits, and the middleware (outermost last).
fn build_app(
    state: web::Data<AppState>,
    sessions: web::Data<WebState>,
) -> App<
    impl ServiceFactory<
        ServiceRequest,
        Config = (),
        Response = ServiceResponse<impl MessageBody>,
        Error = actix_web::Error,
        InitError = (),
    >,
> {
    App::new()
        .app_data(state)
        .app_data(PUBLIC)
        .app_data(
            web::JsonConfig::default()
                .limit(JSON_LIMIT)
                .error_handler(json_error),
        )
        .app_data(web::PathConfig::default().error_handler(path_error))
        .app_data(web::QueryConfig::default().error_handler(query_error))
        .configure(crate::openapi::configure)
        // Before the API's `/api` scope, which would otherwise take `/api/mcp`.
        .configure(crate::mcp::configure)
        .configure(routes::configure)
        .configure(crate::web::configure(sessions))
        .default_service(web::to(crate::web::not_found))
        .wrap(from_fn(authenticate))
        .wrap(from_fn(json_errors))
        // Outside the two above: it sees the subject and the final status of every answer.
        .wrap(from_fn(crate::ops::audit_log::audit_requests))
        .wrap(NormalizePath::new(TrailingSlash::Trim))
        .wrap(from_fn(hold_unread_body))
        .wrap(from_fn(crate::ops::request_log::log_requests))
}

/// Resolves on SIGINT or SIGTERM. The handlers exist once this returns.
fn shutdown_signal() -> std::io::Result<impl std::future::Future<Output = ()>> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    Ok(async move {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
    })
}

fn build_state(args: &ServeArgs) -> Result<AppState, Error> {
    let layers = args.layer_list().map_err(Error::invalid)?;
    if args.durability == rapid_actors::storage::Durability::Off {
        tracing::warn!("RAPID_DURABILITY=off: a power cut may lose acknowledged changes");
    }
    let settings = args.auth_settings()?;
    let trusted_proxies =
        TrustedProxies::parse(&args.limits.trusted_proxies).map_err(Error::invalid)?;
    let node_id = args.node_id();
    tracing::info!(node_id, "this node's jobs carry its id");
    let (engine, bootstrap) = Engine::open(EngineConfig {
        data_dir: args.data_dir.clone(),
        catalog_url: args.postgres_catalog().map(str::to_string),
        node_id: node_id.clone(),
        job_lease: std::time::Duration::from_secs(args.job_lease_secs),
        layers,
        auth: settings,
        query: args.query_settings(),
        max_upload_bytes: args.max_upload_bytes,
        max_value_bytes: args.limits.max_value_bytes as usize,
        result_ttl_seconds: args.result_ttl_seconds,
        storage_url: args.storage_url.clone(),
        sweep_grace: std::time::Duration::from_secs(args.sweep_grace_secs),
        durability: args.durability,
        delta_checkpoint_interval: args.ops.delta_checkpoint_interval,
        compaction: args.ops.compaction(),
        history: args.ops.history(),
        audit_retention: args.ops.audit_retention(),
        profile_uploads: args.ops.profile_uploads,
        deliveries: args
            .ops
            .deliveries(args.public_url.as_deref().unwrap_or(""))?,
    })?;
    match bootstrap {
        Bootstrap::Existing => {}
        Bootstrap::FromEnvironment { client_id } => {
            tracing::info!(
                client_id,
                "admin client set from RAPID_ADMIN_CLIENT_ID/SECRET"
            )
        }
        Bootstrap::Generated { client_id, file } => tracing::warn!(
            client_id,
            file = %file.display(),
            "first start: generated an admin client; its secret is in the file (mode 0600)"
        ),
    }
    Ok(AppState {
        engine,
        max_upload_bytes: args.max_upload_bytes,
        query_max_body_bytes: args.query_max_body_bytes,
        trusted_proxies,
        public_url: match args.public_url.as_deref().filter(|u| !u.trim().is_empty()) {
            Some(url) => Some(crate::origin::PublicUrl::parse(url).map_err(Error::invalid)?),
            None => None,
        },
        generations: WorkPermits::new(
            args.limits.generate_workers(),
            std::time::Duration::from_millis(args.limits.generate_wait_ms),
            "schema generations",
        ),
        max_value_bytes: args.limits.max_value_bytes as usize,
        mcp: args.mcp.settings(),
    })
}

/// Expired large-query results are removed at start-up and every ten minutes; so are the retired
/// files of commits past history retention (commits age out without new ones); on S3 storage,
/// objects no catalog row lists are swept at the same pace once older than the grace period.
fn spawn_result_cleanup(state: web::Data<AppState>) {
    actix_web::rt::spawn(async move {
        let mut tick = actix_web::rt::time::interval(std::time::Duration::from_secs(600));
        loop {
            tick.tick().await;
            let engine = state.engine.clone();
            let removed = tokio::task::spawn_blocking(move || engine.remove_expired_results())
                .await
                .unwrap_or(0);
            if removed > 0 {
                tracing::info!(removed, "removed expired query results");
            }
            let engine = state.engine.clone();
            match tokio::task::spawn_blocking(move || engine.expire_history()).await {
                Ok(Ok(0)) | Err(_) => {}
                Ok(Ok(expired)) => tracing::info!(expired, "removed files of expired commits"),
                Ok(Err(e)) => tracing::warn!(error = %e.report(), "expiring old commits"),
            }
            let engine = state.engine.clone();
            match tokio::task::spawn_blocking(move || engine.sweep_unlisted_objects()).await {
                Ok(Ok(0)) | Err(_) => {}
                Ok(Ok(swept)) => tracing::info!(swept, "swept objects no catalog row lists"),
                Ok(Err(e)) => tracing::warn!(error = %e.report(), "sweeping unlisted objects"),
            }
        }
    });
}

fn json_error(err: JsonPayloadError, _: &HttpRequest) -> actix_web::Error {
    let e = match &err {
        JsonPayloadError::Overflow { limit }
        | JsonPayloadError::OverflowKnownLength { limit, .. } => Error::new(
            ErrorKind::TooLarge,
            format!("The JSON body is larger than {limit} bytes"),
        ),
        JsonPayloadError::ContentType => {
            Error::invalid("Expected a JSON body with Content-Type: application/json")
        }
        JsonPayloadError::Deserialize(e) if e.is_data() => {
            Error::invalid(format!("Invalid request body: {e}"))
        }
        other => Error::invalid(format!("Malformed JSON body: {other}")),
    };
    ApiError(e).into()
}

fn path_error(err: PathError, _: &HttpRequest) -> actix_web::Error {
    ApiError(Error::invalid(format!("Invalid path: {err}"))).into()
}

fn query_error(err: QueryPayloadError, _: &HttpRequest) -> actix_web::Error {
    ApiError(Error::invalid(format!("Invalid query string: {err}"))).into()
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Only {
        #[command(flatten)]
        serve: ServeArgs,
    }

    fn args(data: &std::path::Path) -> ServeArgs {
        let data = data.display().to_string();
        Only::parse_from(["t", "--bind", "127.0.0.1:0", "--data-dir", &data]).serve
    }

    #[actix_web::test]
    async fn serve_until_stops_when_told_and_frees_the_data_folder() {
        let dir = tempfile::tempdir().unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let running = actix_web::rt::spawn(serve_until(args(dir.path()), async move {
            let _ = stopped.await;
        }));
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        if running.is_finished() {
            panic!("stopped unasked: {:?}", running.await);
        }
        stop.send(()).unwrap();
        let outcome = tokio::time::timeout(std::time::Duration::from_secs(60), running)
            .await
            .expect("stopped in time")
            .unwrap();
        assert!(outcome.is_ok(), "{outcome:?}");
        // The folder is free for the next service (or an admin command needing it stopped).
        crate::admin::lock::DataLock::acquire(dir.path()).expect("data folder released");
    }
}
