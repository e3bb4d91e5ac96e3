//! The client's half of a connection's socket, read one message at a time for the message loop
//! (`framing`): pgwire's reader never gets bytes past the end of the current message, the
//! messages whose pgwire decoders read fields unchecked reach it only whole and checked
//! ([`crate::bodies`]; a refused one as a Flush, with the reason kept for the loop), and a length
//! no message may have (under 4, over pgwire's limit for the tag) ends the stream with an error,
//! as PostgreSQL ends the connection: pgwire read past such a message's end too (a tagged length
//! under 4 made the CopyData and password decoders panic).

use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use bytes::{Buf, BytesMut};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::bodies;

/// The untagged requests of the startup phase other than the startup message itself (cancel,
/// SSL, GSS encryption); the first other untagged message is the startup message, and every
/// message after it has a tag.
const UNTAGGED_REQUESTS: [u32; 3] = [80_877_102, 80_877_103, 80_877_104];

/// The largest Query, Parse, Bind or CopyData pgwire reads (its `LARGE_PACKET_SIZE_LIMIT`), and
/// the largest untagged message framed here (pgwire refuses a startup message past 10,000 bytes).
const MAX_MESSAGE: usize = 0x3fff_fffe;

/// The largest other tagged message pgwire reads (its `SMALL_PACKET_SIZE_LIMIT`).
const MAX_SMALL_MESSAGE: usize = 10_000;

/// What pgwire gets in place of a refused message: a Flush, which the loop never processes.
const FLUSH: &[u8] = b"H\0\0\0\x04";

