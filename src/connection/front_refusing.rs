//! The front's refusals, read side: a refused head (answered, then closed), a connection or
//! request over its address's budget (held, then answered), and an abandoned body (a capped
//! remainder read, then nothing more).

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use actix_web::http::StatusCode;
use tokio::io::{AsyncRead, ReadBuf};
use tokio::time::Instant;

use super::{FrontIo, State};
use crate::connection::budget::OverBudget;
use crate::connection::front_out::{answer, refusal_response};
use crate::connection::head::Refusal;
use crate::connection::hold::ABANDONED_BODY_READ_CAP;

/// Bytes a connection refused by its address's budget may still send (discarded) before the
/// answer; past it the front reads nothing more.
const REFUSED_READ_CAP: u64 = 64 * 1024;

impl FrontIo {
    /// Reads and drops what arrives, up to the cap, then reads no more: the client's sending
    /// stalls while it can still read the answer, and actix-http's linger timer then shuts the
    /// write side and closes. (Ending the stream at the cap instead would close at once, and the
    /// reset that unread bytes cause can reach a client still writing before it reads the answer.)
    /// A client that closes its side ends the stream at once.
    pub(super) fn poll_discard(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let mut scratch = [0u8; 16 * 1024];
        loop {
            let discarded = *self.discarded.get_or_insert(0);
            let room = ABANDONED_BODY_READ_CAP.saturating_sub(discarded) as usize;
            if room == 0 {
                // Woken by actix-http's linger timer, not by the socket.
                return Poll::Pending;
            }
            let mut buf = ReadBuf::new(&mut scratch[..room.min(16 * 1024)]);
            ready!(Pin::new(&mut self.io).poll_read(cx, &mut buf))?;
            if buf.filled().is_empty() {
                self.state = State::Closed;
                return Poll::Ready(Ok(()));
            }
            let discarded = discarded + buf.filled().len() as u64;
            self.discarded = Some(discarded);
            if discarded >= ABANDONED_BODY_READ_CAP {
                tracing::info!(
                    peer = ?self.io.peer_addr().ok(),
                    discarded,
                    "answered before its body was read: no more is read, closing after the linger"
                );
            }
        }
    }

    pub(super) fn refuse(&mut self, refusal: Refusal) {
        tracing::info!(
            status = refusal.status.as_u16(),
            reason = %refusal.message,
            peer = ?self.io.peer_addr().ok(),
            "request refused before routing"
        );
        self.refusal = Some(refusal_response(&refusal));
        self.state = State::Closed;
        self.unjudged.clear();
    }

    /// Answers 429 with `Retry-After` after the refusal's hold, then closes.
    pub(super) fn refuse_over_budget(&mut self, over: OverBudget) {
        tracing::debug!(peer = ?self.peer, reason = %over.message, "over its address's budget");
        self.refusal = Some(answer(
            StatusCode::TOO_MANY_REQUESTS,
            &over.message,
            Some(over.retry_after),
        ));
        self.state = State::Refusing {
            until: Instant::now() + over.hold,
        };
        self.unjudged.clear();
    }

    /// While refusing: discards what arrives (up to a cap; the client's request is still read
    /// out of the socket, so that closing does not reset the connection before the client reads
    /// the answer) until the hold ends, then ends the stream so that actix-http writes the refusal.
    pub(super) fn poll_refusing(
        &mut self,
        cx: &mut Context<'_>,
        until: Instant,
    ) -> Poll<io::Result<()>> {
        let mut scratch = [0u8; 8 * 1024];
        loop {
            let read = *self.discarded.get_or_insert(0);
            if read >= REFUSED_READ_CAP {
                break;
            }
            let mut buf = ReadBuf::new(&mut scratch);
            match Pin::new(&mut self.io).poll_read(cx, &mut buf) {
                Poll::Ready(Ok(())) if buf.filled().is_empty() => break,
                Poll::Ready(Ok(())) => self.discarded = Some(read + buf.filled().len() as u64),
                // A reset client cannot read the answer either.
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => break,
            }
        }
        if self.timer.deadline() != until {
            self.timer.as_mut().reset(until);
        }
        ready!(self.timer.as_mut().poll(cx));
        self.state = State::Closed;
        Poll::Ready(Ok(()))
    }
}
