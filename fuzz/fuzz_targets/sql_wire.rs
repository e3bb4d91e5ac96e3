//! The PostgreSQL front (rapid-sqlwire) as a client reaches it: the real listener
//! (`PgListener::serve`, our message framing, pgwire's decoders, our sign-in and session
//! handlers) on a loopback port, over an engine with two tiny datasets, started once per process.
//! No panic may happen anywhere (libfuzzer-sys's panic hook aborts on any panic, also one inside
//! the server's tasks), and every connection must end or answer.
//!
//! Byte 0 chooses the mode:
//! - `% 4 == 0`: a new connection; the rest is sent raw from the first byte (startup, SSL
//!   request, cancel request, anything), then the client half-closes and the server must close.
//! - `% 4 == 1` / `3`: the rest as frames `[tag][len: u16 BE][body]` (the harness writes the
//!   protocol's length; a `Q` body gets its closing NUL), on the process's signed-in connection
//!   to database `default` / `postgres`.
//! - `% 4 == 2`: the rest raw (the protocol's own framing, fuzzed lengths) on the signed-in
//!   connection to `default`; a last message cut short is padded with zeros when at most 4 KiB
//!   are missing, otherwise the client half-closes (and signs in again for the next input).
//!
//! On a signed-in connection each input is followed by `Sync`, `ROLLBACK` and a probe
//! (`SELECT 'probe-N'`), read up to its ReadyForQuery: the connection must answer and be idle
//! again. If the server closed it (legitimate after a FATAL error, a Terminate, a message length
//! no message may have or an unknown tag), the next input signs in again; the harness counts
//! these on stderr. A connection serves at most [`INPUTS_PER_CONNECTION`] inputs, so the session
//! state inputs leave (prepared statements, settings) stays bounded.
#![no_main]

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use rapid_actors::engine::Engine;
use rapid_actors::query::QuerySettings;
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

/// The admin client (from the "environment"): creates the datasets and the reader.
#[path = "../../sqlwire/tests/support/engine.rs"]
mod engine;

use engine::{message, seeded_engine};

/// Longest an input may go unanswered (or its connection stay open) before the client drops it.
const CONNECTION_LIMIT: Duration = Duration::from_secs(30);
/// Inputs one signed-in connection serves before the harness signs in afresh.
const INPUTS_PER_CONNECTION: u64 = 1000;
/// A raw input's last message cut short is completed with zeros when at most this is missing.
const MAX_PADDING: usize = 4096;

struct Service {
    addr: SocketAddr,
    /// The reader client: READ_ALL_PUBLIC, so it sees `fuzz.people` and not `fuzz.secrets`.
    user: String,
    password: String,
    client: tokio::runtime::Runtime,
    /// The signed-in connections to `default` and `postgres`, with the inputs each has served.
    signed: Mutex<[Option<(TcpStream, u64)>; 2]>,
    counts: Counts,
}

/// What the harness saw, printed on stderr every 10,000 inputs.
#[derive(Default)]
struct Counts {
    inputs: AtomicU64,
    sign_ins: AtomicU64,
    closed_by_server: AtomicU64,
    not_idle: AtomicU64,
    half_closed: AtomicU64,
    slow: AtomicU64,
    /// Inputs and microseconds spent, by mode.
    by_mode: [(AtomicU64, AtomicU64); 4],
}

/// How often the counts are printed (`SQL_WIRE_REPORT`, default every 10,000 inputs).
fn report_every() -> u64 {
    static EVERY: OnceLock<u64> = OnceLock::new();
    *EVERY.get_or_init(|| {
        let every = std::env::var("SQL_WIRE_REPORT").ok();
        every.and_then(|v| v.parse().ok()).unwrap_or(10_000).max(1)
    })
}

