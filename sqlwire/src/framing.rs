//! A connection's message loop: pgwire's `process_socket`, with every message framed before
//! pgwire decodes it, so that a message whose decoding leaves part of its body unread is refused.
//!
//! pgwire 0.41's decoders stop where their fields end, not where the message's length says it
//! ends: a Query whose text holds a NUL before its end (`SELECT 1\0junk`) was run as `SELECT 1`
//! and `junk` was read as the next message. Its first byte became a tag and the next four a
//! length, often hundreds of megabytes, so the connection waited for bytes the client would never
//! send, neither answering nor closing (found by the `sql_wire` fuzz target, fuzz/README.md).
//! [`OneMessage`] hands pgwire's reader at most the rest of the current message, so after each
//! decoded message pgwire's read buffer is empty unless its decoder left bytes of it; such a
//! message is answered as PostgreSQL answers it (`08P01 invalid message format`, FATAL during
//! startup) and not processed, and the connection goes on from the next message.
//!
//! An Execute's row count is bounded here too ([`bounded_max_rows`]): pgwire 0.41 reserves room
//! for that many rows before fetching them, so a client asking for 1,342,194,944 rows made the
//! process allocate 53 GB and abort (found by the fuzz target).

use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use bytes::{Buf, BytesMut};
use datafusion_postgres::pgwire::api::{ClientInfo, PgWireConnectionState, PgWireServerHandlers};
use datafusion_postgres::pgwire::messages::PgWireFrontendMessage;
use datafusion_postgres::pgwire::tokio::server::{negotiate_tls, process_error, process_message};
use datafusion_postgres::pgwire::tokio::TlsAcceptor;
use futures_util::StreamExt;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_util::codec::{Framed, FramedParts};

use rapid_actors::query::SYNC_ROW_LIMIT;

use crate::errors::{fatal, pg_error};

/// The untagged requests of the startup phase other than the startup message itself (cancel,
/// SSL, GSS encryption); the first other untagged message is the startup message, and every
/// message after it has a tag.
const UNTAGGED_REQUESTS: [u32; 3] = [80_877_102, 80_877_103, 80_877_104];

/// The most rows an Execute fetches at once: one more than a statement may return
/// ([`SYNC_ROW_LIMIT`]; more is an error before any row is sent), so a portal's rows always come
/// in one fetch, as asked.
const MAX_FETCH: i32 = SYNC_ROW_LIMIT as i32 + 1;

/// The largest message pgwire reads (its `LARGE_PACKET_SIZE_LIMIT`); a longer one is left to
/// pgwire to refuse.
const MAX_MESSAGE: usize = 0x3fff_fffe;

/// The client's half of the socket, read one message at a time: a read never returns bytes past
/// the end of the message being read. Writes pass through.
pub struct OneMessage<S> {
    io: S,
    /// Bytes read from `io` and not yet handed on.
    ahead: BytesMut,
    /// Bytes of the current message not yet handed on; 0 between messages.
    left: usize,
    /// Past the startup message: every message starts with a tag byte.
    tagged: bool,
    /// Set when the current message is the startup message.
    startup: bool,
    /// A length that cannot be framed, or the end of the stream: bytes pass as they come.
    unframed: bool,
}

impl<S> OneMessage<S> {
    /// `ahead`: the bytes already read from `io` (at a message boundary).
    pub fn new(io: S, ahead: BytesMut, tagged: bool) -> OneMessage<S> {
        OneMessage {
            io,
            ahead,
            left: 0,
            tagged,
            startup: false,
            unframed: false,
        }
    }

