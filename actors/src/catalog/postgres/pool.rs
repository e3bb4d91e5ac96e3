//! Connections to PostgreSQL, usable from any thread: actix actor threads and tokio workers
//! (inside a runtime) as well as plain threads and `spawn_blocking`.
//!
//! Each connection's I/O task runs on a small runtime of its catalog's own (started when the
//! catalog opens, stopped when it is dropped); a caller sends its statement to it and waits for
//! the answer with [`block_on`], a plain park/unpark loop that is
//! no tokio runtime (so it never panics as "a runtime within a runtime", which the sync
//! `postgres` crate's `block_on` does). The caller blocks as it blocks on SQLite's mutex, and the
//! callbacks of the catalog interface run on the caller's thread, inside its transaction.
//!
//! A pool of a few connections, each behind a mutex, opened when first needed; a connection found
//! closed (PostgreSQL restarted, network cut) is replaced at the next checkout, so a call that
//! failed on it is an internal error and the next call works.

use std::cell::RefCell;
use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Config, NoTls, Row, Statement};

use crate::error::{Error, Result};

/// Connections per catalog: enough for the actors, query threads and HTTP workers of one node
/// on a small machine; each statement is short.
const CONNECTIONS: usize = 8;

/// A statement's parameters.
pub(super) type Params<'a> = &'a [&'a (dyn ToSql + Sync)];

/// The runtime one catalog's connections run their I/O tasks on: one thread, started with the
/// pool. Dropped without waiting for its tasks (`shutdown_background`): the catalog's last
/// holder may drop it inside an async context (an actix thread), where a runtime's blocking
/// drop panics. The connections end with it.
struct IoRuntime {
    handle: tokio::runtime::Handle,
    runtime: Option<tokio::runtime::Runtime>,
}

impl IoRuntime {
    fn start() -> Result<IoRuntime> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("rapid-pg")
            .enable_all()
            .build()
            .map_err(|e| Error::internal(format!("starting the PostgreSQL runtime: {e}")))?;
        Ok(IoRuntime {
            handle: runtime.handle().clone(),
            runtime: Some(runtime),
        })
    }
}

impl Drop for IoRuntime {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

struct ThreadWaker(std::thread::Thread);

impl Wake for ThreadWaker {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

/// Runs `fut` to completion on this thread, parking between polls. The futures given here only
/// wait on channels to the connection tasks, so they need no runtime of their own.
pub(super) fn block_on<F: Future>(fut: F) -> F::Output {
    let mut fut = std::pin::pin!(fut);
    let waker = Waker::from(Arc::new(ThreadWaker(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    loop {
        if let Poll::Ready(out) = fut.as_mut().poll(&mut cx) {
            return out;
        }
        std::thread::park();
    }
}

/// Opens one connection; its I/O task runs on `runtime` until the connection ends.
fn connect(runtime: &IoRuntime, config: &Config) -> Result<Client> {
    let config = config.clone();
    let task = runtime.handle.spawn(async move {
        let (client, connection) = config.connect(NoTls).await?;
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::warn!(error = %e, "PostgreSQL catalog connection ended");
            }
        });
        Ok::<_, tokio_postgres::Error>(client)
    });
    let client = block_on(task)
        .map_err(|e| Error::internal(format!("connecting to PostgreSQL: {e}")))?
        .map_err(|e| Error::from(e).context("connecting to the PostgreSQL catalog"))?;
    Ok(client)
}

/// One open connection and its prepared statements.
pub(super) struct Conn {
    client: Client,
    statements: RefCell<HashMap<String, Statement>>,
}

/// The statements of one checkout (inside a transaction or not), run synchronously.
pub(super) struct Db<'a> {
    conn: &'a Conn,
}

impl Db<'_> {
    fn statement(&self, sql: &str) -> Result<Statement> {
        if let Some(statement) = self.conn.statements.borrow().get(sql) {
            return Ok(statement.clone());
        }
        let statement = block_on(self.conn.client.prepare(sql))?;
        self.conn
            .statements
            .borrow_mut()
            .insert(sql.to_string(), statement.clone());
        Ok(statement)
    }

    pub(super) fn query(&self, sql: &str, params: Params<'_>) -> Result<Vec<Row>> {
        let statement = self.statement(sql)?;
        Ok(block_on(self.conn.client.query(&statement, params))?)
    }

    pub(super) fn query_opt(&self, sql: &str, params: Params<'_>) -> Result<Option<Row>> {
        let statement = self.statement(sql)?;
        Ok(block_on(self.conn.client.query_opt(&statement, params))?)
    }

    pub(super) fn query_one(&self, sql: &str, params: Params<'_>) -> Result<Row> {
        let statement = self.statement(sql)?;
        Ok(block_on(self.conn.client.query_one(&statement, params))?)
    }