impl Counts {
    fn add(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    fn report(&self) {
        let n = self.inputs.fetch_add(1, Ordering::Relaxed) + 1;
        if n % report_every() == 0 {
            let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
            let modes: Vec<String> = (self.by_mode.iter())
                .map(|(n, us)| format!("{} in {} ms", get(n), get(us) / 1000))
                .collect();
            eprintln!(
                "sql_wire: {n} inputs, {} sign-ins, {} connections closed by the server, {} not \
                 idle after the probe, {} raw inputs half-closed, {} slow; by mode: {}",
                get(&self.sign_ins),
                get(&self.closed_by_server),
                get(&self.not_idle),
                get(&self.half_closed),
                get(&self.slow),
                modes.join(", "),
            );
        }
    }
}

static SERVICE: OnceLock<Service> = OnceLock::new();

fn service() -> &'static Service {
    SERVICE.get_or_init(|| {
        let dir = tempfile::tempdir().expect("tempdir").keep();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            actix_rt::System::new().block_on(async move {
                let (engine, user, password) = start_engine(dir).await;
                let listener = rapid_sqlwire::PgListener::bind("127.0.0.1:0", None)
                    .expect("bind")
                    .with_bounds(rapid_sqlwire::Bounds {
                        startup: Duration::from_secs(10),
                        per_address: rapid_sqlwire::MAX_CONNECTIONS,
                    });
                let addr = listener.local_addr().expect("address");
                tx.send((addr, user, password)).expect("send");
                listener.serve(engine).await.expect("the listener stopped");
            })
        });
        let (addr, user, password) = rx.recv().expect("the service started");
        let client = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("client runtime");
        Service {
            addr,
            user,
            password,
            client,
            signed: Mutex::new([None, None]),
            counts: Counts::default(),
        }
    })
}

/// The engine with `fuzz.people` (PUBLIC) and `fuzz.secrets` (PRIVATE, partitioned), and the
/// READ_ALL_PUBLIC reader's id and secret.
async fn start_engine(dir: std::path::PathBuf) -> (Engine, String, String) {
    let query = QuerySettings {
        // Every input's statements end within this.
        timeout: Duration::from_secs(5),
        memory_bytes: 256 << 20,
        ..QuerySettings::default()
    };
    let people = r#"{"metadata": {"domain": "fuzz", "dataset": "people", "sensitivity": "PUBLIC",
            "owners": [{"name": "Fuzz", "email": "fuzz@example.com"}]},
        "columns": [
            {"name": "id", "data_type": "int", "allow_null": false},
            {"name": "name", "data_type": "string", "allow_null": true},
            {"name": "score", "data_type": "double", "allow_null": true},
            {"name": "day", "data_type": "date", "format": "%Y-%m-%d", "allow_null": true},
            {"name": "ok", "data_type": "boolean", "allow_null": true}]}"#;
    let people_csv = "id,name,score,day,ok\n1,ann,1.5,2024-01-02,true\n2,bob,,2024-02-03,false\n\
                      3,,-7.25,,\n";
    let secrets = r#"{"metadata": {"domain": "fuzz", "dataset": "secrets", "sensitivity": "PRIVATE",
            "owners": [{"name": "Fuzz", "email": "fuzz@example.com"}]},
        "columns": [
            {"name": "region", "partition_index": 0, "data_type": "string", "allow_null": false},
            {"name": "amount", "data_type": "int", "allow_null": true}]}"#;
    let secrets_csv = "region,amount\nnorth,10\nsouth,20\nnorth,\n";
    let datasets = [(people, people_csv), (secrets, secrets_csv)];
    seeded_engine(dir, "fuzz", query, &datasets).await
}

fn startup(user: &str, database: &str) -> Vec<u8> {
    let mut body = 196_608u32.to_be_bytes().to_vec();
    for (k, v) in [
        ("user", user),
        ("database", database),
        ("application_name", "fuzz"),
    ] {
        body.extend_from_slice(k.as_bytes());
        body.push(0);
        body.extend_from_slice(v.as_bytes());
        body.push(0);
    }
    body.push(0);
    let mut m = (body.len() as u32 + 4).to_be_bytes().to_vec();
    m.extend_from_slice(&body);
    m
}

fn signed_in(s: &Service, database: &str) -> Vec<u8> {
    let mut out = startup(&s.user, database);
    let mut password = s.password.as_bytes().to_vec();
    password.push(0);
    out.extend(message(b'p', &password));
    out
}

