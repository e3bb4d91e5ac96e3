//! The PostgreSQL front built in-process as the fuzz harness builds it, for the wire tests: the
//! real listener on a loopback port over an engine with one tiny PUBLIC dataset and a
//! READ_ALL_PUBLIC client, and a client speaking the protocol byte by byte.
//!
//! The tests share one server and a process-wide count of live sessions, so they run one at a
//! time (`SERIAL`).

use std::net::SocketAddr;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use rapid_actors::engine::Engine;
use rapid_actors::query::QuerySettings;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::engine::{message, seeded_engine};

/// Longest any answer or close may take here.
pub(crate) const PROMPT: Duration = Duration::from_secs(10);

pub(crate) struct Server {
    pub addr: SocketAddr,
    pub user: String,
    pub password: String,
}

static SERVER: OnceLock<Server> = OnceLock::new();
/// Held through a test's awaits: tokio's mutex.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The shared server, and this test's turn.
pub(crate) async fn server() -> (&'static Server, tokio::sync::MutexGuard<'static, ()>) {
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
pub(crate) async fn start_engine(dir: std::path::PathBuf) -> (Engine, String, String) {
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

pub(crate) fn query(sql: &str) -> Vec<u8> {
    query_bytes(sql.as_bytes())
}

/// A simple query message of any bytes (its NUL added).
pub(crate) fn query_bytes(sql: &[u8]) -> Vec<u8> {
    let mut body = sql.to_vec();
    body.push(0);
    message(b'Q', &body)
}

/// One backend message (tag, body) within [`PROMPT`]; None when the server has closed.
pub(crate) async fn read_message(socket: &mut TcpStream) -> Option<(u8, Vec<u8>)> {
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
pub(crate) async fn until_ready(socket: &mut TcpStream) -> Vec<(u8, Vec<u8>)> {
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
pub(crate) async fn sign_in(s: &Server) -> TcpStream {
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
pub(crate) async fn rows(socket: &mut TcpStream, sql: &str) -> Vec<String> {
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
pub(crate) async fn closed_by_server(socket: &mut TcpStream) {
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
pub(crate) async fn eventually(mut check: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < PROMPT {
        if check() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    check()
}
