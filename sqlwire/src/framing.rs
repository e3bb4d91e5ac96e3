//! A connection's message loop: pgwire's `process_socket` over [`OneMessage`], which frames
//! every message before pgwire decodes it, so that a malformed message is answered as PostgreSQL
//! answers it (`08P01 invalid message format`, FATAL during startup), not processed, and the
//! connection goes on from the next message.
//!
//! A message is malformed when [`OneMessage`] refused its body before pgwire's decoder saw it
//! (the decoders of Parse, Bind, Close, Describe and Execute read fields unchecked and panicked
//! on short bodies: [`crate::bodies`]), or when pgwire's decoder left bytes of it unread. pgwire
//! 0.41's decoders stop where their fields end, not where the message's length says it ends: a
//! Query whose text holds a NUL before its end (`SELECT 1\0junk`) was run as `SELECT 1` and
//! `junk` was read as the next message, often with a length of hundreds of megabytes, so the
//! connection waited for bytes the client would never send (found by the `sql_wire` fuzz
//! target, fuzz/README.md).
//!
//! An Execute's row count is bounded here too ([`bounded_max_rows`]): pgwire 0.41 reserves room
//! for that many rows before fetching them, so a client asking for 1,342,194,944 rows made the
//! process allocate 53 GB and abort (found by the fuzz target).

use std::io;

use datafusion_postgres::pgwire::api::{ClientInfo, PgWireConnectionState, PgWireServerHandlers};
use datafusion_postgres::pgwire::messages::PgWireFrontendMessage;
use datafusion_postgres::pgwire::tokio::server::{negotiate_tls, process_error, process_message};
use datafusion_postgres::pgwire::tokio::TlsAcceptor;
use futures_util::StreamExt;
use tokio::net::TcpStream;
use tokio_util::codec::{Framed, FramedParts};

use rapid_actors::engine::sql::ROWS_ASKED;

use crate::errors::{fatal, pg_error};
pub use crate::one_message::OneMessage;

/// The most rows an Execute fetches at once: one more than a statement may return
/// ([`ROWS_ASKED`]; more is an error before any row is sent), so a portal's rows always come
/// in one fetch, as asked.
const MAX_FETCH: i32 = ROWS_ASKED as i32;

/// pgwire's `process_socket` (TLS negotiation, then each message to its handler, errors answered)
/// over [`OneMessage`], with malformed messages (refused before decoding, or with bytes their
/// decoding left unread) answered `08P01` instead of processed.
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
        if let Some(why) = refusal(&mut socket) {
            // As in PostgreSQL, every message up to the Sync after an error is skipped unread.
            if !matches!(socket.state(), PgWireConnectionState::AwaitingSync) {
                let error = malformed(socket.state(), why);
                process_error(&mut socket, error, is_extended_query).await?;
            }
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

/// Why the message just decoded is not to be processed: its body was refused before decoding,
/// or its decoder left bytes of it unread (then dropped here).
fn refusal<S, C>(socket: &mut Framed<OneMessage<S>, C>) -> Option<String> {
    if let Some(why) = socket.get_mut().take_refused() {
        return Some(why);
    }
    let unread = socket.read_buffer().len();
    if unread == 0 {
        return None;
    }
    socket.read_buffer_mut().clear();
    Some(format!("{unread} bytes after the message's fields"))
}

/// The answer to a malformed message: PostgreSQL's `invalid message format`, FATAL before
/// sign-in.
fn malformed(
    state: PgWireConnectionState,
    why: String,
) -> datafusion_postgres::pgwire::error::PgWireError {
    let message = format!("invalid message format: {why}");
    match state {
        PgWireConnectionState::AwaitingSslRequest
        | PgWireConnectionState::AwaitingStartup
        | PgWireConnectionState::AuthenticationInProgress => fatal("08P01", message),
        _ => pg_error("08P01", message),
    }
}

#[cfg(test)]
mod tests {
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
}
