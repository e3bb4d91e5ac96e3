//! Judging one HTTP/1 request head before actix-http sees it, so that protocol errors get a JSON
//! answer (actix-http's own refusals have empty bodies) and the configured limits apply.
//!
//! The rules mirror actix-http's decoder (same `httparse` parser, same header rules), so a head
//! passed here is one actix-http accepts; anything actix-http would refuse is refused here first,
//! with a message naming the rule. The result also says how the body is framed, which is how the
//! front finds where the next head starts.

use actix_web::http::{Method, StatusCode, Uri};

/// The figures a head is held to.
#[derive(Debug, Clone, Copy)]
pub struct HeadLimits {
    /// Largest request head (request line and headers), in bytes.
    pub max_head_bytes: usize,
    /// Most header fields in one request.
    pub max_headers: usize,
    /// Longest request target (path and query), in bytes.
    pub max_url_bytes: usize,
}

/// How the body after a head is framed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// No body: the next byte starts the next head.
    None,
    /// Exactly this many bytes.
    Length(u64),
    /// `Transfer-Encoding: chunked`.
    Chunked,
    /// Until the connection ends (CONNECT, WebSocket upgrade): nothing after it is judged.
    UntilClose,
}

/// A refusal: the status and the message of the JSON body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub status: StatusCode,
    pub message: String,
}

fn bad(message: impl Into<String>) -> Refusal {
    Refusal {
        status: StatusCode::BAD_REQUEST,
        message: message.into(),
    }
}

/// `Ok(None)`: the head is not complete yet. `Ok(Some((len, framing)))`: the first `len` bytes of
/// `buf` are a valid head. `Err`: the connection must be answered with this refusal and closed.
pub fn judge(buf: &[u8], limits: &HeadLimits) -> Result<Option<(usize, Framing)>, Refusal> {
    let too_large = || Refusal {
        status: StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
        message: format!(
            "The request head is larger than {} bytes or has more than {} header fields",
            limits.max_head_bytes, limits.max_headers
        ),
    };
    let mut headers = vec![httparse::EMPTY_HEADER; limits.max_headers];
    let mut req = httparse::Request::new(&mut headers);
    let len = match req.parse(buf) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => {
            return if buf.len() > limits.max_head_bytes {
                Err(too_large())
            } else {
                Ok(None)
            };
        }
        Err(httparse::Error::TooManyHeaders) => return Err(too_large()),
        Err(e) => return Err(bad(format!("Malformed HTTP request: {e}"))),
    };
    if len > limits.max_head_bytes {
        return Err(too_large());
    }
    // A complete parse always has a method, a path and a version.
    let (method, path, version) = (
        req.method.unwrap_or_default(),
        req.path.unwrap_or_default(),
        req.version.unwrap_or_default(),
    );
    if path.len() > limits.max_url_bytes {
        return Err(Refusal {
            status: StatusCode::URI_TOO_LONG,
            message: format!(
                "The request URL is longer than {} bytes",
                limits.max_url_bytes
            ),
        });
    }
    let method = Method::from_bytes(method.as_bytes())
        .map_err(|_| bad(format!("Malformed HTTP request: invalid method [{method}]")))?;
    Uri::try_from(path).map_err(|e| bad(format!("Malformed HTTP request target: {e}")))?;
    let framing = framing(&method, version, req.headers)?;
    Ok(Some((len, framing)))
}

/// The values of header `name` in a complete head `buf` (already judged), joined by commas.
pub fn header_values(buf: &[u8], name: &str) -> String {
    // The settings allow at most 96 header fields.
    let mut headers = [httparse::EMPTY_HEADER; 96];
    let mut req = httparse::Request::new(&mut headers);
    if req.parse(buf).is_err() {
        return String::new();
    }
    req.headers
        .iter()
        .filter(|h| h.name.eq_ignore_ascii_case(name))
        .filter_map(|h| std::str::from_utf8(h.value).ok())
        .collect::<Vec<_>>()
        .join(",")
}