/// The frontend messages' tags pgwire decodes once signed in, Terminate aside.
const TAGS: &[u8] = b"QPBEDCSHdcfp";

/// `[tag][len: u16 BE][body]...` into protocol messages (a cut-off last frame keeps what there is).
/// A tag byte that is no message's (pgwire closes the connection on it, which the raw modes
/// reach) stands for one of [`TAGS`], so that framed inputs stay on their signed-in connection.
fn frames(mut rest: &[u8], out: &mut Vec<u8>) {
    while let Some((&tag, after)) = rest.split_first() {
        let tag = match tag {
            b'X' => tag,
            _ if TAGS.contains(&tag) => tag,
            _ => TAGS[usize::from(tag) % TAGS.len()],
        };
        let len = match after {
            [a, b, ..] => u16::from_be_bytes([*a, *b]) as usize,
            _ => 0,
        };
        let after = after.get(2..).unwrap_or(&[]);
        let (body, next) = after.split_at(len.min(after.len()));
        if tag == b'Q' {
            let mut q = body.to_vec();
            q.push(0);
            out.extend(message(tag, &q));
        } else {
            out.extend(message(tag, body));
        }
        rest = next;
    }
}

fn fingerprint(data: &[u8]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    data.hash(&mut h);
    h.finish()
}

/// One backend message (tag, body); None at the end of the stream.
async fn read_message<R: AsyncReadExt + Unpin>(rd: &mut R) -> Option<(u8, Vec<u8>)> {
    let tag = rd.read_u8().await.ok()?;
    let len = rd.read_u32().await.ok()? as usize;
    let mut body = vec![0; len.checked_sub(4)?];
    rd.read_exact(&mut body).await.ok()?;
    Some((tag, body))
}

/// A new connection signed in to `database`, read up to its first ReadyForQuery.
async fn sign_in(s: &Service, database: &str) -> TcpStream {
    let mut socket = TcpStream::connect(s.addr)
        .await
        .expect("the listener refused a connection");
    let _ = socket.set_nodelay(true);
    socket
        .write_all(&signed_in(s, database))
        .await
        .expect("startup");
    let mut rd = BufReader::new(&mut socket);
    loop {
        match read_message(&mut rd).await {
            Some((b'Z', _)) => break,
            Some((b'E', body)) => panic!("sign-in refused: {}", String::from_utf8_lossy(&body)),
            Some(_) => {}
            None => panic!("the server closed the connection during sign-in"),
        }
    }
    Counts::add(&s.counts.sign_ins);
    socket
}

enum Outcome {
    /// The probe answered and the connection is idle, out of any transaction.
    Idle,
    /// The probe answered, but in a transaction.
    NotIdle,
    /// The server closed the connection.
    Closed,
    /// Neither an answer nor a close within [`CONNECTION_LIMIT`].
    Slow,
}

/// Writes `bytes` while reading the answers: up to the DataRow holding `marker` and the
/// ReadyForQuery after it, or (no marker) up to the server's close.
async fn exchange(
    socket: &mut TcpStream,
    bytes: &[u8],
    marker: Option<&[u8]>,
    half_close: bool,
) -> Outcome {
    let (rd, mut wr) = socket.split();
    // The write half stays open while the answers are read: a half-close tells the session the
    // client has gone (a statement still running is dropped).
    let write = async {
        let _ = wr.write_all(bytes).await;
        if half_close {
            let _ = wr.shutdown().await;
        }
    };
    let read = async {
        let mut rd = BufReader::new(rd);
        let mut seen = false;
        loop {
            match read_message(&mut rd).await {
                None => return Outcome::Closed,
                Some((b'D', body)) => {
                    seen |= marker.is_some_and(|m| body.windows(m.len()).any(|w| w == m));
                }
                Some((b'Z', status)) if seen => {
                    return match status[..] {
                        [b'I'] => Outcome::Idle,
                        _ => Outcome::NotIdle,
                    };
                }
                Some(_) => {}
            }
        }
    };
    let both = async { tokio::join!(write, read).1 };
    tokio::time::timeout(CONNECTION_LIMIT, both)
        .await
        .unwrap_or(Outcome::Slow)
}

