//! A webhook receiver on loopback for the tests: a plain HTTP/1.1 server on its own thread that
//! records every request (headers, body, when) and answers the status its `answer` holds.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicU16, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One request as received.
#[derive(Debug, Clone)]
pub(crate) struct Delivery {
    pub path: String,
    /// Lower-case names.
    pub headers: HashMap<String, String>,
    pub body: String,
    pub at: Instant,
}

impl Delivery {
    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).expect("a JSON body")
    }
}

pub(crate) struct Receiver {
    pub url: String,
    got: Arc<Mutex<Vec<Delivery>>>,
    /// The status the next requests get.
    pub answer: Arc<AtomicU16>,
    /// How long it holds each request (recorded first) before answering.
    pub delay_ms: Arc<AtomicU64>,
}

impl Receiver {
    pub(crate) fn start() -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        let got = Arc::new(Mutex::new(Vec::new()));
        let answer = Arc::new(AtomicU16::new(204));
        let delay_ms = Arc::new(AtomicU64::new(0));
        let (g, a, d) = (got.clone(), answer.clone(), delay_ms.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (g, a, d) = (g.clone(), a.clone(), d.clone());
                std::thread::spawn(move || {
                    let _ = serve(stream, &g, &a, &d);
                });
            }
        });
        Receiver {
            url,
            got,
            answer,
            delay_ms,
        }
    }

    pub(crate) fn deliveries(&self) -> Vec<Delivery> {
        self.got.lock().unwrap().clone()
    }

    /// Waits (at most 30 s) until at least `n` requests came; answers them all.
    pub(crate) fn wait_for(&self, n: usize) -> Vec<Delivery> {
        let until = Instant::now() + Duration::from_secs(30);
        loop {
            let got = self.deliveries();
            if got.len() >= n || Instant::now() > until {
                assert!(
                    got.len() >= n,
                    "{} of {n} deliveries came: {got:#?}",
                    got.len()
                );
                return got;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn serve(
    stream: std::net::TcpStream,
    got: &Mutex<Vec<Delivery>>,
    answer: &AtomicU16,
    delay_ms: &AtomicU64,
) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let path = line.split(' ').nth(1).unwrap_or("").to_string();
    let mut headers = HashMap::new();
    loop {
        let mut h = String::new();
        reader.read_line(&mut h)?;
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    let len: usize = headers
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; len];
    reader.read_exact(&mut body)?;
    let status = answer.load(Ordering::SeqCst);
    got.lock().unwrap().push(Delivery {
        path,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
        at: Instant::now(),
    });
    std::thread::sleep(Duration::from_millis(delay_ms.load(Ordering::SeqCst)));
    let mut out = stream;
    write!(
        out,
        "HTTP/1.1 {status} X\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
    )?;
    out.flush()
}
