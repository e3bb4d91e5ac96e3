//! Closing, not draining, after an answer given without reading the request body.
//!
//! actix-http decides what to do with an unread body when the answer has been written: if the
//! handler's end of the body stream still exists, it closes the connection (after a short linger,
//! `client_disconnect_timeout`, so the client reads the answer instead of a reset); if it was
//! dropped, a chunked body is read to its end, however long the client keeps sending. Every
//! refusal drops the request, so this middleware keeps the body stream alive inside the answer's
//! body until the answer is written. Handlers read the body through a forwarding stream.
//!
//! The linger is bounded in time only, so on a fast link it could read gigabytes; this middleware
//! also tells the connection's front ([`BodyTracker`]) which request's body was abandoned, and
//! the front reads at most [`ABANDONED_BODY_READ_CAP`] more bytes of it (the linger then ends
//! the connection).

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use actix_web::body::{BodySize, BoxBody, MessageBody};
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::error::PayloadError;
use actix_web::middleware::Next;
use actix_web::HttpMessage;
use bytes::Bytes;
use futures_util::Stream;

/// Bytes of an abandoned request body the front still reads after the answer (so that a client
/// sending a small remainder finishes and reads the answer cleanly) before it ends the connection.
pub const ABANDONED_BODY_READ_CAP: u64 = 256 * 1024;

/// One connection's requests as the application saw them, shared by its front and its requests
/// (actix-http's connection data): how many were routed, and which one's body was abandoned.
#[derive(Debug, Default)]
pub struct BodyTracker {
    routed: Cell<u64>,
    /// The 1-based index of the last request answered before its body was read; 0: none.
    abandoned: Cell<u64>,
}

impl BodyTracker {
    /// Counts a request reaching the application (or refused before it); returns its index.
    pub fn route(&self) -> u64 {
        let n = self.routed.get() + 1;
        self.routed.set(n);
        n
    }

    pub fn abandon(&self, request: u64) {
        self.abandoned.set(request);
    }

    /// Whether the body of the `request`th head on the connection was abandoned.
    pub fn is_abandoned(&self, request: u64) -> bool {
        request > 0 && self.abandoned.get() == request
    }
}

/// Outermost middleware: see the module documentation.
pub async fn hold_unread_body(
    mut req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let tracker = req.conn_data::<Rc<BodyTracker>>().cloned();
    let index = tracker.as_ref().map(|t| t.route());
    let payload = req.take_payload();
    if matches!(payload, Payload::None) {
        return Ok(next.call(req).await?.map_into_boxed_body());
    }
    let shared = Rc::new(Shared {
        payload: RefCell::new(payload),
        ended: Cell::new(false),
    });
    let forward: actix_http::BoxedPayloadStream = Box::pin(Forward(shared.clone()));
    req.set_payload(Payload::from(forward));
    // Handlers' and extractors' errors arrive here as responses; an `Err` (a middleware failing)
    // is passed on as it is. The request must not be cloned here: later layers need it unshared.
    let res = next.call(req).await?.map_into_boxed_body();
    if let (Some(tracker), Some(index)) = (tracker, index) {
        if !shared.ended.get() {
            tracker.abandon(index);
        }
    }
    Ok(res.map_body(|_, body| BoxBody::new(Holding::new(body, Box::new(shared)))))
}

struct Shared {
    payload: RefCell<Payload>,
    /// The handler read the body to its end.
    ended: Cell<bool>,
}

/// The handler's view of the body: every item of the real stream.
struct Forward(Rc<Shared>);

impl Stream for Forward {
    type Item = Result<Bytes, PayloadError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let item = Pin::new(&mut *self.0.payload.borrow_mut()).poll_next(cx);
        if matches!(item, Poll::Ready(None)) {
            self.0.ended.set(true);
        }
        item
    }
}

/// An answer's body that keeps something (the request's body stream) alive until it is dropped.
pub struct Holding {
    body: BoxBody,
    _held: Box<dyn Any>,
}

impl Holding {
    pub fn new(body: BoxBody, held: Box<dyn Any>) -> Holding {
        Holding { body, _held: held }
    }
}

impl MessageBody for Holding {
    type Error = Box<dyn std::error::Error>;

    fn size(&self) -> BodySize {
        self.body.size()
    }

    fn poll_next(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Bytes, Self::Error>>> {
        Pin::new(&mut self.get_mut().body).poll_next(cx)
    }
}
