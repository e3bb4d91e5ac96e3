//! The AuthActor: the single writer of subjects, permissions and protected domains.
//!
//! Each change arrives as a closure run inside one catalog transaction; when it commits, the actor
//! rebuilds the [`AuthSnapshot`] and publishes it. Serialising writers here (rather than relying on
//! SQLite's lock) makes "check the name is free, then insert" atomic, and keeps the published
//! snapshot exactly in step with the catalog. Slow work (argon2) never runs here.

use std::sync::{Arc, RwLock};

use actix::{Actor, Context, Handler, Message};
use rusqlite::Transaction;

use crate::auth::snapshot::AuthSnapshot;
use crate::catalog::Catalog;
use crate::error::{Error, Result};

pub(crate) type Published = Arc<RwLock<Arc<AuthSnapshot>>>;

pub(crate) struct AuthActor {
    pub(crate) catalog: Catalog,
    pub(crate) published: Published,
}

impl Actor for AuthActor {
    type Context = Context<Self>;
}

type Change<R> = Box<dyn FnOnce(&Transaction<'_>, &AuthSnapshot) -> Result<R> + Send>;

/// Apply one change in a transaction, then republish the snapshot.
pub(crate) struct Apply<R: Send + 'static>(pub Change<R>);

impl<R: Send + 'static> Message for Apply<R> {
    type Result = Result<R>;
}

impl<R: Send + 'static> Handler<Apply<R>> for AuthActor {
    type Result = Result<R>;

    fn handle(&mut self, msg: Apply<R>, _: &mut Context<Self>) -> Result<R> {
        let current = read_snapshot(&self.published);
        let (out, snapshot) = self.catalog.with(|conn| {
            let tx = conn.transaction()?;
            let out = (msg.0)(&tx, &current)?;
            tx.commit()?;
            Ok((out, AuthSnapshot::load(conn, current.layers.clone())?))
        })?;
        publish(&self.published, snapshot);
        Ok(out)
    }
}

pub(crate) fn read_snapshot(published: &Published) -> Arc<AuthSnapshot> {
    // A poisoned lock only means a writer panicked mid-swap of an Arc: the value is still whole.
    published
        .read()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .clone()
}

pub(crate) fn publish(published: &Published, snapshot: AuthSnapshot) {
    *published.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(snapshot);
}

/// Maps a unique-constraint failure to a 400 with `message` (the SDK reads 400 as "already exists").
pub(crate) fn unique_violation(e: rusqlite::Error, message: String) -> Error {
    match e {
        rusqlite::Error::SqliteFailure(f, _)
            if f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
                || f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY =>
        {
            Error::invalid(message)
        }
        other => other.into(),
    }
}
