//! The startup of a connection: PostgreSQL's cleartext password exchange, with the password
//! checked by the engine's own sign-in (`Engine::sign_in`: a client's id and secret, or a
//! user's name and password, behind the token endpoint's throttle and hash pool), whose pass
//! opens the connection's session. A refusal is a FATAL
//! error with SQLSTATE 28P01 (wrong credentials), 28000 (throttled, or a password sent without
//! TLS from another host than this one), 53000 (hash pool full; `errors::sign_in_refused`) or
//! 3D000 (the database is not a layer).

use std::fmt::Debug;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use async_trait::async_trait;
use datafusion_postgres::pgwire::api::auth::{
    finish_authentication, protocol_negotiation, save_startup_parameters_to_metadata,
    DefaultServerParameterProvider, LoginInfo, StartupHandler,
};
use datafusion_postgres::pgwire::api::{
    ClientInfo, ConnectionManager, PgWireConnectionState, PidSecretKeyGenerator,
    RandomPidSecretKeyGenerator,
};
use datafusion_postgres::pgwire::error::{PgWireError, PgWireResult};
use datafusion_postgres::pgwire::messages::startup::Authentication;
use datafusion_postgres::pgwire::messages::{PgWireBackendMessage, PgWireFrontendMessage};
use futures_util::sink::{Sink, SinkExt};
use rapid_actors::engine::Engine;

use crate::errors::{fatal, sign_in_refused};
use crate::session::Checker;

pub(crate) struct SignIn {
    pub(crate) engine: Engine,
    pub(crate) peer: IpAddr,
    pub(crate) checker: Arc<Checker>,
    pub(crate) manager: Arc<ConnectionManager>,
    pub(crate) keys: RandomPidSecretKeyGenerator,
    pub(crate) parameters: DefaultServerParameterProvider,
    /// Set once sign-in has finished: the startup time limit no longer applies.
    pub(crate) signed_in: Arc<AtomicBool>,
}

/// What the server tells clients at startup: read-only sessions, not a superuser.
pub(crate) fn server_parameters() -> DefaultServerParameterProvider {
    let mut p = DefaultServerParameterProvider::default();
    p.is_superuser = false;
    p.default_transaction_read_only = true;
    p
}

/// Why a database is refused: the databases are the layers, so the message names the ones the
/// subject may read (a typo in a connection string then shows at once).
fn unknown_database(database: &str, readable: &[String]) -> String {
    let layers = match readable {
        [] => "none".to_string(),
        _ => readable.join(", "),
    };
    format!(
        "database \"{database}\" does not exist: the databases are the layers, and this subject \
         may read these: {layers}"
    )
}

#[async_trait]
impl StartupHandler for SignIn {
    async fn on_startup<C>(
        &self,
        client: &mut C,
        message: PgWireFrontendMessage,
    ) -> PgWireResult<()>
    where
        C: ClientInfo + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        match message {
            PgWireFrontendMessage::Startup(ref startup) => {
                protocol_negotiation(client, startup).await?;
                save_startup_parameters_to_metadata(client, startup);
                client.set_state(PgWireConnectionState::AuthenticationInProgress);
                client
                    .send(PgWireBackendMessage::Authentication(
                        Authentication::CleartextPassword,
                    ))
                    .await?;
            }
            PgWireFrontendMessage::PasswordMessageFamily(password) => {
                if !client.is_secure() && !self.peer.is_loopback() {
                    return Err(fatal(
                        "28000",
                        "passwords are accepted over TLS only from this address: connect with \
                         sslmode=require",
                    ));
                }
                let password = password.into_password()?;
                let login = LoginInfo::from_client_info(client);
                let user = login.user().unwrap_or_default().to_string();
                // As PostgreSQL: the database defaults to the user's name.
                let database = login.database().unwrap_or(&user).to_string();
                let pass = self
                    .engine
                    .sign_in(&user, &password.password, self.peer)
                    .await
                    .map_err(|e| sign_in_refused(e, &user))?;
                if !self.engine.layers().contains(&database) {
                    let readable = self.engine.sql_layers(&pass);
                    return Err(fatal("3D000", unknown_database(&database, &readable)));
                }
                self.checker
                    .start(&pass, &user, &database)
                    .map_err(|e| fatal("XX000", e))?;
                let (pid, secret) = self.keys.generate(client);
                tracing::Span::current()
                    .record("pid", pid)
                    .record("subject", pass.subject().id.as_str());
                client.set_pid_and_secret_key(pid, secret.clone());
                // Registered so that the protocol's cancel request stops this session's statement.
                let (handle, guard) = self.manager.register(pid, secret);
                client.session_extensions().insert(handle);
                client.session_extensions().insert(guard);
                finish_authentication(client, &self.parameters).await?;
                self.signed_in.store(true, Ordering::Release);
            }
            _ => {}
        }
        Ok(())
    }
}