/// A simple query message.
fn query(sql: &str) -> Vec<u8> {
    let mut body = sql.as_bytes().to_vec();
    body.push(0);
    message(b'Q', &body)
}

/// Raw messages `[tag][len: u32 BE][body]...` with the last one completed with zeros if it is
/// cut short by at most [`MAX_PADDING`]; None when the harness cannot follow the framing (a
/// length below 4, a cut-off header, more missing).
fn padded(raw: &[u8]) -> Option<Vec<u8>> {
    let mut out = raw.to_vec();
    let mut at = 0;
    while at < raw.len() {
        let header = raw.get(at..at + 5)?;
        let len = u32::from_be_bytes([header[1], header[2], header[3], header[4]]) as usize;
        if len < 4 {
            return None;
        }
        let end = at + 1 + len;
        if end > raw.len() {
            if end - raw.len() > MAX_PADDING {
                return None;
            }
            out.resize(end, 0);
        }
        at = end;
    }
    Some(out)
}

/// Sends `bytes` on the signed-in connection `which` (0: `default`, 1: `postgres`); when
/// `complete`, then Sync, ROLLBACK and the probe, and keeps the connection if it is idle after.
fn on_signed_in(s: &Service, which: usize, mut bytes: Vec<u8>, complete: bool) -> Outcome {
    let marker = format!("probe-{}", s.counts.inputs.load(Ordering::Relaxed));
    if complete {
        bytes.extend(message(b'S', &[]));
        bytes.extend(query("ROLLBACK"));
        bytes.extend(query(&format!("SELECT '{marker}'")));
    }
    let taken = s.signed.lock().expect("connections")[which].take();
    s.client.block_on(async {
        let (mut socket, served) = match taken {
            Some(kept) => kept,
            None => (sign_in(s, ["default", "postgres"][which]).await, 0),
        };
        let marker = complete.then_some(marker.as_bytes());
        let outcome = exchange(&mut socket, &bytes, marker, !complete).await;
        match outcome {
            Outcome::Idle if served + 1 < INPUTS_PER_CONNECTION => {
                s.signed.lock().expect("connections")[which] = Some((socket, served + 1));
            }
            Outcome::Idle | Outcome::Slow => {}
            Outcome::NotIdle => Counts::add(&s.counts.not_idle),
            Outcome::Closed if complete => Counts::add(&s.counts.closed_by_server),
            Outcome::Closed => Counts::add(&s.counts.half_closed),
        }
        outcome
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let s = service();
    s.counts.report();
    let started = std::time::Instant::now();
    let outcome = match mode % 4 {
        0 => s.client.block_on(async {
            let mut socket = TcpStream::connect(s.addr)
                .await
                .expect("the listener refused a connection");
            let _ = socket.set_nodelay(true);
            exchange(&mut socket, rest, None, true).await
        }),
        2 => match padded(rest) {
            Some(bytes) => on_signed_in(s, 0, bytes, true),
            None => on_signed_in(s, 0, rest.to_vec(), false),
        },
        m => {
            let mut bytes = Vec::new();
            frames(rest, &mut bytes);
            on_signed_in(s, usize::from(m == 3), bytes, true)
        }
    };
    let (n, us) = &s.counts.by_mode[usize::from(mode % 4)];
    Counts::add(n);
    us.fetch_add(started.elapsed().as_micros() as u64, Ordering::Relaxed);
    if matches!(outcome, Outcome::Slow) {
        // Kept for a look (not a crash: the input ends, libFuzzer goes on).
        Counts::add(&s.counts.slow);
        let name = format!("artifacts/sql_wire/slow-{:016x}", fingerprint(data));
        let _ = std::fs::write(&name, data);
        eprintln!("sql_wire: no answer or close within {CONNECTION_LIMIT:?}: {name}");
    }
});
