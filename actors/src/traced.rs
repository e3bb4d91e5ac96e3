//! Actor messages that carry their sender's tracing span. An actor handles a message on its own
//! thread, outside the span of the request (or job) that sent it, so its log lines would lose the
//! request id. [`Traced`] captures the sender's current span when the message is made, and each
//! actor's `Handler<Traced<M>>` enters it around its `Handler<M>`: whatever the handler logs, and
//! every span it opens, sits under the request's span with its `request_id`.

use actix::Message;

/// A message `M` with the span that was current where it was sent.
pub struct Traced<M> {
    pub message: M,
    pub span: tracing::Span,
}

impl<M> Traced<M> {
    /// `message` under the current span.
    pub fn new(message: M) -> Traced<M> {
        Traced {
            message,
            span: tracing::Span::current(),
        }
    }
}

impl<M: Message> Message for Traced<M> {
    type Result = M::Result;
}

/// Implements `Handler<Traced<M>>` for an actor and each listed message `M` by entering the
/// sender's span and handing the message to its `Handler<M>`. (One impl per message: a blanket
/// impl over every actor is refused by the orphan rule, one over every message sends the trait
/// solver into `Traced<Traced<..>>`.)
macro_rules! handle_traced {
    ($actor:ty: $($message:ty),+ $(,)?) => {$(
        impl actix::Handler<$crate::traced::Traced<$message>> for $actor {
            type Result = <$actor as actix::Handler<$message>>::Result;

            fn handle(
                &mut self,
                traced: $crate::traced::Traced<$message>,
                ctx: &mut <$actor as actix::Actor>::Context,
            ) -> Self::Result {
                let _entered = traced.span.entered();
                <$actor as actix::Handler<$message>>::handle(self, traced.message, ctx)
            }
        }
    )+};
}
pub(crate) use handle_traced;

#[cfg(test)]
mod tests {
    use super::*;
    use actix::{Actor, Context, Handler};

    struct Echo;
    impl Actor for Echo {
        type Context = Context<Self>;
    }
    struct WhereAmI;
    impl Message for WhereAmI {
        type Result = Option<String>;
    }
    impl Handler<WhereAmI> for Echo {
        type Result = Option<String>;
        fn handle(&mut self, _: WhereAmI, _: &mut Context<Self>) -> Option<String> {
            tracing::Span::current()
                .metadata()
                .map(|m| m.name().to_string())
        }
    }
    crate::traced::handle_traced!(Echo: WhereAmI);

    #[actix::test]
    async fn the_handler_runs_inside_the_senders_span() {
        // A subscriber must be set for spans to be real (not disabled).
        let subscriber = tracing_subscriber_for_test();
        let _default = tracing::subscriber::set_default(subscriber);
        let addr = Echo.start();
        let outside = addr.send(WhereAmI).await.unwrap();
        assert_eq!(outside, None, "a plain message runs in no span");
        let span = tracing::info_span!("request_under_test", request_id = "r-1");
        let message = span.in_scope(|| Traced::new(WhereAmI));
        let inside = addr.send(message).await.unwrap();
        assert_eq!(inside.as_deref(), Some("request_under_test"));
    }

    /// The smallest subscriber that keeps spans enabled.
    fn tracing_subscriber_for_test() -> impl tracing::Subscriber + Send + Sync {
        tracing_subscriber::registry()
    }
}
