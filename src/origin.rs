//! The origin (`scheme://host[:port][/prefix]`) the service's links start with.
//!
//! `RAPID_PUBLIC_URL` wins when set: behind a balancer it is the only origin that is sure to be
//! right. Without it, the request's own `Host`; a `Forwarded` (`host=`, `proto=`) or
//! `X-Forwarded-Host`/`X-Forwarded-Proto` header is believed only when the connection's peer is
//! one of the trusted proxies, as for the client address (`client_addr.rs`): from anyone else it
//! would let a client put its own host into a link the service signs.

use actix_web::http::header::{HeaderMap, HOST};
use actix_web::HttpRequest;

use crate::client_addr::TrustedProxies;

/// A validated `RAPID_PUBLIC_URL`, without its trailing slash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicUrl(String);

impl PublicUrl {
    /// `http(s)://host[:port][/path]`; no query, fragment, user info or spaces.
    pub fn parse(url: &str) -> Result<PublicUrl, String> {
        let bad = |why: &str| format!("public URL [{url}] {why}");
        let url = url.trim().trim_end_matches('/');
        let rest = url
            .strip_prefix("http://")
            .or_else(|| url.strip_prefix("https://"))
            .ok_or_else(|| bad("must start with http:// or https://"))?;
        let host = rest.split('/').next().unwrap_or_default();
        if !valid_host(host) {
            return Err(bad("has no valid host[:port]"));
        }
        if url
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || matches!(c, '?' | '#' | '@'))
        {
            return Err(bad(
                "must not hold spaces, a query, a fragment or user info",
            ));
        }
        Ok(PublicUrl(url.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A host name, IPv4 or bracketed IPv6 address, with an optional port: nothing that could end
/// the authority early or smuggle a path into a link.
fn valid_host(host: &str) -> bool {
    !host.is_empty()
        && host.len() <= 261
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | ':' | '[' | ']'))
}

/// The origin for links in the answer to `req`.
pub fn link_origin(
    req: &HttpRequest,
    public: Option<&PublicUrl>,
    proxies: &TrustedProxies,
) -> String {
    if let Some(public) = public {
        return public.as_str().to_string();
    }
    let trusted = req
        .peer_addr()
        .is_some_and(|peer| proxies.trusts(peer.ip().to_canonical()));
    let own_host = req
        .headers()
        .get(HOST)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
        .or_else(|| req.uri().authority().map(|a| a.to_string()));
    origin_from(req.headers(), trusted, own_host)
}

fn origin_from(headers: &HeaderMap, trusted: bool, own_host: Option<String>) -> String {
    let (mut host, mut scheme) = (None, None);
    if trusted {
        let (f_host, f_proto) = forwarded(headers);
        host = f_host.or_else(|| last_value(headers, "x-forwarded-host"));
        scheme = f_proto.or_else(|| last_value(headers, "x-forwarded-proto"));
    }
    // A forwarded host that could bend the link is ignored, as if not sent.
    let host = host
        .filter(|h| valid_host(h))
        .or(own_host.filter(|h| valid_host(h)))
        .unwrap_or_else(|| "localhost".to_string());
    let scheme = scheme
        .map(|s| s.to_ascii_lowercase())
        .filter(|s| s == "http" || s == "https")
        // The service itself speaks plain HTTP; TLS is the proxy's.
        .unwrap_or_else(|| "http".to_string());
    format!("{scheme}://{host}")
}

/// The last element of a header that proxies append to (`a, b`): the one our proxy wrote.
fn last_value(headers: &HeaderMap, name: &str) -> Option<String> {
    let joined = headers
        .get_all(name)
        .filter_map(|v| v.to_str().ok())
        .collect::<Vec<_>>()
        .join(",");
    joined
        .rsplit(',')
        .map(str::trim)
        .find(|v| !v.is_empty())
        .map(str::to_string)
}

/// `host=` and `proto=` of the last `Forwarded` element (RFC 7239), quotes removed.
fn forwarded(headers: &HeaderMap) -> (Option<String>, Option<String>) {
    let Some(element) = last_value(headers, "forwarded") else {
        return (None, None);
    };
    let (mut host, mut proto) = (None, None);
    for pair in element.split(';') {
        let Some((key, value)) = pair.split_once('=') else {
            continue;
        };
        let value = value.trim().trim_matches('"').to_string();
        match key.trim().to_ascii_lowercase().as_str() {
            "host" => host = Some(value),
            "proto" => proto = Some(value),
            _ => {}
        }
    }
    (host, proto)
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::http::header::{HeaderName, HeaderValue};

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.append(
                HeaderName::from_bytes(k.as_bytes()).unwrap(),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        map
    }

    #[test]
    fn forwarded_headers_count_only_from_trusted_peers() {
        let h = headers(&[
            ("x-forwarded-host", "evil.example:9999"),
            ("x-forwarded-proto", "https"),
        ]);
        let own = || Some("node:8000".to_string());
        assert_eq!(origin_from(&h, false, own()), "http://node:8000");
        assert_eq!(origin_from(&h, true, own()), "https://evil.example:9999");
    }

    #[test]
    fn forwarded_wins_over_x_forwarded_and_its_last_element_counts() {
        let h = headers(&[
            (
                "forwarded",
                "host=spoof:1, for=1.2.3.4;host=\"lb.example:8443\";proto=https",
            ),
            ("x-forwarded-host", "other:1"),
        ]);
        assert_eq!(origin_from(&h, true, None), "https://lb.example:8443");
        // Appended X-Forwarded-Host: the proxy's value is the last.
        let h = headers(&[("x-forwarded-host", "client-wrote:1, lb:8080")]);
        assert_eq!(origin_from(&h, true, None), "http://lb:8080");
    }

    #[test]
    fn hosts_that_could_bend_a_link_are_not_used() {
        let h = headers(&[
            ("x-forwarded-host", "a.example/evil"),
            ("x-forwarded-proto", "javascript"),
        ]);
        assert_eq!(
            origin_from(&h, true, Some("node:1".into())),
            "http://node:1"
        );
        assert_eq!(
            origin_from(&HeaderMap::new(), false, None),
            "http://localhost"
        );
        assert_eq!(
            origin_from(&HeaderMap::new(), false, Some("x@y".into())),
            "http://localhost"
        );
    }

    #[test]
    fn public_urls_are_checked() {
        let p = PublicUrl::parse("https://data.example.com/rapid/").unwrap();
        assert_eq!(p.as_str(), "https://data.example.com/rapid");
        assert_eq!(
            PublicUrl::parse("http://[::1]:8080").unwrap().as_str(),
            "http://[::1]:8080"
        );
        for bad in [
            "data.example.com",
            "ftp://x",
            "https://",
            "https://a b",
            "https://u@h",
            "https://h/?q=1",
        ] {
            assert!(PublicUrl::parse(bad).is_err(), "{bad}");
        }
    }
}
