//! # rapid-sqlwire: the PostgreSQL wire front of rapid-rs
//!
//! psql, pandas, DBeaver and other PostgreSQL clients connect here and see, as tables, exactly
//! the datasets their subject may read. The protocol and the `pg_catalog` / `information_schema`
//! emulation come from `datafusion-postgres` (over `pgwire`); this crate adds what that library
//! leaves to its user (docs/DESIGN.md, "SQL and the PostgreSQL protocol"):
//! - [`signin`]: the user and password are a client's id and secret or a user's name and
//!   password, checked by the engine's sign-in (its throttle and hash pool);
//! - [`session`]: the engine's SQL session for the pass the sign-in gave; each statement
//!   ([`statements`]) asks it to re-read the subject and its readable datasets and to apply the
//!   statement rules (the read-only gate, a query slot, the time limit, the row cap), which
//!   live in the engine, not here;
//! - [`errors`]: every refusal is a PostgreSQL error with its SQLSTATE, never a dropped
//!   connection.
//!
//! The listener runs on the query engine's runtime, so every parse, plan and run of a statement
//! happens on the query threads, as for HTTP queries.

mod audit;
mod bodies;
mod case_lookups;
mod catalog_rewrites;
mod catalogue_tables;
mod connection;
mod copy_binary;
mod copy_out;
mod ctid;
mod described;
pub mod errors;
pub mod figures;
mod format_function;
pub mod framing;
mod functions;
mod like_escape;
mod meta_functions;
mod one_message;
mod pg_types;
mod privileges;
mod projection_parameters;
mod projection_subqueries;
mod regproc_names;
mod rewrite;
mod roles;
mod savepoints;
mod search_path;
mod session;
mod settings;
mod signin;
mod statements;
#[cfg(test)]
mod test_answers;
pub mod tls;

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr, TcpListener as StdListener};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use datafusion_postgres::pgwire::api::ConnectionManager;
use datafusion_postgres::pgwire::tokio::TlsAcceptor;
use rapid_actors::engine::Engine;
use rapid_actors::Error;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::Semaphore;

/// Open connections accepted at once; more are closed at once (each holds a session).
pub const MAX_CONNECTIONS: usize = 256;

/// Connections being refused at once (each answered 53300 within [`REFUSAL_WINDOW`]); more are
/// closed without an answer.
const MAX_REFUSING: usize = 32;

/// How long a refused connection may take to send its startup message before its answer.
const REFUSAL_WINDOW: Duration = Duration::from_secs(2);

/// The listener's bounds on connections (`RAPID_PG_STARTUP_SECONDS`,
/// `RAPID_PG_CONNECTIONS_PER_ADDRESS`).
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// A connection that has not finished startup and sign-in within this is closed.
    pub startup: Duration,
    /// Open connections from one source address; more are refused with 53300.
    pub per_address: usize,
}

impl Default for Bounds {
    fn default() -> Bounds {
        Bounds {
            startup: Duration::from_secs(10),
            per_address: 16,
        }
    }
}

/// The listener's certificate and key (PEM files).
#[derive(Debug, Clone)]
pub struct TlsFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// The PostgreSQL listener, bound (so its address is known) but not yet serving.
pub struct PgListener {
    listener: StdListener,
    tls: Option<TlsAcceptor>,
    bounds: Bounds,
}

impl PgListener {
    /// Binds `addr`. Passwords travel in clear text over this protocol: without `tls` only a
    /// loopback address is accepted; with it, sign-ins from other addresses must use TLS
    /// (see [`signin`]).
    pub fn bind(addr: &str, tls: Option<&TlsFiles>) -> std::io::Result<PgListener> {
        let tls = tls.map(|t| tls::acceptor(&t.cert, &t.key)).transpose()?;
        let listener = StdListener::bind(addr)?;
        let local = listener.local_addr()?;
        if tls.is_none() && !local.ip().is_loopback() {
            return Err(std::io::Error::other(format!(
                "RAPID_PG_LISTEN={addr}: the PostgreSQL listener carries passwords in clear text, \
                 so without TLS (RAPID_PG_TLS_CERT, RAPID_PG_TLS_KEY) it listens on a loopback \
                 address only (127.0.0.1:5432, [::1]:5432)"
            )));
        }
        listener.set_nonblocking(true)?;
        Ok(PgListener {
            listener,
            tls,
            bounds: Bounds::default(),
        })
    }

