//! Per-address budgets at the connection front (issue 41): a flood from several loopback source
//! addresses is refused past its budget (429, `Retry-After`, JSON) while a client on 127.0.0.1 is
//! served; a sequential client past its burst is held to the rate, not refused; connections past
//! the cap of one address are refused at once; the table of addresses stays bounded; the host
//! itself has no budget by default.

use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use reqwest::blocking::Client;
use reqwest::StatusCode;
use socket2::{Domain, Socket, Type};

use crate::support::{Options, TestServer};

fn server(args: &[&str]) -> TestServer {
    TestServer::start_with(Options {
        args: args.iter().map(|s| s.to_string()).collect(),
        ..Options::default()
    })
}

fn loopback(last: u8) -> Ipv4Addr {
    Ipv4Addr::new(127, 0, 0, last)
}

fn server_addr(s: &TestServer) -> SocketAddr {
    s.base.trim_start_matches("http://").parse().unwrap()
}

/// A raw connection from `source`.
fn connect_from(source: Ipv4Addr, server: SocketAddr) -> TcpStream {
    let socket = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
    socket
        .bind(&SocketAddr::new(IpAddr::V4(source), 0).into())
        .unwrap();
    socket.connect(&server.into()).unwrap();
    let stream: TcpStream = socket.into();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream
}

/// Sends one `GET /api/status` (keeping the connection) and reads its whole answer's head.
fn status_on(stream: &mut TcpStream) -> String {
    stream
        .write_all(b"GET /api/status HTTP/1.1\r\nHost: t\r\n\r\n")
        .unwrap();
    read_answer(stream)
}

/// Reads until the end of an answer's head and its (small) body, or the end of the stream.
fn read_answer(stream: &mut TcpStream) -> String {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let text = String::from_utf8_lossy(&got).to_string();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length: ")
                        .map(str::to_string)
                })
                .and_then(|v| v.trim().parse::<usize>().ok());
            if length.is_some_and(|n| body.len() >= n) {
                return text;
            }
        }
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return text,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
}

