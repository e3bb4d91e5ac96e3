//! Hostile HTTP at the connection level, over raw TCP: refusals before the body close the
//! connection instead of draining it, `Expect: 100-continue` is refused before `100 Continue`,
//! protocol errors and limits get JSON answers, slow clients are cut off, and the server keeps
//! serving through all of it.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::{schema_json, Options, TestServer};

/// A body far larger than anything the server should read after refusing it (100 GB).
const HUGE: u64 = 100 * 1024 * 1024 * 1024;

/// Most body bytes a client can hand over after a refusal: the server's read cap (256 KiB) plus
/// what the two kernels buffer on loopback (here up to 32 MiB of receive window, `tcp_rmem`, and
/// 4 MiB of send buffer). Without the cap, a 10 s linger took 8.8 GB here.
const ACCEPTED_BOUND: u64 = 64 * 1024 * 1024;

pub(crate) fn connect(s: &TestServer) -> TcpStream {
    let stream = TcpStream::connect(s.base.trim_start_matches("http://")).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    stream
}

/// Reads one answer: status, headers (lower-case) and the JSON body.
pub(crate) fn read_answer(stream: &mut TcpStream) -> (u16, String, Value) {
    let mut buf = Vec::new();
    let mut byte = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        let n = stream.read(&mut byte).expect("answer head");
        assert_eq!(
            n,
            1,
            "connection closed before an answer: {:?}",
            String::from_utf8_lossy(&buf)
        );
        buf.push(byte[0]);
    }
    let head = String::from_utf8(buf).unwrap().to_ascii_lowercase();
    let status: u16 = head[9..12].parse().unwrap();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .map(|v| v.trim().parse().unwrap())
        .unwrap_or(0);
    let mut body = vec![0u8; length];
    stream.read_exact(&mut body).unwrap();
    let body = if length == 0 {
        Value::Null
    } else {
        serde_json::from_slice(&body).expect("a JSON body")
    };
    (status, head, body)
}

/// Reads until the server closes the connection; true if it did within `limit`.
fn closed_within(stream: &mut TcpStream, limit: Duration) -> bool {
    let started = Instant::now();
    let mut sink = [0u8; 4096];
    while started.elapsed() < limit {
        match stream.read(&mut sink) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::TimedOut => {}
            Err(_) => return true,
        }
    }
    false
}

/// Sends `head`, then body bytes as fast as the server takes them (chunked framing if `chunked`)
/// from another thread; returns the answer and how many body bytes the server took before it
/// closed the connection.
fn refused_while_sending(s: &TestServer, head: String, chunked: bool) -> (u16, Value, u64) {
    let mut stream = connect(s);
    stream.write_all(head.as_bytes()).unwrap();
    let mut writer = stream.try_clone().unwrap();
    let sender = std::thread::spawn(move || {
        let data = vec![b'x'; 64 * 1024];
        let chunk = if chunked {
            [format!("{:x}\r\n", data.len()).as_bytes(), &data, b"\r\n"].concat()
        } else {
            data
        };
        let mut sent: u64 = 0;
        while sent < HUGE && writer.write_all(&chunk).is_ok() {
            sent += chunk.len() as u64;
        }
        sent
    });
    let (status, _, body) = read_answer(&mut stream);
    assert!(
        closed_within(&mut stream, Duration::from_secs(30)),
        "the connection must be closed after a refusal"
    );
    let sent = sender.join().unwrap();
    (status, body, sent)
}

pub(crate) fn upload_head(path: &str, token: Option<&str>, framing: &str) -> String {
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    format!(
        "POST {path} HTTP/1.1\r\nHost: test\r\n{auth}Content-Type: multipart/form-data; boundary=x\r\n{framing}\r\n\r\n"
    )
}

