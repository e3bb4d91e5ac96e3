//! The AuthActor: the single writer of subjects, permissions and protected domains.
//!
//! Each change arrives as a closure making one atomic catalog call; when it succeeds, the actor
//! rebuilds the [`AuthSnapshot`] and publishes it. Serialising writers here keeps the published
//! snapshot exactly in step with the catalog. Slow work (argon2) never runs here.

use std::sync::{Arc, RwLock};

use actix::{Actor, Context, Handler, Message};

use crate::auth::snapshot::AuthSnapshot;
use crate::catalog::{Catalog, SharedCatalog};
use crate::error::Result;
use crate::traced::Traced;

pub(crate) type Published = Arc<RwLock<Arc<AuthSnapshot>>>;

pub(crate) struct AuthActor {
    pub(crate) catalog: SharedCatalog,
    pub(crate) published: Published,
}

impl Actor for AuthActor {
    type Context = Context<Self>;
}

type Change<R> = Box<dyn FnOnce(&dyn Catalog, &AuthSnapshot) -> Result<R> + Send>;

/// Apply one change, then republish the snapshot.
pub(crate) struct Apply<R: Send + 'static>(pub Change<R>);

impl<R: Send + 'static> Message for Apply<R> {
    type Result = Result<R>;
}

impl<R: Send + 'static> Handler<Apply<R>> for AuthActor {
    type Result = Result<R>;

    fn handle(&mut self, msg: Apply<R>, _: &mut Context<Self>) -> Result<R> {
        let current = read_snapshot(&self.published);
        let out = (msg.0)(self.catalog.as_ref(), &current)?;
        let snapshot = AuthSnapshot::load(self.catalog.as_ref(), current.layers.clone())?;
        publish(&self.published, snapshot);
        Ok(out)
    }
}

/// As `Apply`, inside the sender's span (generic over `R`, so not through `handle_traced!`).
impl<R: Send + 'static> Handler<Traced<Apply<R>>> for AuthActor {
    type Result = Result<R>;

    fn handle(&mut self, msg: Traced<Apply<R>>, ctx: &mut Context<Self>) -> Result<R> {
        let _entered = msg.span.entered();
        <Self as Handler<Apply<R>>>::handle(self, msg.message, ctx)
    }
}

pub(crate) fn read_snapshot(published: &Published) -> Arc<AuthSnapshot> {
    // A poisoned lock only means a writer panicked mid-swap of an Arc: the value is still whole.
    published
        .read()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .clone()
}

/// Publishes `snapshot` unless a newer one is already published (another reader refreshed from
/// the catalog meanwhile); returns the one published now.
pub(crate) fn publish(published: &Published, snapshot: AuthSnapshot) -> Arc<AuthSnapshot> {
    let mut current = published.write().unwrap_or_else(|p| p.into_inner());
    if snapshot.version >= current.version {
        *current = Arc::new(snapshot);
    }
    current.clone()
}
