//! The `sql_wire` fuzz target's findings (fuzz/README.md), as CI tests of the PostgreSQL front
//! built in-process as the fuzz harness builds it: the real listener on a loopback port over an
//! engine with one tiny PUBLIC dataset and a READ_ALL_PUBLIC client.
//! - a closed connection frees its session (the pg_catalog <-> catalog list cycle of `Arc`s);
//! - a Bind whose parameter runs past the message's end (pgwire 0.41 panicked decoding it, and
//!   the connection's task ended), and other bodies too short for their fields, are answered
//!   08P01 without being decoded, and the connection goes on;
//! - a portal with two result formats for three columns (arrow-pg indexed the formats by column
//!   and panicked) is answered 08P01, and the connection goes on;
//! - a simple query with bytes after its NUL (pgwire read them as the next message, often one of
//!   hundreds of megabytes, and the connection hung) is answered 08P01 at once, and the
//!   connection goes on;
//! - statements whose parse takes exponential work in sqlparser (unclosed brackets nested about
//!   ten deep took 30 seconds; nested function calls double the work per level) are answered
//!   54001 within their parse budget, and the connection goes on;
//! - an Execute asking for 1,342,194,944 rows (pgwire 0.41 reserved room for them: 53 GB, and
//!   the process aborted) gets its rows.
//!
//! The server and the client's helpers are in `support/wire.rs`.

use std::time::{Duration, Instant};

use rapid_actors::engine::sql::live_sessions;
use tokio::io::AsyncWriteExt;

#[path = "support/engine.rs"]
mod engine;
#[path = "support/wire.rs"]
mod wire;

use engine::message;
use wire::*;

#[tokio::test]
async fn a_closed_connection_frees_its_session() {
    let (s, _turn) = server().await;
    // The other tests' connections have freed theirs.
    assert!(
        eventually(|| live_sessions() == 0).await,
        "{} live sessions with no connection open",
        live_sessions()
    );
    let mut open = Vec::new();
    for _ in 0..20 {
        let mut socket = sign_in(s).await;
        assert_eq!(
            rows(&mut socket, "SELECT count(*) FROM wire.people").await,
            ["3"]
        );
        open.push(socket);
    }
    assert_eq!(live_sessions(), 20, "20 signed-in connections");
    for mut socket in open {
        socket
            .write_all(&message(b'X', &[]))
            .await
            .expect("terminate");
        closed_by_server(&mut socket).await;
    }
    assert!(
        eventually(|| live_sessions() == 0).await,
        "20 closed connections, {} live sessions",
        live_sessions()
    );
}

#[tokio::test]
async fn a_bind_past_its_end_is_answered_08p01_and_the_connection_goes_on() {
    let (s, _turn) = server().await;
    let mut socket = sign_in(s).await;
    // The fuzz input: a Bind of s1 whose one parameter claims 1,651,271,007 bytes of 5 sent
    // (pgwire 0.41.1 panicked: `split_to out of bounds`, extendedquery.rs:277).
    let mut bind = b"\0s1\0".to_vec();
    bind.extend_from_slice(&0u16.to_be_bytes());
    bind.extend_from_slice(&1u16.to_be_bytes());
    bind.extend_from_slice(&1_651_271_007i32.to_be_bytes());
    bind.extend_from_slice(b"hello");
    let parse = message(b'P', b"\0SELECT $1::int\0\0\0");
    // Other bodies pgwire read past: no Describe type, a cut Execute, a Parse's missing NUL, two
    // parameter formats for one parameter (pgwire indexed them by parameter).
    let others = [
        message(b'D', b""),
        message(b'E', b"\0\0\0"),
        message(b'P', b"s2\0SELECT 1"),
        message(b'B', b"\0s1\0\0\x02\0\0\0\0\0\x01\0\0\0\x011\0\0"),
    ];
    for (i, bad) in std::iter::once(message(b'B', &bind))
        .chain(others)
        .enumerate()
    {
        let mut out = parse.clone();
        out.extend(bad);
        // Skipped unread after the error, up to the Sync.
        out.extend(message(b'E', b"\0\0\0\0\0"));
        out.extend(message(b'S', &[]));
        socket.write_all(&out).await.expect("write");
        let answers = until_ready(&mut socket).await;
        let tags: Vec<u8> = answers.iter().map(|(tag, _)| *tag).collect();
        assert_eq!(tags, b"1EZ", "message {i}: {answers:?}");
        let error = String::from_utf8_lossy(&answers[1].1);
        assert!(
            error.contains("C08P01") && error.contains("invalid message format"),
            "message {i}: {error}"
        );
        assert_eq!(
            rows(&mut socket, "SELECT id FROM wire.people ORDER BY id").await,
            ["1", "2", "3"]
        );
    }
}

#[tokio::test]
async fn result_formats_not_one_per_column_are_answered_08p01_and_the_connection_goes_on() {
    let (s, _turn) = server().await;
    let mut socket = sign_in(s).await;
    // Unnamed portal and statement, no parameters, two result formats (text) for three columns:
    // arrow-pg looked the third column's format up by index and panicked.
    let bind = message(b'B', b"\0\0\0\0\0\0\0\x02\0\0\0\0");
    let describe = message(b'D', b"P\0");
    let execute = message(b'E', b"\0\0\0\0\0");
    for (i, then) in [describe, execute].into_iter().enumerate() {
        let mut out = message(
            b'P',
            b"\0SELECT id, name, id + 1 AS next FROM wire.people\0\0\0",
        );
        out.extend(bind.clone());
        out.extend(then);
        out.extend(message(b'S', &[]));
        socket.write_all(&out).await.expect("write");
        let answers = until_ready(&mut socket).await;
        let tags: Vec<u8> = answers.iter().map(|(tag, _)| *tag).collect();
        assert_eq!(tags, b"12EZ", "{i}: {answers:?}");
        let error = String::from_utf8_lossy(&answers[2].1);
        assert!(
            error.contains("C08P01") && error.contains("2 result formats but query has 3 columns"),
            "{i}: {error}"
        );
        assert_eq!(
            rows(&mut socket, "SELECT 'still here'").await,
            ["still here"]
        );
    }
}

