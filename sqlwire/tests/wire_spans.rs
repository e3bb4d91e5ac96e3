//! Log lines of the PostgreSQL front name their session: each connection has a span with its
//! peer, backend pid and subject, each statement one with its number on the connection.

use std::io::Write;
use std::sync::{Arc, Mutex};

#[path = "support/engine.rs"]
mod engine;
// Shared with wire_findings.rs, which uses all of it.
#[allow(dead_code)]
#[path = "support/wire.rs"]
mod wire;

use wire::*;

/// What the subscriber writes, kept to be read back.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn a_statements_log_line_names_its_connection_subject_and_number() {
    let captured = Captured::default();
    let writer = captured.clone();
    tracing_subscriber::fmt()
        .with_max_level(tracing::Level::DEBUG)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .init();
    let (s, _turn) = server().await;
    let mut socket = sign_in(s).await;
    for _ in 0..2 {
        assert_eq!(
            rows(&mut socket, "SELECT count(*) FROM wire.people").await,
            ["3"]
        );
    }
    let text = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    let answered: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("PostgreSQL statement answered"))
        .collect();
    assert_eq!(answered.len(), 2, "{text}");
    for (n, line) in answered.iter().enumerate() {
        assert!(line.contains("pg_connection{peer=127.0.0.1:"), "{line}");
        assert!(line.contains(" pid="), "{line}");
        let subject = [
            format!("subject={}", s.user),
            format!("subject=\"{}\"", s.user),
        ];
        assert!(subject.iter().any(|f| line.contains(f.as_str())), "{line}");
        assert!(
            line.contains(&format!("pg_statement{{statement={}}}", n + 1)),
            "{line}"
        );
    }
}