    /// Sets the bounds on connections (otherwise [`Bounds::default`]).
    pub fn with_bounds(mut self, bounds: Bounds) -> PgListener {
        self.bounds = bounds;
        self
    }

    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Accepts connections until dropped, on the query threads.
    pub async fn serve(self, engine: Engine) -> rapid_actors::Result<()> {
        let pools = engine.query_pools().clone();
        pools
            .spawn(accept(self.listener, self.tls, self.bounds, engine))
            .await
    }
}

async fn accept(
    listener: StdListener,
    tls: Option<TlsAcceptor>,
    bounds: Bounds,
    engine: Engine,
) -> rapid_actors::Result<()> {
    let listener = tokio::net::TcpListener::from_std(listener)
        .map_err(|e| Error::internal(format!("PostgreSQL listener: {e}")))?;
    let open = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let refusing = Arc::new(Semaphore::new(MAX_REFUSING));
    let addresses = Arc::new(Mutex::new(HashMap::new()));
    let manager = Arc::new(ConnectionManager::new());
    loop {
        let (socket, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                tracing::warn!(error = %e, "PostgreSQL listener: accept failed");
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            }
        };
        let Ok(permit) = open.clone().try_acquire_owned() else {
            figures::FIGURES
                .refused_full
                .fetch_add(1, Ordering::Relaxed);
            tracing::warn!(%peer, "PostgreSQL listener: {MAX_CONNECTIONS} connections open, closing a new one");
            continue;
        };
        let Some(address) = AddressSlot::take(&addresses, peer.ip(), bounds.per_address) else {
            figures::FIGURES
                .refused_per_address
                .fetch_add(1, Ordering::Relaxed);
            tracing::warn!(%peer, "PostgreSQL listener: {} connections open from this address, refusing a new one", bounds.per_address);
            drop(permit);
            if let Ok(refusal) = refusing.clone().try_acquire_owned() {
                let message = format!(
                    "too many connections from this address: at most {} \
                     (RAPID_PG_CONNECTIONS_PER_ADDRESS)",
                    bounds.per_address
                );
                tokio::spawn(async move {
                    let _refusal = refusal;
                    let _ = tokio::time::timeout(REFUSAL_WINDOW, refuse(socket, &message)).await;
                });
            }
            continue;
        };
        let slots = (permit, address);
        serve_connection(
            (socket, peer),
            slots,
            tls.clone(),
            bounds,
            (&engine, &manager),
        );
    }
}

/// Serves one accepted connection on its own task, holding its slots (the listener's and its
/// address's) until it ends.
fn serve_connection(
    (socket, peer): (tokio::net::TcpStream, SocketAddr),
    slots: (tokio::sync::OwnedSemaphorePermit, AddressSlot),
    tls: Option<TlsAcceptor>,
    bounds: Bounds,
    (engine, manager): (&Engine, &Arc<ConnectionManager>),
) {
    // A second handle on the socket tells a running statement that the client has gone.
    let (socket, watcher) = match split_watcher(socket) {
        Ok(pair) => pair,
        Err(e) => {
            tracing::warn!(%peer, error = %e, "PostgreSQL listener: socket setup failed");
            return;
        }
    };
    let handlers = Arc::new(connection::Connection::new(
        engine.clone(),
        peer.ip(),
        manager.clone(),
        watcher,
    ));
    let signed_in = handlers.signed_in();
    // Named by sign-in (backend pid and subject): every line logged for this connection and
    // its statements says whose session it was.
    let span = tracing::info_span!(
        "pg_connection",
        %peer,
        pid = tracing::field::Empty,
        subject = tracing::field::Empty
    );
    let connection = async move {
        let _slots = (slots, figures::OpenConnection::new());
        tokio::select! {
            ended = framing::process_socket(socket, tls, handlers) => if let Err(e) = ended {
                tracing::debug!(%peer, error = %e, "PostgreSQL connection ended with an error");
            },
            () = startup_expired(bounds.startup, &signed_in) => {
                tracing::debug!(%peer, "PostgreSQL connection closed: no sign-in within {:?} (RAPID_PG_STARTUP_SECONDS)", bounds.startup);
            }
        }
    };
    tokio::spawn(tracing::Instrument::instrument(connection, span));
}

