//! # rapid-sqlwire: the PostgreSQL wire front of rapid-rs
//!
//! psql, pandas, DBeaver and other PostgreSQL clients connect here and see, as tables, exactly
//! the datasets their subject may read. The protocol and the `pg_catalog` / `information_schema`
//! emulation come from `datafusion-postgres` (over `pgwire`); this crate adds what that library
//! leaves to its user (docs/DESIGN.md, "SQL and the PostgreSQL protocol"):
//! - [`signin`]: the user and password are a client's id and secret or a user's name and
//!   password, checked by the engine's sign-in (its throttle and hash pool);
//! - [`session`]: each statement re-reads the subject and its readable datasets, passes the
//!   read-only gate, takes a query slot and runs within the time limit on the query threads;
//! - [`errors`]: every refusal is a PostgreSQL error with its SQLSTATE, never a dropped
//!   connection.
//!
//! The listener runs on the query engine's runtime, so every parse, plan and run of a statement
//! happens on the query threads, as for HTTP queries.

pub mod errors;
pub mod session;
pub mod signin;
pub mod tls;

use std::net::{SocketAddr, TcpListener as StdListener};
use std::path::PathBuf;
use std::sync::Arc;

use datafusion_postgres::pgwire::api::ConnectionManager;
use datafusion_postgres::pgwire::tokio::{process_socket, TlsAcceptor};
use rapid_actors::engine::Engine;
use rapid_actors::Error;
use tokio::sync::Semaphore;

/// Open connections accepted at once; more are closed at once (each holds a session).
pub const MAX_CONNECTIONS: usize = 256;

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
        Ok(PgListener { listener, tls })
    }

    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Accepts connections until dropped, on the query threads.
    pub async fn serve(self, engine: Engine) -> rapid_actors::Result<()> {
        rapid_actors::query::on_query_runtime(accept(self.listener, self.tls, engine)).await
    }
}

async fn accept(
    listener: StdListener,
    tls: Option<TlsAcceptor>,
    engine: Engine,
) -> rapid_actors::Result<()> {
    let listener = tokio::net::TcpListener::from_std(listener)
        .map_err(|e| Error::internal(format!("PostgreSQL listener: {e}")))?;
    let open = Arc::new(Semaphore::new(MAX_CONNECTIONS));
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
            tracing::warn!(%peer, "PostgreSQL listener: {MAX_CONNECTIONS} connections open, closing a new one");
            continue;
        };
        // A second handle on the socket tells a running statement that the client has gone.
        let (socket, watcher) = match split_watcher(socket) {
            Ok(pair) => pair,
            Err(e) => {
                tracing::warn!(%peer, error = %e, "PostgreSQL listener: socket setup failed");
                continue;
            }
        };
        let handlers = Arc::new(session::Connection::new(
            engine.clone(),
            peer.ip(),
            manager.clone(),
            watcher,
        ));
        let tls = tls.clone();
        tokio::spawn(async move {
            let _permit = permit;
            if let Err(e) = process_socket(socket, tls, handlers).await {
                tracing::debug!(%peer, error = %e, "PostgreSQL connection ended with an error");
            }
        });
    }
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
