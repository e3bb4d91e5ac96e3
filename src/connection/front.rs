//! The front of every connection: a wrapper around the TCP stream that actix-http reads through.
//!
//! It holds each request head back until it is complete, judges it (`head.rs`) and only then
//! hands it on; a refused head is answered here with a JSON body (actix-http would answer with an
//! empty one) and the connection closed. It follows the body framing to find the next head, and
//! enforces the slow-client limits: a head must arrive within the head timeout (408, JSON), and a
//! body that stops arriving for the body timeout ends the connection (the handler then sees a
//! broken body and answers with its error).
//!
//! When the application answers without reading a request's body (`hold.rs` marks it in the
//! connection's [`BodyTracker`]), the front discards at most [`ABANDONED_BODY_READ_CAP`] more
//! bytes of it and then reads nothing more; actix-http's linger (`client_disconnect_timeout`)
//! then shuts the write side (the client sees the answer and its end first) and closes.
//!
//! Each complete head is charged to its client address's budget (`budget.rs`) before it is
//! passed on: within the burst it passes at once; past it, it is held (nothing more is read from
//! the connection) until the rate allows it; past the longest wait it is refused with 429. A
//! connection over its address's connection cap is refused as it opens. The refusals' read side
//! is in `front_refusing.rs`, what the front writes in `front_out.rs`.
//!
//! Refusals are written when actix-http shuts the connection down: the front tells it the client
//! closed (end of stream), actix-http finishes any earlier pipelined answers, then shuts down, so
//! the refusal is always the last thing written.

use std::future::Future;
use std::io;
use std::net::IpAddr;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use actix_rt::net::TcpStream;
use actix_web::http::StatusCode;
use bytes::{Buf, Bytes, BytesMut};
use tokio::io::{AsyncRead, ReadBuf};
use tokio::time::{Instant, Sleep};

use super::budget::{AddressBudgets, ConnectionSlot};
use super::chunked::ChunkState;
use super::head::{judge, Framing, HeadLimits, Refusal};
use super::hold::BodyTracker;

#[path = "front_refusing.rs"]
mod refusing;

/// The connection limits the front enforces.
#[derive(Debug, Clone, Copy)]
pub struct FrontSettings {
    pub head: HeadLimits,
    /// A request head must be complete this long after its first byte (after the connection
    /// opened, for the first request).
    pub head_timeout: Duration,
    /// A body that receives nothing for this long ends the connection.
    pub body_idle_timeout: Duration,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Collecting a head; `started` once its first byte (or the connection) arrived.
    Head {
        started: Option<Instant>,
    },
    Body {
        remaining: u64,
    },
    Chunked(ChunkState),
    /// Framing no longer followed (after CONNECT or an unusual chunked body): bytes pass as-is.
    Opaque,
    /// A complete head of `len` bytes held until its address's request rate allows it.
    Paced {
        until: Instant,
        len: usize,
        framing: Framing,
    },
    /// Refused by the address's budget: what arrives is discarded (up to a cap) until then, and
    /// the refusal is written.
    Refusing {
        until: Instant,
    },
    /// Reading is over: actix-http is told the stream ended.
    Closed,
}

pub struct FrontIo {
    pub(super) io: TcpStream,
    settings: Arc<FrontSettings>,
    state: State,
    /// Bytes read but not yet judged (an incomplete head, or bytes after it).
    unjudged: BytesMut,
    /// Judged bytes waiting for actix-http to read them.
    ready: BytesMut,
    /// The answer to write before the connection closes.
    pub(super) refusal: Option<Bytes>,
    timer: Pin<Box<Sleep>>,
    /// When a body read started waiting for the client.
    waiting_since: Option<Instant>,
    /// Which request bodies the application abandoned (shared with the requests).
    tracker: Rc<BodyTracker>,
    /// Request heads passed on so far: the index of the request whose body is being read.
    heads: u64,
    /// Bytes of an abandoned body discarded so far, once discarding started (or of a connection
    /// being refused by its budget).
    discarded: Option<u64>,
    peer: Option<IpAddr>,
    budgets: Arc<AddressBudgets>,
    /// This connection's place among its address's connections.
    _slot: Option<ConnectionSlot>,
}

impl FrontIo {
    pub fn new(
        io: TcpStream,
        settings: Arc<FrontSettings>,
        budgets: Arc<AddressBudgets>,
    ) -> FrontIo {
        let now = Instant::now();
        let peer = io.peer_addr().ok().map(|a| a.ip());
        let opened = budgets.open(peer);
        let mut front = FrontIo {
            io,
            settings,
            state: State::Head { started: Some(now) },
            unjudged: BytesMut::new(),
            ready: BytesMut::new(),
            refusal: None,
            timer: Box::pin(tokio::time::sleep_until(now)),
            waiting_since: None,
            tracker: Rc::default(),
            heads: 0,
            discarded: None,
            peer,
            budgets,
            _slot: None,
        };
        match opened {
            Ok(slot) => front._slot = slot,
            Err(over) => front.refuse_over_budget(over),
        }
        front
    }

    /// The connection's tracker, for its requests' connection data.
    pub fn tracker(&self) -> Rc<BodyTracker> {
        self.tracker.clone()
    }

    /// Whether the body being received belongs to a request the application already answered.
    fn body_abandoned(&self) -> bool {
        matches!(
            self.state,
            State::Body { .. } | State::Chunked(_) | State::Opaque
        ) && self.tracker.is_abandoned(self.heads)
    }