/// Resolves when `limit` has passed without a sign-in (counted before the connection closes);
/// never once signed in.
async fn startup_expired(limit: Duration, signed_in: &AtomicBool) {
    tokio::time::sleep(limit).await;
    if signed_in.load(Ordering::Acquire) {
        std::future::pending::<()>().await;
    }
    figures::FIGURES.no_sign_in.fetch_add(1, Ordering::Relaxed);
}

/// One open connection of a source address, counted until dropped.
struct AddressSlot {
    addresses: Arc<Mutex<HashMap<IpAddr, usize>>>,
    ip: IpAddr,
}

impl AddressSlot {
    fn take(
        addresses: &Arc<Mutex<HashMap<IpAddr, usize>>>,
        ip: IpAddr,
        limit: usize,
    ) -> Option<AddressSlot> {
        let mut open = addresses.lock().unwrap_or_else(|e| e.into_inner());
        let n = open.entry(ip).or_insert(0);
        if *n >= limit {
            return None;
        }
        *n += 1;
        Some(AddressSlot {
            addresses: addresses.clone(),
            ip,
        })
    }
}

impl Drop for AddressSlot {
    fn drop(&mut self) {
        let mut open = self.addresses.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = open.get_mut(&self.ip) {
            *n -= 1;
            if *n == 0 {
                open.remove(&self.ip);
            }
        }
    }
}

/// Answers a connection refused before startup as PostgreSQL does when it is full: reads the
/// startup message (declining TLS or GSS encryption if asked first), then sends a FATAL error
/// 53300 (too_many_connections) and closes.
async fn refuse(mut socket: tokio::net::TcpStream, message: &str) -> std::io::Result<()> {
    const SSL_REQUEST: u32 = 80_877_103;
    const GSS_REQUEST: u32 = 80_877_104;
    for _ in 0..3 {
        let len = socket.read_u32().await? as usize;
        if !(8..=10_000).contains(&len) {
            break;
        }
        let mut body = vec![0; len - 4];
        socket.read_exact(&mut body).await?;
        let code = u32::from_be_bytes([body[0], body[1], body[2], body[3]]);
        if len == 8 && (code == SSL_REQUEST || code == GSS_REQUEST) {
            socket.write_all(b"N").await?;
            continue;
        }
        break;
    }
    let mut fields = Vec::new();
    for (tag, value) in [
        (b'S', "FATAL"),
        (b'V', "FATAL"),
        (b'C', errors::TOO_MANY_CONNECTIONS),
        (b'M', message),
    ] {
        fields.push(tag);
        fields.extend_from_slice(value.as_bytes());
        fields.push(0);
    }
    fields.push(0);
    let mut answer = vec![b'E'];
    answer.extend_from_slice(&(fields.len() as u32 + 4).to_be_bytes());
    answer.extend_from_slice(&fields);
    socket.write_all(&answer).await?;
    socket.shutdown().await
}

/// The socket, and a duplicate of it that only watches for the peer's close (it never reads).
fn split_watcher(
    socket: tokio::net::TcpStream,
) -> std::io::Result<(tokio::net::TcpStream, tokio::net::TcpStream)> {
    let socket = socket.into_std()?;
    let watcher = socket.try_clone()?;
    Ok((
        tokio::net::TcpStream::from_std(socket)?,
        tokio::net::TcpStream::from_std(watcher)?,
    ))
}

#[cfg(test)]
mod tests {
    use super::PgListener;

    #[test]
    fn a_non_loopback_address_is_refused_and_port_zero_is_told() {
        let e = PgListener::bind("0.0.0.0:0", None).err().expect("refused");
        assert!(e.to_string().contains("loopback"), "{e}");
        let listener = PgListener::bind("127.0.0.1:0", None).unwrap();
        assert_ne!(listener.local_addr().unwrap().port(), 0);
    }
}