#[tokio::test]
async fn a_query_with_bytes_after_its_nul_is_answered_08p01_and_the_connection_goes_on() {
    let (s, _turn) = server().await;
    // The fuzz target's input: byte 0 its mode (framed), then a Query frame `Q`, its length
    // (u16), its text: not UTF-8, with a NUL 55 bytes before its end.
    let input = include_bytes!("../../fuzz/regressions/sql_wire-slow-non-utf8-query");
    let len = u16::from_be_bytes([input[2], input[3]]) as usize;
    let text = &input[4..4 + len];
    assert!(std::str::from_utf8(text).is_err() && text[..len - 1].contains(&0));
    for bytes in [query_bytes(text), query("SELECT 1\0\x20FROM nowhere")] {
        let mut socket = sign_in(s).await;
        let started = Instant::now();
        socket.write_all(&bytes).await.expect("write");
        let answers = until_ready(&mut socket).await;
        let errors: Vec<String> = answers
            .iter()
            .filter(|(tag, _)| *tag == b'E')
            .map(|(_, body)| String::from_utf8_lossy(body).into_owned())
            .collect();
        assert!(
            matches!(&errors[..], [e] if e.contains("C08P01") && e.contains("invalid message format")),
            "{errors:?}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(
            rows(&mut socket, "SELECT 'still here'").await,
            ["still here"]
        );
    }
}

#[tokio::test]
async fn an_execute_asking_for_billions_of_rows_gets_its_rows() {
    let (s, _turn) = server().await;
    let mut socket = sign_in(s).await;
    // The fuzz input's Execute asked for 0x50004500 rows (its bytes `P\0E\0`).
    for max_rows in [1_342_194_944i32, i32::MAX, -1, 2] {
        let mut out = message(b'P', b"\0SELECT id FROM wire.people ORDER BY id\0\0\0");
        // Portal and statement unnamed; no formats, no parameters.
        out.extend(message(b'B', &[0; 8]));
        let mut execute = vec![0];
        execute.extend_from_slice(&max_rows.to_be_bytes());
        out.extend(message(b'E', &execute));
        out.extend(message(b'S', &[]));
        socket.write_all(&out).await.expect("write");
        let answers = until_ready(&mut socket).await;
        let tags: Vec<u8> = answers.iter().map(|(tag, _)| *tag).collect();
        let expected: &[u8] = if max_rows == 2 { b"12DDsZ" } else { b"12DDDCZ" };
        assert_eq!(tags, expected, "max_rows {max_rows}: {answers:?}");
    }
    assert_eq!(
        rows(&mut socket, "SELECT 'still here'").await,
        ["still here"]
    );
}

#[tokio::test]
async fn a_show_without_a_name_is_refused_and_the_connection_goes_on() {
    let (s, _turn) = server().await;
    let mut socket = sign_in(s).await;
    // The fuzz input's query ended in `SHOW `: datafusion-postgres 0.19 indexed its empty name.
    socket
        .write_all(&query("SELECT version(); SHOW transCT version(); SHOW "))
        .await
        .expect("write");
    let answers = until_ready(&mut socket).await;
    let errors: Vec<String> = (answers.iter().filter(|(tag, _)| *tag == b'E'))
        .map(|(_, body)| String::from_utf8_lossy(body).into_owned())
        .collect();
    assert!(
        matches!(&errors[..], [e] if e.contains("C42601") && e.contains("SHOW needs")),
        "{errors:?}"
    );
    assert_eq!(
        rows(&mut socket, "SELECT 'still here'").await,
        ["still here"]
    );
}

/// The error fields of an answer's ErrorResponses.
fn errors(answers: &[(u8, Vec<u8>)]) -> Vec<String> {
    (answers.iter().filter(|(tag, _)| *tag == b'E'))
        .map(|(_, body)| String::from_utf8_lossy(body).into_owned())
        .collect()
}

#[tokio::test]
async fn statements_of_exponential_parse_work_are_refused_54001_and_the_connection_goes_on() {
    let (s, _turn) = server().await;
    let mut socket = sign_in(s).await;
    // The fuzz input's Query body (its framing is 1 mode byte, the tag and a 2-byte length).
    let input = include_bytes!("../../fuzz/regressions/sql_wire-slow-nested-brackets-open");
    let nested = format!("SELECT {}1{}", "upper(".repeat(30), ")".repeat(30));
    for sql in [&input[4..], nested.as_bytes()] {
        let started = Instant::now();
        socket.write_all(&query_bytes(sql)).await.expect("write");
        let answers = until_ready(&mut socket).await;
        let errors = errors(&answers);
        assert!(
            matches!(&errors[..], [e] if e.contains("C54001") && e.contains("too complex")),
            "{errors:?}"
        );
        // Unbounded, either parse takes tens of seconds (the second about a day).
        assert!(started.elapsed() < PROMPT, "{:?}", started.elapsed());
    }
    // Sixteen levels fit the budget and run.
    let fits = format!("SELECT {}'x'{}", "upper(".repeat(16), ")".repeat(16));
    assert_eq!(rows(&mut socket, &fits).await, ["X"]);
    assert_eq!(
        rows(&mut socket, "SELECT 'still here'").await,
        ["still here"]
    );
}
