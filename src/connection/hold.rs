//! Closing, not draining, after an answer given without reading the request body.
//!
//! actix-http decides what to do with an unread body when the answer has been written: if the
//! handler's end of the body stream still exists, it closes the connection (after a short linger,
//! `client_disconnect_timeout`, so the client reads the answer instead of a reset); if it was
//! dropped, a chunked body is read to its end, however long the client keeps sending. Every
//! refusal drops the request, so this middleware keeps the body stream alive inside the answer's
//! body until the answer is written. Handlers read the body through a forwarding stream.

use std::any::Any;
use std::cell::RefCell;
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

/// Outermost middleware: see the module documentation.
pub async fn hold_unread_body(
    mut req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let payload = req.take_payload();
    if matches!(payload, Payload::None) {
        return Ok(next.call(req).await?.map_into_boxed_body());
    }
    let shared = Rc::new(RefCell::new(payload));
    let forward: actix_http::BoxedPayloadStream = Box::pin(Forward(shared.clone()));
    req.set_payload(Payload::from(forward));
    // Handlers' and extractors' errors arrive here as responses; an `Err` (a middleware failing)
    // is passed on as it is. The request must not be cloned here: later layers need it unshared.
    let res = next.call(req).await?.map_into_boxed_body();
    Ok(res.map_body(|_, body| BoxBody::new(Holding::new(body, Box::new(shared)))))
}

/// The handler's view of the body: every item of the real stream.
struct Forward(Rc<RefCell<Payload>>);

impl Stream for Forward {
    type Item = Result<Bytes, PayloadError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        Pin::new(&mut *self.0.borrow_mut()).poll_next(cx)
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