    /// Frames the next message from the bytes ahead; false when more bytes are needed.
    fn next_header(&mut self) -> bool {
        let offset = usize::from(self.tagged);
        // An untagged message's request code tells the startup message from the others.
        let needed = if self.tagged { 5 } else { 8 };
        if self.ahead.len() < needed {
            return false;
        }
        let field = &self.ahead[offset..offset + 4];
        let len = u32::from_be_bytes([field[0], field[1], field[2], field[3]]) as usize;
        if !(4..=MAX_MESSAGE).contains(&len) || (!self.tagged && len < 8) {
            self.unframed = true;
            return true;
        }
        if !self.tagged {
            let code =
                u32::from_be_bytes([self.ahead[4], self.ahead[5], self.ahead[6], self.ahead[7]]);
            self.startup = !UNTAGGED_REQUESTS.contains(&code);
        }
        self.left = offset + len;
        true
    }

    /// Hands on up to the rest of the current message from the bytes ahead.
    fn hand_on(&mut self, buf: &mut ReadBuf<'_>) {
        let limit = if self.unframed { usize::MAX } else { self.left };
        let n = self.ahead.len().min(limit).min(buf.remaining());
        buf.put_slice(&self.ahead[..n]);
        self.ahead.advance(n);
        if !self.unframed {
            self.left -= n;
            if self.left == 0 && self.startup {
                self.startup = false;
                self.tagged = true;
            }
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for OneMessage<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            if (this.unframed || this.left > 0) && !this.ahead.is_empty() {
                this.hand_on(buf);
                return Poll::Ready(Ok(()));
            }
            if !this.unframed && this.left == 0 && this.next_header() {
                continue;
            }
            this.ahead.reserve(8192);
            let n = ready!(tokio_util::io::poll_read_buf(
                Pin::new(&mut this.io),
                cx,
                &mut this.ahead
            ))?;
            if n == 0 {
                // The end: what is left (a cut-off message) goes on as it is, then the end.
                this.unframed = true;
                if this.ahead.is_empty() {
                    return Poll::Ready(Ok(()));
                }
            }
        }
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for OneMessage<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}

/// pgwire's `process_socket` (TLS negotiation, then each message to its handler, errors answered)
/// over [`OneMessage`], with messages whose decoding left bytes of them unread refused.
pub async fn process_socket<H: PgWireServerHandlers>(
    tcp: TcpStream,
    tls: Option<TlsAcceptor>,
    handlers: H,
) -> io::Result<()> {
    let negotiated = negotiate_tls(tcp, tls).await?;
    let Some(socket) = negotiated else {
        return Ok(());
    };
    let parts = socket.into_parts();
    let io = OneMessage::new(parts.io, parts.read_buf, false);
    let mut new = FramedParts::new(io, parts.codec);
    new.write_buf = parts.write_buf;
    let mut socket = Framed::from_parts(new);
    let startup = handlers.startup_handler();
    let simple = handlers.simple_query_handler();
    let extended = handlers.extended_query_handler();
    let copy = handlers.copy_handler();
    let cancel = handlers.cancel_handler();
    while let Some(Ok(mut msg)) = socket.next().await {
        if let PgWireFrontendMessage::Execute(execute) = &mut msg {
            execute.max_rows = bounded_max_rows(execute.max_rows);
        }
        if matches!(msg, PgWireFrontendMessage::Terminate(_)) {
            break;
        }
        let is_extended_query = match socket.state() {
            PgWireConnectionState::CopyInProgress(extended) => extended,
            _ => msg.is_extended_query(),
        };
        let unread = socket.read_buffer().len();
        if unread > 0 {
            socket.read_buffer_mut().clear();
            let error = malformed(socket.state(), unread);
            process_error(&mut socket, error, is_extended_query).await?;
            continue;
        }
        let processed = process_message(
            msg,
            &mut socket,
            startup.clone(),
            simple.clone(),
            extended.clone(),
            copy.clone(),
            cancel.clone(),
        )
        .await;
        if let Err(e) = processed {
            process_error(&mut socket, e, is_extended_query).await?;
        }
    }
    Ok(())
}

/// An Execute's row count as pgwire should see it: pgwire 0.41 makes room for that many rows
/// before fetching (`Vec::with_capacity`), so a count in the billions aborted the process (and a
/// negative one, cast to `usize`, overflowed). 0 and below mean every row, as in PostgreSQL.
pub fn bounded_max_rows(max_rows: i32) -> i32 {
    max_rows.clamp(0, MAX_FETCH)
}

/// The answer to a message with `unread` bytes after the fields its decoder read.
fn malformed(
    state: PgWireConnectionState,
    unread: usize,
) -> datafusion_postgres::pgwire::error::PgWireError {
    let message = format!("invalid message format: {unread} bytes after the message's fields");
    match state {
        PgWireConnectionState::AwaitingSslRequest
        | PgWireConnectionState::AwaitingStartup
        | PgWireConnectionState::AuthenticationInProgress => fatal("08P01", message),
        _ => pg_error("08P01", message),
    }
}

#[cfg(test)]
mod tests {
    use super::OneMessage;
    use tokio::io::AsyncReadExt;