#[test]
fn refusals_before_the_body_close_the_connection_instead_of_draining_it() {
    // A long linger (3 s): without the byte cap it would read gigabytes.
    let s = TestServer::start_with(Options {
        args: vec!["--close-linger-ms".into(), "3000".into()],
        ..Default::default()
    });
    s.create_schema(&schema_json(
        "shop",
        "orders",
        "PUBLIC",
        "APPEND",
        json!([{"name": "id", "data_type": "int", "allow_null": true}]),
    ));
    let admin = s.admin_token();
    let reader = s.token_with("reader", &["READ_ALL"]);
    let length = format!("Content-Length: {HUGE}");
    let chunked = "Transfer-Encoding: chunked".to_string();
    let orders = "/api/datasets/default/shop/orders";
    let json_head = |path: &str, token: Option<&str>, framing: &str| {
        upload_head(path, token, framing)
            .replace("multipart/form-data; boundary=x", "application/json")
    };
    let form_head = upload_head("/api/oauth2/token", None, &chunked).replace(
        "multipart/form-data; boundary=x",
        "application/x-www-form-urlencoded",
    );
    for (what, head, is_chunked, expected) in [
        ("no token", upload_head(orders, None, &length), false, 401),
        (
            "no token, chunked",
            upload_head(orders, None, &chunked),
            true,
            401,
        ),
        (
            "no permission",
            upload_head(orders, Some(&reader), &chunked),
            true,
            403,
        ),
        (
            "unknown dataset",
            upload_head("/api/datasets/default/shop/nothing", Some(&admin), &chunked),
            true,
            404,
        ),
        (
            "over the limit",
            upload_head(orders, Some(&admin), &length),
            false,
            413,
        ),
        (
            "schema body over its limit, chunked",
            json_head("/api/schema", Some(&admin), &chunked),
            true,
            413,
        ),
        ("token form over its limit, chunked", form_head, true, 413),
    ] {
        let (status, body, sent) = refused_while_sending(&s, head, is_chunked);
        assert_eq!(status, expected, "{what}: {body}");
        assert!(body["details"].is_string(), "{what}: {body}");
        assert!(
            sent <= ACCEPTED_BOUND,
            "{what}: {sent} bytes were taken after the refusal"
        );
    }
    let (status, _) = s.call("GET", "/api/status", None, None);
    assert_eq!(status, 200);
}

#[test]
fn expect_continue_is_refused_before_100_continue() {
    let s = TestServer::start();
    s.create_schema(&schema_json(
        "shop",
        "orders",
        "PUBLIC",
        "APPEND",
        json!([{"name": "id", "data_type": "int", "allow_null": true}]),
    ));
    let admin = s.admin_token();
    let reader = s.token_with("reader", &["READ_ALL"]);
    let orders = "/api/datasets/default/shop/orders";
    let expect = "Content-Length: 1000000\r\nExpect: 100-continue";
    for (token, path, expected) in [
        (None, orders, 401),
        (Some(reader.as_str()), orders, 403),
        (Some(admin.as_str()), "/api/datasets/default/shop/none", 404),
        (Some(admin.as_str()), "/api/no/such/route", 404),
    ] {
        let mut stream = connect(&s);
        stream
            .write_all(upload_head(path, token, expect).as_bytes())
            .unwrap();
        let (status, head, body) = read_answer(&mut stream);
        assert_eq!(status, expected, "{path} {head} {body}");
        assert!(body["details"].is_string(), "{body}");
        assert!(closed_within(&mut stream, Duration::from_secs(30)));
    }
    // Allowed: the client is told to go on.
    let mut stream = connect(&s);
    stream
        .write_all(upload_head(orders, Some(&admin), expect).as_bytes())
        .unwrap();
    let mut first = [0u8; 25];
    stream.read_exact(&mut first).unwrap();
    assert_eq!(&first, b"HTTP/1.1 100 Continue\r\n\r\n");
}

fn raw_answer(s: &TestServer, request: &[u8]) -> (u16, Value) {
    let mut stream = connect(s);
    stream.write_all(request).unwrap();
    let (status, _, body) = read_answer(&mut stream);
    (status, body)
}

