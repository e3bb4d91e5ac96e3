//! Retrying the bench's idempotent requests (job polls, the final counts).
//!
//! A keep-alive connection the server closes just as the client reuses it fails the request
//! although the server never saw it; a poll or a count can simply be asked again. Uploads are
//! never retried: a lost answer does not say whether the upload was stored.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::Value;

/// At most this many attempts per request, waiting `FIRST_DELAY` doubled each time, at most
/// `MAX_DELAY`: about 3 s in all before the bench gives up on a request.
const ATTEMPTS: u32 = 6;
const FIRST_DELAY: Duration = Duration::from_millis(50);
const MAX_DELAY: Duration = Duration::from_secs(1);

/// Counts the retries of a run, for the summary.
#[derive(Debug, Default)]
pub(crate) struct Retries(AtomicU64);

impl Retries {
    pub(crate) fn count(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    /// Sends the request `make` builds until it gets an answer that is not a transport error or
    /// a 502/503/504 (a balancer or a node momentarily unable to answer); returns its status and
    /// JSON body (`Null` if not JSON), or the last error once the attempts are spent.
    pub(crate) async fn send(
        &self,
        make: impl Fn() -> reqwest::RequestBuilder,
    ) -> Result<(u16, Value), String> {
        let mut delay = FIRST_DELAY;
        let mut attempt = 1;
        loop {
            let outcome = match make().send().await {
                Ok(res) => {
                    let status = res.status().as_u16();
                    match res.bytes().await {
                        Ok(body) if !matches!(status, 502..=504) => {
                            return Ok((
                                status,
                                serde_json::from_slice(&body).unwrap_or(Value::Null),
                            ))
                        }
                        Ok(_) => format!("answered {status}"),
                        Err(e) => format!("reading the answer: {e}"),
                    }
                }
                Err(e) => format!("error sending request: {e}"),
            };
            if attempt >= ATTEMPTS {
                return Err(format!("{outcome} (after {attempt} attempts)"));
            }
            self.0.fetch_add(1, Ordering::Relaxed);
            tokio::time::sleep(delay).await;
            delay = (delay * 2).min(MAX_DELAY);
            attempt += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::TcpListener;

    /// A server on a free port that drops the first `drops` connections unanswered and answers
    /// the rest with `{"ok": true}`; returns its URL.
    fn flaky_server(drops: usize) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/poll", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            for (i, conn) in listener.incoming().enumerate() {
                let Ok(mut conn) = conn else { continue };
                let mut head = [0u8; 4096];
                let _ = conn.read(&mut head);
                if i < drops {
                    continue; // dropped: the client sees the connection closed
                }
                let body = br#"{"ok": true}"#;
                let _ = write!(
                    conn,
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                    body.len()
                );
                let _ = conn.write_all(body);
            }
        });
        url
    }

    fn client() -> reqwest::Client {
        reqwest::Client::builder().build().unwrap()
    }

    #[tokio::test]
    async fn a_dropped_connection_is_retried_and_counted() {
        let url = flaky_server(2);
        let (http, retries) = (client(), Retries::default());
        let (status, body) = retries.send(|| http.get(&url)).await.unwrap();
        assert_eq!((status, body["ok"].as_bool()), (200, Some(true)));
        assert_eq!(retries.count(), 2);
    }

    #[tokio::test]
    async fn retries_are_bounded() {
        let url = flaky_server(usize::MAX);
        let (http, retries) = (client(), Retries::default());
        let error = retries.send(|| http.get(&url)).await.unwrap_err();
        assert!(error.contains("after 6 attempts"), "{error}");
        assert_eq!(retries.count(), u64::from(ATTEMPTS - 1));
    }
}
