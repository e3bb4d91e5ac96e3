//! The handlers of one connection, which pgwire asks for once per connection: the sign-in
//! ([`crate::signin`]), the statements ([`crate::statements`]) over the session sign-in opens
//! ([`crate::session`]), and the protocol's cancel request.

use std::net::IpAddr;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use datafusion_postgres::pgwire::api::auth::StartupHandler;
use datafusion_postgres::pgwire::api::cancel::{CancelHandler, DefaultCancelHandler};
use datafusion_postgres::pgwire::api::query::{ExtendedQueryHandler, SimpleQueryHandler};
use datafusion_postgres::pgwire::api::{ConnectionManager, PgWireServerHandlers};
use rapid_actors::engine::Engine;
use tokio::net::TcpStream;

use crate::session::Checker;
use crate::signin::{server_parameters, SignIn};
use crate::statements::{GuardedParser, Statements};

pub(crate) struct Connection {
    statements: Arc<Statements>,
    signin: Arc<SignIn>,
    cancel: Arc<DefaultCancelHandler>,
}

impl Connection {
    /// A connection from `peer`; `watcher` is a second handle on its socket, watched while a
    /// statement runs (see [`Checker`]).
    pub(crate) fn new(
        engine: Engine,
        peer: IpAddr,
        manager: Arc<ConnectionManager>,
        watcher: TcpStream,
    ) -> Connection {
        let checker = Arc::new(Checker::new(engine.clone(), watcher));
        let parser = Arc::new(GuardedParser {
            checker: checker.clone(),
        });
        Connection {
            statements: Arc::new(Statements {
                checker: checker.clone(),
                parser,
            }),
            signin: Arc::new(SignIn {
                engine,
                peer,
                checker,
                manager: manager.clone(),
                keys: Default::default(),
                signed_in: Default::default(),
                parameters: server_parameters(),
            }),
            cancel: Arc::new(DefaultCancelHandler::new(manager)),
        }
    }

    /// Set once the client has finished startup and sign-in.
    pub(crate) fn signed_in(&self) -> Arc<AtomicBool> {
        self.signin.signed_in.clone()
    }
}

impl PgWireServerHandlers for Connection {
    fn simple_query_handler(&self) -> Arc<impl SimpleQueryHandler> {
        self.statements.clone()
    }

    fn extended_query_handler(&self) -> Arc<impl ExtendedQueryHandler> {
        self.statements.clone()
    }

    fn startup_handler(&self) -> Arc<impl StartupHandler> {
        self.signin.clone()
    }

    fn cancel_handler(&self) -> Arc<impl CancelHandler> {
        self.cancel.clone()
    }
}