#[test]
fn protocol_errors_and_limits_get_json_answers() {
    let s = TestServer::start();
    let many_headers: String = (0..80).map(|i| format!("X-H{i}: v\r\n")).collect();
    let cases: Vec<(&str, Vec<u8>, u16, &str)> = vec![
        ("bad request line", b"GARBAGE\r\n\r\n".to_vec(), 400, "Malformed"),
        (
            "length and chunked",
            b"POST /api/status HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec(),
            400,
            "Conflicting",
        ),
        (
            "two lengths",
            b"POST /api/status HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 5\r\n\r\nabc".to_vec(),
            400,
            "Conflicting",
        ),
        (
            "no host",
            b"GET /api/status HTTP/1.1\r\n\r\n".to_vec(),
            400,
            "Host",
        ),
        (
            "long URL",
            format!("GET /api/status?{} HTTP/1.1\r\nHost: a\r\n\r\n", "a".repeat(9000)).into_bytes(),
            414,
            "8192",
        ),
        (
            "too many headers",
            format!("GET /api/status HTTP/1.1\r\nHost: a\r\n{many_headers}\r\n").into_bytes(),
            431,
            "64 header fields",
        ),
        (
            "huge header",
            format!("GET /api/status HTTP/1.1\r\nHost: a\r\nX: {}\r\n\r\n", "v".repeat(40_000)).into_bytes(),
            431,
            "32768 bytes",
        ),
    ];
    for (what, request, status, words) in cases {
        let (got, body) = raw_answer(&s, &request);
        assert_eq!(got, status, "{what}: {body}");
        let message = body["details"].as_str().unwrap_or_default();
        assert!(message.contains(words), "{what}: {message}");
    }
    // Pipelined: earlier requests are answered, in order, before the refusal of a broken one.
    let mut stream = connect(&s);
    stream
        .write_all(b"GET /api/status HTTP/1.1\r\nHost: a\r\n\r\nGET /api/status HTTP/1.1\r\nHost: a\r\n\r\nBROKEN\r\n\r\n")
        .unwrap();
    for expected in [200, 200, 400] {
        assert_eq!(read_answer(&mut stream).0, expected);
    }
    let (status, _) = s.call("GET", "/api/status", None, None);
    assert_eq!(status, 200);
}

#[test]
fn slow_clients_are_cut_off_with_an_answer() {
    let s = TestServer::start_with(Options {
        args: vec![
            "--head-timeout-seconds".into(),
            "1".into(),
            "--body-timeout-seconds".into(),
            "1".into(),
        ],
        ..Default::default()
    });
    s.create_schema(&schema_json(
        "shop",
        "orders",
        "PUBLIC",
        "APPEND",
        json!([{"name": "id", "data_type": "int", "allow_null": true}]),
    ));
    // A head that never completes: 408 with JSON, then closed.
    let mut stream = connect(&s);
    stream.write_all(b"GET /api/status HTTP/1.1\r\nHo").unwrap();
    let (status, _, body) = read_answer(&mut stream);
    assert_eq!(status, 408, "{body}");
    assert!(body["details"].as_str().unwrap().contains("1 seconds"));
    assert!(closed_within(&mut stream, Duration::from_secs(30)));

    // A body that stops arriving: the upload fails with an answer, the connection closes.
    let mut stream = connect(&s);
    let head = upload_head(
        "/api/datasets/default/shop/orders",
        Some(&s.admin_token()),
        "Content-Length: 100000",
    );
    stream.write_all(head.as_bytes()).unwrap();
    stream
        .write_all(b"--x\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.csv\"\r\n\r\nid\n1\n")
        .unwrap();
    let (status, _, body) = read_answer(&mut stream);
    assert_eq!(status, 400, "{body}");
    assert!(closed_within(&mut stream, Duration::from_secs(30)));
    let (status, _) = s.call("GET", "/api/status", None, None);
    assert_eq!(status, 200);
}
