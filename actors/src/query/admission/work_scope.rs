//! When a query's work has really ended. Stopping a query drops its future, but DataFusion runs
//! the partitions of a plan on tasks of their own (`collect` over several partitions,
//! repartitions); dropping the future only asks those tasks to stop, and each stops at its next
//! yield, after the batch it is computing (for an expensive expression, most of a second in a
//! debug build). Until then it holds a core and its memory reservations.
//!
//! Each run of a query gets a [`WorkToken`]: the task context it executes with carries it, and
//! every leaf stream of the plan (see yielding) keeps a clone while it lives. [`WorkScope::ended`]
//! resolves once the last clone is gone, that is, once every pipeline reading data has stopped.
//! The query's admission slot is held until then, so the pool never admits more work than it has
//! slots for, and "no query running" in the metrics means no query's work is left on a core.

use std::future::Future;
use std::sync::Arc;

use datafusion::execution::{SessionState, TaskContext};
use datafusion::prelude::SessionContext;
use tokio::sync::oneshot;

/// Held by everything that executes one run of a query; dropped with the last of them.
#[derive(Debug)]
pub(crate) struct WorkToken {
    /// Dropped with the token: the scope's receiver then resolves.
    _ended: oneshot::Sender<()>,
}

tokio::task_local! {
    /// The token of the query run the current task executes (set by [`WorkScope::run`]).
    static CURRENT: Arc<WorkToken>;
}

/// One run of a query: the token its pipelines hold, and the signal that they are all gone.
pub(crate) struct WorkScope {
    token: Arc<WorkToken>,
    ended: oneshot::Receiver<()>,
}

impl WorkScope {
    pub(crate) fn new() -> WorkScope {
        let (tx, ended) = oneshot::channel();
        WorkScope {
            token: Arc::new(WorkToken { _ended: tx }),
            ended,
        }
    }

    /// `work` run with this scope's token as the current one: the task contexts it makes with
    /// [`task_context`] carry it. The token is kept only by what the work executes.
    pub(crate) fn run<F: Future>(&self, work: F) -> impl Future<Output = F::Output> {
        CURRENT.scope(self.token.clone(), work)
    }

    /// Resolves once the token is gone: `self` gives up its own clone, then waits for every
    /// pipeline that took one.
    pub(crate) async fn ended(self) {
        drop(self.token);
        // The sender is never used: the receiver resolves (with an error) when it is dropped.
        let _ = self.ended.await;
    }
}

impl Default for WorkScope {
    fn default() -> Self {
        WorkScope::new()
    }
}

/// A task context of `ctx` for executing a plan, carrying the current query run's token when
/// there is one (outside [`WorkScope::run`], in tools and tests, it carries none).
pub(crate) fn task_context(ctx: &SessionContext) -> Arc<TaskContext> {
    task_context_of(&ctx.state_ref().read())
}

/// As [`task_context`], from a session's state: the query pools make it from their template,
/// so that running a kept plan needs no session of its own.
pub(crate) fn task_context_of(state: &SessionState) -> Arc<TaskContext> {
    // The configuration is copied once, with the token added (not copied, then copied again
    // by `with_session_config`); the function registries are copied as a task context must own them.
    let config = match CURRENT.try_with(Arc::clone) {
        Ok(token) => state.config().clone().with_extension(token),
        Err(_) => state.config().clone(),
    };
    Arc::new(TaskContext::new(
        None,
        state.session_id().to_string(),
        config,
        state.scalar_functions().clone(),
        state.higher_order_functions().clone(),
        state.aggregate_functions().clone(),
        state.window_functions().clone(),
        Arc::clone(state.runtime_env()),
    ))
}

/// The token a plan executed with `context` must keep while it runs, if any.
pub(crate) fn token_of(context: &TaskContext) -> Option<Arc<WorkToken>> {
    context.session_config().get_extension::<WorkToken>()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn ended_waits_for_every_clone_of_the_token() {
        let scope = WorkScope::new();
        let ctx = SessionContext::new();
        let context = scope.run(async { task_context(&ctx) }).await;
        let held = token_of(&context).expect("the context carries the token");
        assert!(
            token_of(&task_context(&ctx)).is_none(),
            "only inside the scope's work"
        );
        drop(context);
        let mut ended = Box::pin(scope.ended());
        // Still held by `held`: the wait does not end.
        assert!(tokio::time::timeout(Duration::from_millis(50), &mut ended)
            .await
            .is_err());
        drop(held);
        tokio::time::timeout(Duration::from_secs(10), ended)
            .await
            .expect("ends once the last clone is dropped");
    }

    #[tokio::test]
    async fn outside_a_scope_contexts_carry_no_token() {
        assert!(token_of(&task_context(&SessionContext::new())).is_none());
    }
}
