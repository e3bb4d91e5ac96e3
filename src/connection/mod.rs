//! Connections: the HTTP/1 server put together from actix-server and actix-http (rather than
//! actix-web's `HttpServer`) so that every connection goes through our front and every
//! `Expect: 100-continue` through our preflight.
//!
//! - [`front`]: judges request heads before actix-http (JSON protocol errors, header/URL limits,
//!   head and body timeouts); [`front_out`] writes its refusals.
//! - [`budget`]: per-address connection and request-rate budgets, enforced by the front.
//! - [`expect`]: refusals before `100 Continue`.
//! - [`hold`]: an answer given without reading the body closes the connection instead of
//!   draining the body, reading at most a small capped remainder of it.

pub mod budget;
mod chunked;
pub mod expect;
pub mod front;
pub mod front_out;
pub mod head;
pub mod hold;

use std::net::{SocketAddr, TcpListener, ToSocketAddrs};
use std::sync::Arc;
use std::time::Duration;

use actix_http::{HttpService, Request, Response};
use actix_rt::net::TcpStream;
use actix_server::Server;
use actix_service::{
    fn_service, map_config, IntoServiceFactory, ServiceFactory, ServiceFactoryExt,
};
use actix_web::body::MessageBody;
use actix_web::dev::AppConfig;

use crate::config::ServeArgs;
use budget::{AddressBudgets, BudgetSettings};
use front::{FrontIo, FrontSettings};

/// Everything about accepting and keeping connections.
#[derive(Debug, Clone)]
pub struct ConnectionSettings {
    pub front: FrontSettings,
    /// Per-address budgets (RAPID_ADDRESS_*).
    pub budgets: BudgetSettings,
    /// On shutdown, how long running requests may take to finish (RAPID_SHUTDOWN_TIMEOUT_SECONDS).
    pub shutdown_timeout: Duration,
    /// An idle connection is closed after this long between requests.
    pub keep_alive: Duration,
    /// After an answer given without reading the body, how long unread bytes are discarded
    /// before the connection closes (also the wait for a client to close on shutdown).
    pub linger: Duration,
    /// Open connections at most, over all workers; more wait in the listen queue.
    pub max_connections: usize,
    pub workers: usize,
}

impl ConnectionSettings {
    /// The connection limits `rapid-rs serve` is told, for [`server`].
    pub fn from_args(args: &ServeArgs) -> Result<ConnectionSettings, String> {
        let workers = args.workers.unwrap_or_else(|| {
            std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
        });
        let mut budgets = BudgetSettings::from_limits(&args.limits)?;
        // A held request is not yet visible to actix-http, whose keep-alive timer would close
        // the connection under it: the wait stays half a second short of the keep-alive.
        let keep_alive = Duration::from_secs(args.keep_alive_seconds);
        budgets.max_wait = budgets
            .max_wait
            .min(keep_alive.saturating_sub(Duration::from_millis(500)));
        Ok(ConnectionSettings {
            budgets,
            front: front::FrontSettings {
                head: head::HeadLimits {
                    max_head_bytes: args.max_header_bytes as usize,
                    max_headers: args.max_headers as usize,
                    max_url_bytes: args.max_url_bytes as usize,
                },
                head_timeout: Duration::from_secs(args.head_timeout_seconds),
                body_idle_timeout: Duration::from_secs(args.body_timeout_seconds),
            },
            keep_alive,
            linger: Duration::from_millis(args.close_linger_ms),
            max_connections: args.max_connections as usize,
            shutdown_timeout: Duration::from_secs(args.ops.shutdown_timeout_seconds),
            workers: workers.max(1),
        })
    }
}

/// Binds every address `bind` resolves to.
pub fn bind(bind: &str) -> std::io::Result<Vec<TcpListener>> {
    let mut listeners = Vec::new();
    let mut last_error = None;
    for addr in bind.to_socket_addrs()? {
        match TcpListener::bind(addr) {
            Ok(l) => listeners.push(l),
            Err(e) => last_error = Some(e),
        }
    }
    match (listeners.is_empty(), last_error) {
        (true, Some(e)) => Err(e),
        (true, None) => Err(std::io::Error::other(format!(
            "[{bind}] resolves to no address"
        ))),
        _ => Ok(listeners),
    }
}

/// The server: one HTTP/1 service per worker over `listeners`, with the application `factory`
/// makes (called twice per worker: once to serve, once to answer `Expect` probes).
pub fn server<F, I, S, B>(
    listeners: Vec<TcpListener>,
    settings: ConnectionSettings,
    factory: F,
) -> std::io::Result<Server>
where
    F: Fn() -> I + Send + Clone + 'static,
    I: IntoServiceFactory<S, Request>,
    S: ServiceFactory<Request, Config = AppConfig, Error = actix_web::Error> + 'static,
    S::Response: Into<Response<B>> + 'static,
    S::InitError: std::fmt::Debug,
    S::Service: 'static,
    B: MessageBody + 'static,
{
    let workers = settings.workers.max(1);
    let per_worker = settings.max_connections.div_ceil(workers).max(1);
    let front = Arc::new(settings.front);
    let budgets = Arc::new(AddressBudgets::new(settings.budgets.clone()));
    let mut builder = Server::build()
        .workers(workers)
        .max_concurrent_connections(per_worker)
        .shutdown_timeout(settings.shutdown_timeout.as_secs())
        .disable_signals();
    for listener in listeners {
        let local = listener.local_addr()?;
        listener.set_nonblocking(true)?;
        let (factory, settings, front) = (factory.clone(), settings.clone(), front.clone());
        let budgets = budgets.clone();
        builder = builder.listen("rapid-rs", listener, move || {
            // Only a request without a Host header (HTTP/1.0) sees the default host name.
            let app = map_config(factory().into_factory(), |_| AppConfig::default());
            let probe_app = map_config(factory().into_factory(), |_| AppConfig::default());
            let http = HttpService::build()
                .keep_alive(settings.keep_alive)
                // The front times request heads (with a JSON answer); actix-http's own timer
                // would answer with an empty 408.
                .client_request_timeout(Duration::ZERO)
                .client_disconnect_timeout(settings.linger)
                .h1_allow_half_closed(true)
                // Requests tell the front which bodies they abandoned (hold.rs).
                .on_connect_ext(|io: &FrontIo, ext| {
                    ext.insert(io.tracker());
                })
                .local_addr(local)
                .expect(expect::preflight_factory(probe_app))
                .h1(app);
            let (front, budgets) = (front.clone(), budgets.clone());
            fn_service(move |io: TcpStream| {
                let peer: Option<SocketAddr> = io.peer_addr().ok();
                let _ = io.set_nodelay(true);
                let io = FrontIo::new(io, front.clone(), budgets.clone());
                async move { Ok((io, peer)) }
            })
            .and_then(http)
        })?;
    }
    Ok(builder.run())
}