    fn tagged(tag: u8, body: &[u8]) -> Vec<u8> {
        let mut m = vec![tag];
        m.extend_from_slice(&(body.len() as u32 + 4).to_be_bytes());
        m.extend_from_slice(body);
        m
    }

    fn untagged(code: u32, rest: &[u8]) -> Vec<u8> {
        let mut m = (rest.len() as u32 + 8).to_be_bytes().to_vec();
        m.extend_from_slice(&code.to_be_bytes());
        m.extend_from_slice(rest);
        m
    }

    /// What each read of `stream` returns, with room for far more than a message.
    async fn reads(stream: &[u8], ahead: &[u8]) -> Vec<Vec<u8>> {
        let mut io = OneMessage::new(stream, ahead.into(), false);
        let mut out = Vec::new();
        let mut buf = [0u8; 1024];
        loop {
            let n = io.read(&mut buf).await.unwrap();
            if n == 0 {
                return out;
            }
            out.push(buf[..n].to_vec());
        }
    }

    #[test]
    fn an_execute_fetches_at_most_one_row_past_the_row_limit() {
        use super::bounded_max_rows;
        assert_eq!(bounded_max_rows(1_342_194_944), 100_001);
        assert_eq!(bounded_max_rows(i32::MAX), 100_001);
        assert_eq!(bounded_max_rows(100_000), 100_000);
        assert_eq!(bounded_max_rows(5), 5);
        assert_eq!(bounded_max_rows(0), 0);
        assert_eq!(bounded_max_rows(-1), 0);
        assert_eq!(bounded_max_rows(i32::MIN), 0);
    }

    #[tokio::test]
    async fn a_read_ends_at_the_end_of_its_message() {
        let gss = untagged(80_877_104, &[]);
        let startup = untagged(196_608, b"user\0u\0\0");
        let query = tagged(b'Q', b"SELECT 1\0junk past the NUL");
        let sync = tagged(b'S', &[]);
        let messages = [gss, startup, query, sync.clone(), sync];
        let stream = messages.concat();
        assert_eq!(reads(&stream, &[]).await, messages);
        // Bytes read ahead before the wrapping come first, framed the same way.
        let (ahead, rest) = stream.split_at(13);
        assert_eq!(reads(rest, ahead).await, messages);
    }

    #[tokio::test]
    async fn a_length_that_cannot_be_framed_lets_the_rest_pass_as_it_comes() {
        let startup = untagged(196_608, b"\0");
        let query = tagged(b'Q', b"SELECT 1\0");
        let mut broken = vec![b'Q'];
        broken.extend_from_slice(&2u32.to_be_bytes());
        broken.extend_from_slice(b"abc");
        let stream = [startup.clone(), query.clone(), broken.clone()].concat();
        assert_eq!(reads(&stream, &[]).await, [startup, query, broken]);
        // A message cut short by the end of the stream goes on as it is.
        let cut = &tagged(b'Q', b"SELECT 1\0")[..7];
        let stream = [untagged(196_608, b"\0"), cut.to_vec()].concat();
        assert_eq!(reads(&stream, &[]).await.concat(), stream);
    }
}
