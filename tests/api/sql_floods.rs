//! Connection floods on the PostgreSQL listener: connections that never finish startup are
//! closed after `RAPID_PG_STARTUP_SECONDS`, and one source address holds at most
//! `RAPID_PG_CONNECTIONS_PER_ADDRESS` connections (more are refused with 53300) while other
//! addresses are still served.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use socket2::{Domain, Socket, Type};

use crate::support::{Options, TestServer, ADMIN_ID, ADMIN_SECRET};

/// A TCP connection to `to` from the loopback address `from` (127.0.0.2, 127.0.0.3, …).
fn connect_from(from: [u8; 4], to: SocketAddr) -> TcpStream {
    let socket = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
    socket.bind(&SocketAddr::from((from, 0)).into()).unwrap();
    socket.connect(&to.into()).unwrap();
    let stream: TcpStream = socket.into();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream
}

/// A startup message (protocol 3.0) for `user` on database `default`.
fn startup(user: &str) -> Vec<u8> {
    let mut body = 196_608u32.to_be_bytes().to_vec();
    for (k, v) in [("user", user), ("database", "default")] {
        body.extend_from_slice(k.as_bytes());
        body.push(0);
        body.extend_from_slice(v.as_bytes());
        body.push(0);
    }
    body.push(0);
    let mut message = ((body.len() + 4) as u32).to_be_bytes().to_vec();
    message.extend_from_slice(&body);
    message
}

/// Everything the server sends until it closes the connection (or the read timeout).
fn read_all(stream: &mut TcpStream) -> Vec<u8> {
    let mut out = Vec::new();
    let _ = stream.read_to_end(&mut out);
    out
}

/// The first message's type byte after sending a startup message.
fn first_answer(stream: &mut TcpStream) -> u8 {
    stream.write_all(&startup(ADMIN_ID)).unwrap();
    let mut kind = [0u8];
    stream.read_exact(&mut kind).unwrap();
    kind[0]
}

fn psql_select(psql: &str, addr: SocketAddr) -> (bool, String) {
    let out = std::process::Command::new(psql)
        .arg(format!(
            "host={} port={} user={ADMIN_ID} dbname=default sslmode=disable",
            addr.ip(),
            addr.port()
        ))
        .args(["-X", "-At", "-c", "SELECT 1"])
        .env("PGPASSWORD", ADMIN_SECRET)
        .env("PGCONNECT_TIMEOUT", "10")
        .output();
    match out {
        Ok(out) => (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).to_string()
                + &String::from_utf8_lossy(&out.stderr),
        ),
        Err(e) => (false, e.to_string()),
    }
}

#[test]
fn silent_connections_from_one_address_do_not_block_others() {
    let s = TestServer::start_with(Options {
        env: vec![
            ("RAPID_PG_LISTEN".into(), "127.0.0.1:0".into()),
            ("RAPID_PG_STARTUP_SECONDS".into(), "2".into()),
            ("RAPID_PG_CONNECTIONS_PER_ADDRESS".into(), "4".into()),
        ],
        ..Options::default()
    });
    let addr = s.pg_addr().unwrap();
    let flooder = [127, 0, 0, 2];
    let opened = Instant::now();
    let mut silent: Vec<TcpStream> = (0..4).map(|_| connect_from(flooder, addr)).collect();
    std::thread::sleep(Duration::from_millis(300));

    // A fifth from the same address is refused as PostgreSQL refuses when full.
    let mut extra = connect_from(flooder, addr);
    extra.write_all(&startup(ADMIN_ID)).unwrap();
    let answer = read_all(&mut extra);
    let text = String::from_utf8_lossy(&answer);
    assert_eq!(answer.first(), Some(&b'E'), "{text}");
    assert!(text.contains("53300"), "{text}");
    assert!(text.contains("RAPID_PG_CONNECTIONS_PER_ADDRESS"), "{text}");

    // Another address is served meanwhile: a raw startup gets the password request …
    let mut other = connect_from([127, 0, 0, 3], addr);
    assert_eq!(first_answer(&mut other), b'R');
    drop(other);
    // … and psql (from 127.0.0.1) runs a statement, when it is installed.
    if let Some(psql) = crate::sql_wire::psql_binary() {
        let (ok, out) = psql_select(&psql, addr);
        assert!(ok && out.trim() == "1", "{out}");
    }

    // The silent ones are closed at the startup limit, well before pgwire's own 60 s.
    for stream in &mut silent {
        let rest = read_all(stream);
        assert!(rest.is_empty(), "{rest:?}");
    }
    let took = opened.elapsed();
    assert!(
        took >= Duration::from_millis(1500) && took < Duration::from_secs(8),
        "{took:?}"
    );

    // Their slots are free again: the flooding address is served.
    let mut again = connect_from(flooder, addr);
    assert_eq!(first_answer(&mut again), b'R');

    // The metrics tell an operator what happened.
    let admin = s.admin_token();
    let refused = |reason: &str| {
        s.metric(
            &admin,
            &format!("rapid_pg_connections_refused_total{{reason=\"{reason}\"}}"),
        )
    };
    assert_eq!(refused("per_address"), 1.0);
    assert_eq!(refused("no_sign_in"), 4.0);
    assert_eq!(refused("full"), 0.0);
    assert!(s.metric(&admin, "rapid_pg_connections_open") >= 1.0);
    if crate::sql_wire::psql_binary().is_some() {
        assert!(s.metric(&admin, "rapid_pg_statements_total{outcome=\"ok\"}") >= 1.0);
    }
}

/// psql (libpq, which asks for TLS first under its default `sslmode=prefer`) over the address's
/// budget sees PostgreSQL's refusal, not a dropped connection.
#[test]
fn psql_over_the_address_budget_is_told_why() {
    let Some(psql) = crate::sql_wire::psql_binary() else {
        eprintln!("skipped: psql is not installed (scripts/pg.sh installs it)");
        return;
    };
    let s = TestServer::start_with(Options {
        env: vec![
            ("RAPID_PG_LISTEN".into(), "127.0.0.1:0".into()),
            ("RAPID_PG_CONNECTIONS_PER_ADDRESS".into(), "2".into()),
        ],
        ..Options::default()
    });
    let addr = s.pg_addr().unwrap();
    let _held: Vec<TcpStream> = (0..2).map(|_| connect_from([127, 0, 0, 1], addr)).collect();
    std::thread::sleep(Duration::from_millis(300));
    let out = std::process::Command::new(psql)
        .arg(format!(
            "host={} port={} user={ADMIN_ID} dbname=default sslmode=prefer",
            addr.ip(),
            addr.port()
        ))
        .args(["-X", "-At", "-c", "SELECT 1"])
        .env("PGPASSWORD", ADMIN_SECRET)
        .env("PGCONNECT_TIMEOUT", "10")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{text}");
    assert!(
        text.contains("too many connections from this address"),
        "{text}"
    );
}
