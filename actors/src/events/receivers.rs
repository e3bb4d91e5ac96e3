//! Which receivers the service may send to (`RAPID_WEBHOOK_ALLOW`). Without the setting every
//! address is allowed but those a server must never be made to call: link-local (cloud metadata
//! endpoints live there: 169.254.169.254, fd00:ec2::254), unspecified, multicast and broadcast.
//! With it, only addresses inside the listed networks are. The check runs on the resolved
//! addresses at every delivery (the resolver given to the HTTP client), so a name that later
//! resolves elsewhere is checked again.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use crate::error::{Error, Result};

/// One network: an address and a prefix length.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Network {
    addr: IpAddr,
    prefix: u8,
}

impl Network {
    /// `10.0.0.0/8`, `fd00::/8`, or a bare address (all its bits).
    pub fn parse(text: &str) -> Result<Network> {
        let bad = || Error::invalid(format!("{text:?} is not a network (as 10.0.0.0/8)"));
        let (addr, prefix) = match text.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (text, None),
        };
        let addr: IpAddr = addr.trim().parse().map_err(|_| bad())?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            Some(p) => p.trim().parse::<u8>().map_err(|_| bad())?,
            None => max,
        };
        if prefix > max {
            return Err(bad());
        }
        Ok(Network { addr, prefix })
    }

    pub fn contains(&self, ip: IpAddr) -> bool {
        match (self.addr, canonical(ip)) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                let mask = u32::MAX.checked_shl(32 - self.prefix as u32).unwrap_or(0);
                u32::from(net) & mask == u32::from(ip) & mask
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                let mask = u128::MAX.checked_shl(128 - self.prefix as u32).unwrap_or(0);
                u128::from(net) & mask == u128::from(ip) & mask
            }
            _ => false,
        }
    }
}

/// An IPv4 address written as IPv6 (`::ffff:169.254.169.254`) is checked as the IPv4 one.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6
            .to_ipv4_mapped()
            .map(IpAddr::V4)
            .unwrap_or(IpAddr::V6(v6)),
        v4 => v4,
    }
}

/// The receiver address rule.
#[derive(Debug, Clone, Default)]
pub struct ReceiverRule {
    /// Empty: every address but the never-allowed ones.
    allow: Vec<Network>,
}

impl ReceiverRule {
    /// From `RAPID_WEBHOOK_ALLOW`'s comma-separated networks (empty: the default rule).
    pub fn parse(list: &str) -> Result<ReceiverRule> {
        let allow = list
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(Network::parse)
            .collect::<Result<Vec<_>>>()?;
        Ok(ReceiverRule { allow })
    }

    pub fn allows(&self, ip: IpAddr) -> bool {
        let ip = canonical(ip);
        if !self.allow.is_empty() {
            return self.allow.iter().any(|n| n.contains(ip));
        }
        !never_by_default(ip)
    }

    /// Checks a receiver URL as written: http or https, a host, no credentials, and an address
    /// literal the rule allows. Names are checked when resolved, at every delivery.
    pub fn check_url(&self, url: &str) -> Result<reqwest::Url> {
        let parsed = reqwest::Url::parse(url)
            .map_err(|e| Error::invalid(format!("The webhook url {url:?} is not a URL: {e}")))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(Error::invalid(
                "The webhook url must be http:// or https://",
            ));
        }
        if !parsed.username().is_empty() || parsed.password().is_some() {
            return Err(Error::invalid(
                "The webhook url must not carry a user or password: the signature authenticates",
            ));
        }
        match parsed.host() {
            None => return Err(Error::invalid("The webhook url has no host")),
            Some(url::Host::Ipv4(ip)) => self.check_ip(IpAddr::V4(ip))?,
            Some(url::Host::Ipv6(ip)) => self.check_ip(IpAddr::V6(ip))?,
            Some(url::Host::Domain(_)) => {}
        }
        Ok(parsed)
    }

    fn check_ip(&self, ip: IpAddr) -> Result<()> {
        match self.allows(ip) {
            true => Ok(()),
            false => Err(Error::invalid(format!(
                "Webhooks may not be sent to {ip}: link-local, metadata, unspecified, multicast \
                 and broadcast addresses are refused unless RAPID_WEBHOOK_ALLOW lists them"
            ))),
        }
    }
}

fn never_by_default(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_multicast()
                || v4 == Ipv4Addr::BROADCAST
                // Alibaba Cloud's metadata address, outside link-local.
                || v4 == Ipv4Addr::new(100, 100, 100, 200)
        }
        IpAddr::V6(v6) => {
            let link_local = (v6.segments()[0] & 0xffc0) == 0xfe80;
            let aws_metadata = v6 == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254);
            link_local || aws_metadata || v6.is_unspecified() || v6.is_multicast()
        }
    }
}

/// The HTTP client's resolver: the system's answers, keeping only addresses the rule allows.
pub struct CheckedResolver(pub Arc<ReceiverRule>);

impl reqwest::dns::Resolve for CheckedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let rule = self.0.clone();
        Box::pin(async move {
            let host = format!("{}:0", name.as_str());
            let found: Vec<SocketAddr> = tokio::net::lookup_host(host).await?.collect();
            let allowed: Vec<SocketAddr> =
                found.into_iter().filter(|a| rule.allows(a.ip())).collect();
            if allowed.is_empty() {
                let refused: Box<dyn std::error::Error + Send + Sync> = format!(
                    "{} resolves to no address webhooks may be sent to",
                    name.as_str()
                )
                .into();
                return Err(refused);
            }
            let addrs: reqwest::dns::Addrs = Box::new(allowed.into_iter());
            Ok(addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn the_default_refuses_metadata_and_link_local_only() {
        let rule = ReceiverRule::default();
        for bad in [
            "169.254.169.254",
            "169.254.1.1",
            "0.0.0.0",
            "224.0.0.1",
            "255.255.255.255",
            "100.100.100.200",
            "fe80::1",
            "fd00:ec2::254",
            "::",
            "::ffff:169.254.169.254",
        ] {
            assert!(!rule.allows(ip(bad)), "{bad} must be refused");
        }
        for good in ["127.0.0.1", "10.1.2.3", "192.168.0.5", "::1", "8.8.8.8"] {
            assert!(rule.allows(ip(good)), "{good} must be allowed");
        }
    }

    #[test]
    fn a_list_allows_only_its_networks() {
        let rule = ReceiverRule::parse("10.0.0.0/8, 127.0.0.1, 169.254.169.254/32").unwrap();
        assert!(rule.allows(ip("10.200.0.1")));
        assert!(rule.allows(ip("127.0.0.1")));
        assert!(!rule.allows(ip("127.0.0.2")));
        assert!(rule.allows(ip("169.254.169.254")), "listed, so allowed");
        assert!(!rule.allows(ip("192.168.1.1")));
        assert!(ReceiverRule::parse("10.0.0.0/33").is_err());
        assert!(ReceiverRule::parse("nonsense").is_err());
    }

    #[test]
    fn urls_are_checked_as_written() {
        let rule = ReceiverRule::default();
        assert!(rule.check_url("http://127.0.0.1:9/hook").is_ok());
        assert!(rule.check_url("https://hooks.example.com/x").is_ok());
        for bad in [
            "ftp://example.com/",
            "http://169.254.169.254/latest/meta-data",
            "http://[fe80::1]/",
            "http://user:pw@example.com/",
            "not a url",
        ] {
            assert!(rule.check_url(bad).is_err(), "{bad}");
        }
    }
}
