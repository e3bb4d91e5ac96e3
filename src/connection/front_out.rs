//! What the front writes: its own refusals (JSON answers written when actix-http shuts the
//! connection down, so they are always the last thing written) and, otherwise, what actix-http
//! writes, passed through.

use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use actix_web::http::StatusCode;
use bytes::{Buf, Bytes};
use tokio::io::AsyncWrite;

use super::front::FrontIo;
use super::head::Refusal;

/// A complete HTTP/1.1 answer with a `{"details": ...}` body, closing the connection.
pub fn refusal_response(refusal: &Refusal) -> Bytes {
    answer(refusal.status, &refusal.message, None)
}

/// The same, with `Retry-After` when `retry_after` is given (in seconds).
pub fn answer(status: StatusCode, message: &str, retry_after: Option<u64>) -> Bytes {
    let body = serde_json::json!({ "details": message }).to_string();
    let retry = retry_after.map_or(String::new(), |s| format!("retry-after: {s}\r\n"));
    Bytes::from(format!(
        "HTTP/1.1 {} {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n{retry}connection: close\r\n\r\n{body}",
        status.as_u16(),
        status.canonical_reason().unwrap_or("Error"),
        body.len()
    ))
}

impl AsyncWrite for FrontIo {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        while let Some(refusal) = this.refusal.as_mut() {
            if refusal.is_empty() {
                this.refusal = None;
                break;
            }
            let n = ready!(Pin::new(&mut this.io).poll_write(cx, refusal))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            refusal.advance(n);
        }
        Pin::new(&mut this.io).poll_shutdown(cx)
    }
}

impl Drop for FrontIo {
    fn drop(&mut self) {
        // actix-http normally shuts down first (which writes the refusal); if it dropped the
        // connection instead, try once without blocking.
        if let Some(refusal) = self.refusal.take() {
            let _ = self.io.try_write(&refusal);
        }
    }
}