    /// Moves what can be judged from `unjudged` to `ready`, following the framing.
    fn judge_buffered(&mut self) {
        while !self.unjudged.is_empty() {
            match self.state {
                State::Head { started } => {
                    if started.is_none() {
                        self.state = State::Head {
                            started: Some(Instant::now()),
                        };
                    }
                    match judge(&self.unjudged, &self.settings.head) {
                        Ok(None) => return,
                        Ok(Some((len, framing))) => {
                            match self.budgets.request(self.peer, &self.unjudged[..len]) {
                                Err(over) => return self.refuse_over_budget(over),
                                Ok(wait) if wait.is_zero() => self.accept_head(len, framing),
                                Ok(wait) => {
                                    let until = Instant::now() + wait;
                                    self.state = State::Paced {
                                        until,
                                        len,
                                        framing,
                                    };
                                    return;
                                }
                            }
                        }
                        Err(refusal) => return self.refuse(refusal),
                    }
                }
                State::Body { remaining } => {
                    let n = remaining.min(self.unjudged.len() as u64);
                    self.pass(n as usize);
                    self.state = if n == remaining {
                        State::Head { started: None }
                    } else {
                        State::Body {
                            remaining: remaining - n,
                        }
                    };
                }
                State::Chunked(mut chunks) => {
                    let n = chunks.advance(&self.unjudged);
                    self.pass(n);
                    self.state = match chunks {
                        ChunkState::Done => State::Head { started: None },
                        ChunkState::Lost => State::Opaque,
                        other => State::Chunked(other),
                    };
                }
                State::Opaque => {
                    let n = self.unjudged.len();
                    self.pass(n);
                }
                // The held head is passed when its wait ends.
                State::Paced { .. } => return,
                State::Closed | State::Refusing { .. } => {
                    self.unjudged.clear();
                }
            }
        }
    }

    /// Passes on a judged head of `len` bytes and follows its body's framing.
    fn accept_head(&mut self, len: usize, framing: Framing) {
        self.pass(len);
        self.heads += 1;
        self.state = match framing {
            Framing::None => State::Head { started: None },
            Framing::Length(n) => State::Body { remaining: n },
            Framing::Chunked => State::Chunked(ChunkState::start()),
            Framing::UntilClose => State::Opaque,
        };
        self.waiting_since = None;
    }

    fn pass(&mut self, n: usize) {
        let judged = self.unjudged.split_to(n);
        if self.ready.is_empty() {
            self.ready = judged;
        } else {
            self.ready.extend_from_slice(&judged);
        }
    }

    /// When the current wait must end, if it has a limit.
    fn deadline(&self) -> Option<(Instant, bool)> {
        match self.state {
            State::Head {
                started: Some(since),
            } => Some((since + self.settings.head_timeout, true)),
            State::Body { .. } | State::Chunked(_) => self
                .waiting_since
                .map(|since| (since + self.settings.body_idle_timeout, false)),
            _ => None,
        }
    }

    /// Called when the socket has nothing to read: arms the timer, or acts if it has expired.
    fn poll_deadline(&mut self, cx: &mut Context<'_>) -> bool {
        if matches!(self.state, State::Body { .. } | State::Chunked(_))
            && self.waiting_since.is_none()
        {
            self.waiting_since = Some(Instant::now());
        }
        let Some((deadline, is_head)) = self.deadline() else {
            return false;
        };
        if self.timer.deadline() != deadline {
            self.timer.as_mut().reset(deadline);
        }
        if self.timer.as_mut().poll(cx).is_pending() {
            return false;
        }
        if is_head {
            let secs = self.settings.head_timeout.as_secs_f64();
            self.refuse(Refusal {
                status: StatusCode::REQUEST_TIMEOUT,
                message: format!("The request head was not received within {secs} seconds"),
            });
        } else {
            tracing::info!(
                peer = ?self.io.peer_addr().ok(),
                "request body stalled: closing the connection"
            );
            self.state = State::Closed;
        }
        true
    }
}

impl AsyncRead for FrontIo {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        out: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            if !this.ready.is_empty() {
                let n = out.remaining().min(this.ready.len());
                out.put_slice(&this.ready[..n]);
                this.ready.advance(n);
                return Poll::Ready(Ok(()));
            }
            match this.state {
                State::Closed => return Poll::Ready(Ok(())),
                State::Refusing { until } => return this.poll_refusing(cx, until),
                State::Paced {
                    until,
                    len,
                    framing,
                } => {
                    // Nothing more is read meanwhile: the client's further bytes wait in the kernel.
                    if this.timer.deadline() != until {
                        this.timer.as_mut().reset(until);
                    }
                    ready!(this.timer.as_mut().poll(cx));
                    this.accept_head(len, framing);
                    this.judge_buffered();
                    continue;
                }
                _ => {}
            }
            if this.discarded.is_some() || this.body_abandoned() {
                this.unjudged.clear();
                return this.poll_discard(cx);
            }
            this.unjudged.reserve(16 * 1024);
            match tokio_util::io::poll_read_buf(Pin::new(&mut this.io), cx, &mut this.unjudged) {
                Poll::Pending => {
                    if this.poll_deadline(cx) {
                        continue;
                    }
                    return Poll::Pending;
                }
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Ready(Ok(0)) => {
                    // The client closed its side; an incomplete head is dropped with it.
                    this.state = State::Closed;
                    this.unjudged.clear();
                }
                Poll::Ready(Ok(_)) => {
                    this.waiting_since = None;
                    this.judge_buffered();
                }
            }
        }
    }
}