/// Capacity kept for the bytes ahead once they are handed on (a whole Bind may have grown it).
const KEEP_AHEAD: usize = 64 << 10;

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
    /// The current message is one of [`bodies::CHECKED`], not yet checked: it is handed on only
    /// once all of it is ahead and checked.
    unchecked: bool,
    /// Why the last message handed on was refused (pgwire got a Flush in its place).
    refused: Option<String>,
    /// The end of the stream: what is left (a message cut short) passes as it is.
    ended: bool,
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
            unchecked: false,
            refused: None,
            ended: false,
        }
    }

    /// Why the message just decoded was refused, if it was: pgwire decoded a Flush in its place.
    /// pgwire's codec decodes each message as soon as its last byte is handed on, before reading
    /// on, so the message just decoded is the last one handed on.
    pub fn take_refused(&mut self) -> Option<String> {
        self.refused.take()
    }

    /// Frames the next message from the bytes ahead; false when more bytes are needed. A length
    /// no such message may have is an error: pgwire would read past the message (a tagged
    /// length under 4 made CopyData's and the password's decoders panic) or refuse it.
    fn next_header(&mut self) -> io::Result<bool> {
        let offset = usize::from(self.tagged);
        // An untagged message's request code tells the startup message from the others.
        let needed = if self.tagged { 5 } else { 8 };
        if self.ahead.len() < needed {
            return Ok(false);
        }
        let field = &self.ahead[offset..offset + 4];
        let len = u32::from_be_bytes([field[0], field[1], field[2], field[3]]) as usize;
        let tag = self.ahead[0];
        let (shortest, longest) = match self.tagged {
            false => (8, MAX_MESSAGE),
            true if b"QPBd".contains(&tag) => (4, MAX_MESSAGE),
            true => (4, MAX_SMALL_MESSAGE),
        };
        if !(shortest..=longest).contains(&len) {
            let e = format!("invalid message length {len}");
            return Err(io::Error::new(io::ErrorKind::InvalidData, e));
        }
        if !self.tagged {
            let code =
                u32::from_be_bytes([self.ahead[4], self.ahead[5], self.ahead[6], self.ahead[7]]);
            self.startup = !UNTAGGED_REQUESTS.contains(&code);
        }
        self.unchecked = self.tagged && bodies::CHECKED.contains(&tag);
        self.left = offset + len;
        Ok(true)
    }

    /// Checks the current message, all of it ahead; a refused one is replaced by a Flush (its
    /// last five bytes overwritten) and the reason kept for the loop.
    fn check_body(&mut self) {
        self.unchecked = false;
        if let Err(why) = bodies::check(self.ahead[0], &self.ahead[5..self.left]) {
            self.ahead.advance(self.left - FLUSH.len());
            self.ahead[..FLUSH.len()].copy_from_slice(FLUSH);
            self.left = FLUSH.len();
            self.refused = Some(why);
        }
    }

    /// Hands on up to the rest of the current message from the bytes ahead.
    fn hand_on(&mut self, buf: &mut ReadBuf<'_>) {
        let limit = if self.ended { usize::MAX } else { self.left };
        let n = self.ahead.len().min(limit).min(buf.remaining());
        buf.put_slice(&self.ahead[..n]);
        self.ahead.advance(n);
        if self.ahead.is_empty() && self.ahead.capacity() > KEEP_AHEAD {
            self.ahead = BytesMut::new();
        }
        if !self.ended {
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
            if !this.ended && this.left == 0 && this.next_header()? {
                continue;
            }
            if this.unchecked && this.ahead.len() >= this.left {
                this.check_body();
            }
            let framed = this.left > 0 && !this.unchecked;
            if (this.ended || framed) && !this.ahead.is_empty() {
                this.hand_on(buf);
                return Poll::Ready(Ok(()));
            }
            this.ahead.reserve(8192);
            let n = ready!(tokio_util::io::poll_read_buf(
                Pin::new(&mut this.io),
                cx,
                &mut this.ahead
            ))?;
            if n == 0 {
                // The end: what is left (a cut-off message) goes on as it is, then the end.
                this.ended = true;
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

#[cfg(test)]
mod tests {
    use super::{OneMessage, FLUSH};
    use bytes::BytesMut;
    use std::pin::Pin;
    use std::task::{Context, Poll};
    use tokio::io::{AsyncRead, AsyncReadExt, ReadBuf};

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
    async fn a_length_no_message_may_have_ends_the_stream() {
        let startup = untagged(196_608, b"\0");
        let query = tagged(b'Q', b"SELECT 1\0");
        let mut short = vec![b'd'];
        short.extend_from_slice(&2u32.to_be_bytes());
        short.extend_from_slice(b"abc");
        // A Describe may not pass 10,000 bytes (pgwire's limit); a Bind may.
        let mut long = vec![b'D'];
        long.extend_from_slice(&10_005u32.to_be_bytes());
        for bad in [short, long] {
            let stream = [startup.clone(), query.clone(), bad].concat();
            let mut io = OneMessage::new(&stream[..], BytesMut::new(), false);
            let mut buf = [0u8; 1024];
            for whole in [&startup, &query] {
                let n = io.read(&mut buf).await.expect("framed");
                assert_eq!(&buf[..n], &whole[..]);
            }
            let e = io.read(&mut buf).await.expect_err("refused");
            assert_eq!(e.kind(), std::io::ErrorKind::InvalidData);
        }
        // An untagged message too short for its length and request code.
        let mut io = OneMessage::new(&[0u8, 0, 0, 7, 1, 2, 3, 4][..], BytesMut::new(), false);
        assert!(io.read(&mut [0u8; 64]).await.is_err());
        // A message cut short by the end of the stream goes on as it is.
        let cut = &tagged(b'Q', b"SELECT 1\0")[..7];
        let stream = [untagged(196_608, b"\0"), cut.to_vec()].concat();
        assert_eq!(reads(&stream, &[]).await.concat(), stream);
    }

    /// Hands on one byte per read.
    struct Trickle<'a>(&'a [u8]);

    impl AsyncRead for Trickle<'_> {
        fn poll_read(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<std::io::Result<()>> {
            if let Some((&b, rest)) = self.0.split_first() {
                buf.put_slice(&[b]);
                self.0 = rest;
            }
            Poll::Ready(Ok(()))
        }
    }

    #[tokio::test]
    async fn a_checked_message_goes_on_whole_or_as_a_flush_with_the_reason() {
        let startup = untagged(196_608, b"\0");
        let good = tagged(b'E', b"\0\0\0\0\0");
        // A Bind whose parameter claims 100 bytes of 2.
        let bad = tagged(b'B', b"\0\0\0\0\0\x01\0\0\0\x64ab\0\0");
        let sync = tagged(b'S', &[]);
        let stream = [startup.clone(), good.clone(), bad, sync.clone()].concat();
        let mut io = OneMessage::new(Trickle(&stream), BytesMut::new(), false);
        let mut buf = [0u8; 1024];
        // The startup message goes on as it comes; a checked message in one read, once whole.
        let mut got = Vec::new();
        while got.len() < startup.len() {
            let n = io.read(&mut buf).await.unwrap();
            got.extend_from_slice(&buf[..n]);
        }
        assert_eq!(got, startup);
        let n = io.read(&mut buf).await.unwrap();
        assert_eq!((&buf[..n], io.take_refused()), (&good[..], None));
        let n = io.read(&mut buf).await.unwrap();
        let why = "insufficient data left in message".to_string();
        assert_eq!((&buf[..n], io.take_refused()), (FLUSH, Some(why)));
        let n = io.read(&mut buf).await.unwrap();
        assert_eq!((&buf[..n], io.take_refused()), (&sync[..], None));
    }
}