/// The header rules of actix-http's decoder (RFC 9112 section 6): one Content-Length of digits,
/// one Transfer-Encoding which must be `chunked` and never beside a Content-Length, no
/// Transfer-Encoding in HTTP/1.0, one Host (required in HTTP/1.1).
fn framing(
    method: &Method,
    version: u8,
    headers: &[httparse::Header<'_>],
) -> Result<Framing, Refusal> {
    let mut content_length: Option<u64> = None;
    let mut transfer_encoding: Option<&str> = None;
    let mut hosts = 0;
    let mut websocket = false;
    for h in headers {
        let value = std::str::from_utf8(h.value)
            .map(str::trim)
            .map_err(|_| bad(format!("Header [{}] is not valid text", h.name)))?;
        if h.name.eq_ignore_ascii_case("content-length") {
            if content_length.is_some() {
                return Err(bad(
                    "Conflicting request lengths: more than one Content-Length",
                ));
            }
            if value.starts_with('+') {
                return Err(bad(format!("Invalid Content-Length [{value}]")));
            }
            let n = value
                .parse::<u64>()
                .map_err(|_| bad(format!("Invalid Content-Length [{value}]")))?;
            content_length = Some(n);
        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
            if version == 0 {
                return Err(bad(
                    "Transfer-Encoding is not allowed in an HTTP/1.0 request",
                ));
            }
            if transfer_encoding.is_some() {
                return Err(bad(
                    "Conflicting request lengths: more than one Transfer-Encoding",
                ));
            }
            transfer_encoding = Some(value);
        } else if h.name.eq_ignore_ascii_case("host") {
            hosts += 1;
            if hosts > 1 {
                return Err(bad("More than one Host header"));
            }
        } else if h.name.eq_ignore_ascii_case("upgrade") {
            websocket = value.eq_ignore_ascii_case("websocket");
        }
    }
    if version == 1 && hosts == 0 {
        return Err(bad("An HTTP/1.1 request needs a Host header"));
    }
    if let Some(te) = transfer_encoding {
        if !te.eq_ignore_ascii_case("chunked") {
            return Err(bad(format!(
                "Unsupported Transfer-Encoding [{te}]: only chunked is accepted"
            )));
        }
        if content_length.is_some() {
            return Err(bad(
                "Conflicting request lengths: both Content-Length and Transfer-Encoding",
            ));
        }
        return Ok(Framing::Chunked);
    }
    if version == 0 && method == Method::POST && content_length.is_none() {
        return Err(bad("An HTTP/1.0 POST request needs a Content-Length"));
    }
    Ok(match content_length {
        _ if websocket => Framing::UntilClose,
        Some(n) if n > 0 => Framing::Length(n),
        _ if method == Method::CONNECT => Framing::UntilClose,
        _ => Framing::None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: HeadLimits = HeadLimits {
        max_head_bytes: 1024,
        max_headers: 8,
        max_url_bytes: 64,
    };

    fn judged(head: &str) -> Result<Option<(usize, Framing)>, Refusal> {
        judge(head.as_bytes(), &LIMITS)
    }

    #[test]
    fn complete_heads_report_their_framing() {
        let get = "GET /api/status HTTP/1.1\r\nHost: a\r\n\r\nNEXT";
        assert_eq!(judged(get), Ok(Some((get.len() - 4, Framing::None))));
        let post = "POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\n";
        assert_eq!(judged(post).unwrap().unwrap().1, Framing::Length(5));
        let zero = "POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n";
        assert_eq!(judged(zero).unwrap().unwrap().1, Framing::None);
        let chunked = "POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n";
        assert_eq!(judged(chunked).unwrap().unwrap().1, Framing::Chunked);
        assert_eq!(judged("GET /x HTTP/1.1\r\nHost: a\r\n"), Ok(None));
    }

    #[test]
    fn protocol_errors_are_refused_with_a_reason() {
        for (head, status, words) in [
            ("GARBAGE\r\n\r\n", 400, "Malformed"),
            ("GET /x HTTP/1.1\r\n\r\n", 400, "Host"),
            (
                "POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
                400,
                "Conflicting",
            ),
            (
                "POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n",
                400,
                "Conflicting",
            ),
            ("POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: +3\r\n\r\n", 400, "Content-Length"),
            ("POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n", 400, "gzip"),
            ("POST /x HTTP/1.0\r\n\r\n", 400, "HTTP/1.0"),
        ] {
            let r = judged(head).unwrap_err();
            assert_eq!(r.status.as_u16(), status, "{head:?}");
            assert!(r.message.contains(words), "{head:?}: {}", r.message);
        }
    }

    #[test]
    fn header_values_are_joined() {
        let head = b"GET / HTTP/1.1\r\nHost: a\r\nX-Forwarded-For: 1.2.3.4\r\nx-forwarded-for: 5.6.7.8\r\n\r\n";
        assert_eq!(header_values(head, "X-Forwarded-For"), "1.2.3.4,5.6.7.8");
        assert_eq!(header_values(head, "forwarded"), "");
    }

    #[test]
    fn limits_are_refused_with_their_status() {
        let long_url = format!("GET /{} HTTP/1.1\r\nHost: a\r\n\r\n", "a".repeat(100));
        assert_eq!(
            judged(&long_url).unwrap_err().status,
            StatusCode::URI_TOO_LONG
        );
        let many: String = (0..9).map(|i| format!("X-{i}: v\r\n")).collect();
        let many = format!("GET / HTTP/1.1\r\nHost: a\r\n{many}\r\n");
        assert_eq!(
            judged(&many).unwrap_err().status,
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE
        );
        let big = format!("GET / HTTP/1.1\r\nHost: a\r\nX: {}\r\n", "v".repeat(2000));
        assert_eq!(
            judged(&big).unwrap_err().status,
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE
        );
    }
}