    /// Runs one statement; returns the rows it changed.
    pub(super) fn execute(&self, sql: &str, params: Params<'_>) -> Result<u64> {
        let statement = self.statement(sql)?;
        Ok(block_on(self.conn.client.execute(&statement, params))?)
    }

    /// Runs statements without parameters (transaction control, migrations).
    pub(super) fn batch(&self, sql: &str) -> Result<()> {
        Ok(block_on(self.conn.client.batch_execute(sql))?)
    }
}

/// How a transaction begins.
#[derive(Clone, Copy)]
pub(super) enum Begin {
    /// READ COMMITTED: each statement sees what committed before it (after a lock: the newest).
    Write,
    /// One snapshot for every read of the transaction.
    Snapshot,
}

pub(super) struct Pool {
    config: Config,
    slots: Vec<Mutex<Option<Conn>>>,
    next: AtomicUsize,
    /// Declared after `slots`: the connections are dropped before their runtime stops.
    runtime: IoRuntime,
}

impl Pool {
    pub(super) fn new(mut config: Config) -> Result<Pool> {
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(Duration::from_secs(10));
        }
        if config.get_application_name().is_none() {
            config.application_name("rapid-rs");
        }
        Ok(Pool {
            config,
            slots: (0..CONNECTIONS).map(|_| Mutex::new(None)).collect(),
            next: AtomicUsize::new(0),
            runtime: IoRuntime::start()?,
        })
    }

    /// The first free slot (so a quiet node keeps few connections open), else waits for one in
    /// turn. A slot poisoned by a panic (maybe inside a transaction) loses its connection:
    /// closing it rolls the transaction back.
    fn checkout(&self) -> MutexGuard<'_, Option<Conn>> {
        let n = self.slots.len();
        for slot in &self.slots {
            match slot.try_lock() {
                Ok(guard) => return guard,
                Err(TryLockError::Poisoned(p)) => {
                    let mut guard = p.into_inner();
                    *guard = None;
                    return guard;
                }
                Err(TryLockError::WouldBlock) => {}
            }
        }
        let turn = self.next.fetch_add(1, Ordering::Relaxed) % n;
        self.slots[turn].lock().unwrap_or_else(|p| {
            let mut guard = p.into_inner();
            *guard = None;
            guard
        })
    }

    /// Runs `f` on one connection (opening it if needed); the connection is dropped afterwards
    /// when `f` says so or when it is found closed.
    fn with_conn<R>(&self, f: impl FnOnce(&Db<'_>) -> (Result<R>, bool)) -> Result<R> {
        let mut slot = self.checkout();
        if slot.as_ref().is_none_or(|c| c.client.is_closed()) {
            *slot = None;
            *slot = Some(Conn {
                client: connect(&self.runtime, &self.config)?,
                statements: RefCell::default(),
            });
        }
        let Some(conn) = slot.as_ref() else {
            return Err(Error::internal("no PostgreSQL connection"));
        };
        let (out, discard) = f(&Db { conn });
        if discard || conn.client.is_closed() {
            *slot = None;
        }
        out
    }

    /// Runs `f` on a new connection of its own, outside the pool (so it never waits for a slot
    /// its caller holds), closed afterwards. For rare steps that must commit while the caller's
    /// transaction goes on.
    pub(super) fn with_own_connection<R>(&self, f: impl FnOnce(&Db<'_>) -> Result<R>) -> Result<R> {
        let conn = Conn {
            client: connect(&self.runtime, &self.config)?,
            statements: RefCell::default(),
        };
        f(&Db { conn: &conn })
    }

    /// Runs `f` on one connection, outside any transaction.
    pub(super) fn with<R>(&self, f: impl FnOnce(&Db<'_>) -> Result<R>) -> Result<R> {
        self.with_conn(|db| (f(db), false))
    }

    /// Runs `f` inside one transaction, committed only when `f` succeeds.
    pub(super) fn transaction<R>(
        &self,
        begin: Begin,
        f: impl FnOnce(&Db<'_>) -> Result<R>,
    ) -> Result<R> {
        self.with_conn(|db| {
            let begin = db.batch(match begin {
                Begin::Write => "BEGIN",
                Begin::Snapshot => "BEGIN ISOLATION LEVEL REPEATABLE READ",
            });
            if let Err(e) = begin {
                return (Err(e), true);
            }
            match f(db) {
                // A failed COMMIT ends the transaction too (rolled back).
                Ok(out) => (db.batch("COMMIT").map(|()| out), false),
                Err(e) => match db.batch("ROLLBACK") {
                    Ok(()) => (Err(e), false),
                    Err(rollback) => {
                        // The connection is in an unknown state: closing it rolls back.
                        tracing::warn!(error = %rollback.report(), "catalog rollback failed");
                        (Err(e), true)
                    }
                },
            }
        })
    }
}
