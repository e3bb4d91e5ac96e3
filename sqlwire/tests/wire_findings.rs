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
//! - an Execute asking for 1,342,194,944 rows (pgwire 0.41 reserved room for them: 53 GB, and
//!   the process aborted) gets its rows.
//!
//! The tests share one server and a process-wide count of live sessions, so they run one at a
//! time (`SERIAL`).

use std::net::SocketAddr;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use rapid_actors::engine::Engine;
use rapid_actors::query::sql::tables::live_sessions;
use rapid_actors::query::QuerySettings;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

#[path = "support/engine.rs"]
mod engine;

use engine::{message, seeded_engine};

/// Longest any answer or close may take here.
const PROMPT: Duration = Duration::from_secs(10);

struct Server {
    addr: SocketAddr,
    user: String,
    password: String,
}

static SERVER: OnceLock<Server> = OnceLock::new();
/// Held through a test's awaits: tokio's mutex.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The shared server, and this test's turn.
async fn server() -> (&'static Server, tokio::sync::MutexGuard<'static, ()>) {
    let turn = SERIAL.lock().await;
    let server = SERVER.get_or_init(|| {
        let dir = tempfile::tempdir().expect("tempdir").keep();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            actix_rt::System::new().block_on(async move {
                let (engine, user, password) = start_engine(dir).await;
                // More than the default 16 connections at once from this address.
                let listener = rapid_sqlwire::PgListener::bind("127.0.0.1:0", None)
                    .expect("bind")
                    .with_bounds(rapid_sqlwire::Bounds {
                        per_address: rapid_sqlwire::MAX_CONNECTIONS,
                        ..Default::default()
                    });
                let addr = listener.local_addr().expect("address");
                tx.send(Server {
                    addr,
                    user,
                    password,
                })
                .expect("send");
                listener.serve(engine).await.expect("the listener stopped");
            })
        });
        rx.recv().expect("the server started")
    });
    (server, turn)
}

/// The engine with `wire.people` (PUBLIC, three rows) and a READ_ALL_PUBLIC client's id and
/// secret.
async fn start_engine(dir: std::path::PathBuf) -> (Engine, String, String) {
    let people = r#"{"metadata": {"domain": "wire", "dataset": "people", "sensitivity": "PUBLIC",
            "owners": [{"name": "Wire", "email": "wire@example.com"}]},
        "columns": [
            {"name": "id", "data_type": "int", "allow_null": false},
            {"name": "name", "data_type": "string", "allow_null": true}]}"#;
    let query = QuerySettings {
        timeout: Duration::from_secs(5),
        ..QuerySettings::default()
    };
    let people_csv = "id,name\n1,ann\n2,bob\n3,\n";
    seeded_engine(dir, "wire", query, &[(people, people_csv)]).await
}

fn query(sql: &str) -> Vec<u8> {
    query_bytes(sql.as_bytes())
}

/// A simple query message of any bytes (its NUL added).
fn query_bytes(sql: &[u8]) -> Vec<u8> {
    let mut body = sql.to_vec();
    body.push(0);
    message(b'Q', &body)
}

/// One backend message (tag, body) within [`PROMPT`]; None when the server has closed.
async fn read_message(socket: &mut TcpStream) -> Option<(u8, Vec<u8>)> {
    let read = async {
        let tag = socket.read_u8().await.ok()?;
        let len = socket.read_u32().await.ok()? as usize;
        let mut body = vec![0; len.checked_sub(4)?];
        socket.read_exact(&mut body).await.ok()?;
        Some((tag, body))
    };
    tokio::time::timeout(PROMPT, read)
        .await
        .expect("no answer and no close within the time limit")
}

/// The messages up to the next ReadyForQuery (included).
async fn until_ready(socket: &mut TcpStream) -> Vec<(u8, Vec<u8>)> {
    let mut out = Vec::new();
    loop {
        let m = read_message(socket).await.expect("the server closed");
        let ready = m.0 == b'Z';
        out.push(m);
        if ready {
            return out;
        }
    }
}

/// A connection signed in to database `default`, at its first ReadyForQuery.
async fn sign_in(s: &Server) -> TcpStream {
    let mut body = 196_608u32.to_be_bytes().to_vec();
    for (k, v) in [("user", s.user.as_str()), ("database", "default")] {
        for part in [k, v] {
            body.extend_from_slice(part.as_bytes());
            body.push(0);
        }
    }
    body.push(0);
    let mut out = (body.len() as u32 + 4).to_be_bytes().to_vec();
    out.extend_from_slice(&body);
    let mut password = s.password.as_bytes().to_vec();
    password.push(0);
    out.extend(message(b'p', &password));
    let mut socket = TcpStream::connect(s.addr).await.expect("connect");
    socket.write_all(&out).await.expect("startup");
    let answers = until_ready(&mut socket).await;
    assert!(
        answers.iter().all(|(tag, _)| *tag != b'E'),
        "sign-in refused"
    );
    socket
}

/// The first column of the rows of a simple query's answer (text format).
async fn rows(socket: &mut TcpStream, sql: &str) -> Vec<String> {
    socket.write_all(&query(sql)).await.expect("write");
    let answers = until_ready(socket).await;
    if let Some((_, e)) = answers.iter().find(|(tag, _)| *tag == b'E') {
        panic!("{sql}: {}", String::from_utf8_lossy(e));
    }
    let first = |body: &Vec<u8>| {
        let len = i32::from_be_bytes([body[2], body[3], body[4], body[5]]);
        String::from_utf8_lossy(&body[6..6 + len.max(0) as usize]).into_owned()
    };
    let data = answers.iter().filter(|(tag, _)| *tag == b'D');
    data.map(|(_, body)| first(body)).collect()
}

/// Waits (within [`PROMPT`]) for the server to close `socket`.
async fn closed_by_server(socket: &mut TcpStream) {
    let mut buf = [0u8; 4096];
    let drain = async {
        while let Ok(n) = socket.read(&mut buf).await {
            if n == 0 {
                return;
            }
        }
    };
    tokio::time::timeout(PROMPT, drain)
        .await
        .expect("the server kept the connection open");
}

/// Polls `check` every 20 ms until it holds or [`PROMPT`] has passed.
async fn eventually(mut check: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < PROMPT {
        if check() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    check()
}

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