fn client_from(source: Ipv4Addr) -> Client {
    Client::builder()
        .local_address(IpAddr::V4(source))
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

#[test]
fn a_flood_from_several_addresses_is_refused_past_its_budget_while_another_client_is_served() {
    // No exempt address: the good client on 127.0.0.1 has a budget too, and stays within it.
    let (rate, burst) = (5.0, 20.0);
    let s = server(&[
        "--address-requests-per-second",
        "5",
        "--address-request-burst",
        "20",
        // Shorter than one request's share of the rate: past the burst, refused, not held.
        "--address-request-max-wait-ms",
        "100",
        "--address-budget-exempt=",
    ]);
    let stop = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    let flood: Vec<_> = (0..12u8)
        .map(|i| {
            let (stop, url) = (stop.clone(), s.url("/api/status"));
            std::thread::spawn(move || {
                let http = client_from(loopback(2 + i % 4));
                let (mut ok, mut refused) = (0u32, 0u32);
                while !stop.load(Ordering::Relaxed) {
                    let res = http.get(&url).send().unwrap();
                    match res.status() {
                        StatusCode::OK => ok += 1,
                        StatusCode::TOO_MANY_REQUESTS => {
                            assert!(res.headers().contains_key("retry-after"));
                            let body: serde_json::Value = res.json().unwrap();
                            let details = body["details"].as_str().unwrap();
                            assert!(details.contains("Too many requests"), "{details}");
                            refused += 1;
                        }
                        other => panic!("flood answered {other}"),
                    }
                }
                (i % 4, ok, refused)
            })
        })
        .collect();
    let good = client_from(loopback(1));
    let mut good_answers = Vec::new();
    while started.elapsed() < Duration::from_secs(4) {
        good_answers.push(good.get(s.url("/api/status")).send().unwrap().status());
        std::thread::sleep(Duration::from_millis(300));
    }
    stop.store(true, Ordering::Relaxed);
    let elapsed = started.elapsed().as_secs_f64() + 1.5;
    let mut per_address = [(0u32, 0u32); 4];
    for t in flood {
        let (a, ok, refused) = t.join().unwrap();
        per_address[a as usize].0 += ok;
        per_address[a as usize].1 += refused;
    }
    assert!(good_answers.len() >= 8, "{good_answers:?}");
    assert!(
        good_answers.iter().all(|s| *s == StatusCode::OK),
        "the good client was refused: {good_answers:?}"
    );
    for (ok, refused) in per_address {
        assert!(refused > 0, "{per_address:?}");
        // Served at most its burst and its rate over the run (and the last answers' hold).
        assert!(f64::from(ok) <= burst + rate * elapsed, "{per_address:?}");
    }
}

#[test]
fn connections_past_the_cap_of_one_address_are_refused_at_once() {
    let s = server(&["--address-max-connections", "3"]);
    let addr = server_addr(&s);
    let mut held: Vec<TcpStream> = (0..3).map(|_| connect_from(loopback(2), addr)).collect();
    for c in &mut held {
        assert!(status_on(c).starts_with("HTTP/1.1 200"));
    }
    // The fourth from that address: 429 without being asked, and the connection closed.
    let mut fourth = connect_from(loopback(2), addr);
    let answer = read_answer(&mut fourth);
    assert!(answer.starts_with("HTTP/1.1 429"), "{answer}");
    assert!(
        answer.to_ascii_lowercase().contains("retry-after: 1"),
        "{answer}"
    );
    assert!(answer.contains("Too many connections"), "{answer}");
    // Another address is not affected, nor the host itself (no budget by default).
    let mut other = connect_from(loopback(3), addr);
    assert!(status_on(&mut other).starts_with("HTTP/1.1 200"));
    let mut local: Vec<TcpStream> = (0..6).map(|_| connect_from(loopback(1), addr)).collect();
    for c in &mut local {
        assert!(status_on(c).starts_with("HTTP/1.1 200"));
    }
    // A closed connection gives its place back.
    drop(held.pop());
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let mut again = connect_from(loopback(2), addr);
        let answer = status_on(&mut again);
        if answer.starts_with("HTTP/1.1 200") {
            break;
        }
        assert!(Instant::now() < deadline, "no place given back: {answer}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn the_table_of_addresses_is_bounded_and_newcomers_are_still_served() {
    let s = server(&["--address-table-entries", "16"]);
    for last in 2..42u8 {
        let status = client_from(loopback(last))
            .get(s.url("/api/status"))
            .send()
            .unwrap()
            .status();
        assert_eq!(status, StatusCode::OK, "from 127.0.0.{last}");
    }
    let token = s.admin_token();
    let metrics = s
        .request("GET", "/api/metrics")
        .bearer_auth(&token)
        .send()
        .unwrap()
        .text()
        .unwrap();
    let tracked: u64 = metrics
        .lines()
        .find_map(|l| l.strip_prefix("rapid_front_addresses_tracked "))
        .expect("the gauge is exported")
        .trim()
        .parse()
        .unwrap();
    assert!((1..=16).contains(&tracked), "{tracked} addresses tracked");
}

#[test]
fn behind_a_trusted_proxy_each_forwarded_client_has_its_own_budget() {
    let s = server(&[
        "--trusted-proxies",
        "127.0.0.1",
        "--address-budget-exempt=",
        "--address-requests-per-second",
        "1",
        "--address-request-burst",
        "3",
        "--address-request-max-wait-ms",
        "0",
    ]);
    let from = |client: &str| {
        let res = s
            .request("GET", "/api/status")
            .header("X-Forwarded-For", client)
            .send()
            .unwrap();
        (res.status(), res.headers().get("retry-after").cloned())
    };
    for _ in 0..3 {
        assert_eq!(from("198.51.100.7").0, StatusCode::OK);
    }
    let (status, retry) = from("198.51.100.7");
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(retry.unwrap(), "1");
    // Another client through the same proxy is not affected.
    assert_eq!(from("198.51.100.8").0, StatusCode::OK);
}

#[test]
fn a_sequential_client_past_its_burst_is_held_to_the_rate_not_refused() {
    let s = server(&[
        "--address-requests-per-second",
        "10",
        "--address-request-burst",
        "5",
    ]);
    let http = client_from(loopback(2));
    let started = Instant::now();
    for i in 0..15 {
        let status = http.get(s.url("/api/status")).send().unwrap().status();
        assert_eq!(status, StatusCode::OK, "request {i}");
    }
    // Ten past the burst at ten a second: about a second of waiting, none refused.
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(850), "{took:?}");
}
