//! The client's address, for the sign-in throttle and the front's per-address budgets: the connection's peer, unless the peer is a
//! trusted reverse proxy, in which case its `X-Forwarded-For` is believed.
//!
//! `X-Forwarded-For` is a list each proxy appends its peer to, so only its right end is written
//! by proxies we trust. It is read from the right, skipping trusted proxies; the first address
//! that is not one is the client. Anything to its left was written by the client and is ignored.

use std::net::IpAddr;

use actix_web::HttpRequest;

/// One trusted proxy: an address or a CIDR network.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Network {
    addr: IpAddr,
    prefix: u8,
}

impl Network {
    fn contains(&self, ip: IpAddr) -> bool {
        match (self.addr, ip.to_canonical()) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                let mask = u32::MAX
                    .checked_shl(32 - u32::from(self.prefix))
                    .unwrap_or(0);
                u32::from(net) & mask == u32::from(ip) & mask
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                let mask = u128::MAX
                    .checked_shl(128 - u32::from(self.prefix))
                    .unwrap_or(0);
                u128::from(net) & mask == u128::from(ip) & mask
            }
            _ => false,
        }
    }
}

/// A list of addresses and CIDR networks (trusted proxies, addresses without budgets).
#[derive(Debug, Clone, Default)]
pub struct Networks(Vec<Network>);

impl Networks {
    /// A comma list of addresses and CIDR networks (`10.0.0.1, 192.168.0.0/16, ::1`); `what`
    /// names an item in errors.
    pub fn parse(list: &str, what: &str) -> Result<Networks, String> {
        let mut nets = Vec::new();
        for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (addr, prefix) = match item.split_once('/') {
                Some((a, p)) => (a, Some(p)),
                None => (item, None),
            };
            let addr: IpAddr = addr
                .parse()
                .map_err(|_| format!("{what} [{item}] is not an IP address or network"))?;
            let addr = addr.to_canonical();
            let max = if addr.is_ipv4() { 32 } else { 128 };
            let prefix = match prefix {
                None => max,
                Some(p) => p
                    .parse::<u8>()
                    .ok()
                    .filter(|p| *p <= max)
                    .ok_or_else(|| format!("{what} [{item}] has a bad prefix length"))?,
            };
            nets.push(Network { addr, prefix });
        }
        Ok(Networks(nets))
    }

    /// Whether `ip` is in one of the networks.
    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = ip.to_canonical();
        self.0.iter().any(|n| n.contains(ip))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The proxies whose `X-Forwarded-For` is believed (`RAPID_TRUSTED_PROXIES`).
#[derive(Debug, Clone, Default)]
pub struct TrustedProxies(Networks);

impl TrustedProxies {
    /// A comma list of addresses and CIDR networks (`10.0.0.1, 192.168.0.0/16, ::1`).
    pub fn parse(list: &str) -> Result<TrustedProxies, String> {
        Networks::parse(list, "trusted proxy").map(TrustedProxies)
    }

    /// Whether `ip` (canonical) is one of the trusted proxies.
    pub fn trusts(&self, ip: IpAddr) -> bool {
        self.0.contains(ip)
    }

    /// The client address of `req`; `None` only without a peer (never on a TCP connection).
    pub fn client_of(&self, req: &HttpRequest) -> Option<IpAddr> {
        let peer = req.peer_addr()?.ip().to_canonical();
        let forwarded = req
            .headers()
            .get_all("x-forwarded-for")
            .filter_map(|v| v.to_str().ok())
            .collect::<Vec<_>>()
            .join(",");
        Some(self.resolve(peer, &forwarded))
    }

    /// The client behind `peer` given the `X-Forwarded-For` values `forwarded` (joined by commas):
    /// `peer` itself unless it is a trusted proxy.
    pub fn resolve(&self, peer: IpAddr, forwarded: &str) -> IpAddr {
        let peer = peer.to_canonical();
        if !self.trusts(peer) {
            return peer;
        }
        let mut client = peer;
        for hop in forwarded.rsplit(',').map(str::trim) {
            match hop.parse::<IpAddr>() {
                Ok(ip) => {
                    client = ip.to_canonical();
                    if !self.trusts(client) {
                        break;
                    }
                }
                // A hop we cannot read (garbage, `unknown`): stop at the last one we could.
                Err(_) => break,
            }
        }
        client
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn forwarded_for_is_believed_only_from_trusted_peers() {
        let t = TrustedProxies::parse("10.0.0.1, 192.168.0.0/16").unwrap();
        // Not a trusted peer: its header is the client's own words.
        assert_eq!(t.resolve(ip("203.0.113.9"), "1.2.3.4"), ip("203.0.113.9"));
        // Trusted: the rightmost untrusted hop is the client, whatever the client wrote before it.
        assert_eq!(t.resolve(ip("10.0.0.1"), "1.2.3.4"), ip("1.2.3.4"));
        assert_eq!(
            t.resolve(ip("10.0.0.1"), "6.6.6.6, 1.2.3.4, 192.168.3.3"),
            ip("1.2.3.4")
        );
        // No header, or only proxies: the innermost address known.
        assert_eq!(t.resolve(ip("10.0.0.1"), ""), ip("10.0.0.1"));
        assert_eq!(t.resolve(ip("10.0.0.1"), "192.168.1.1"), ip("192.168.1.1"));
        assert_eq!(t.resolve(ip("10.0.0.1"), "junk, 1.2.3.4"), ip("1.2.3.4"));
        assert_eq!(t.resolve(ip("10.0.0.1"), "1.2.3.4, junk"), ip("10.0.0.1"));
    }

    #[test]
    fn networks_parse_and_match() {
        let t = TrustedProxies::parse("::1,fd00::/8,127.0.0.0/8").unwrap();
        assert!(t.trusts(ip("::1")));
        assert!(t.trusts(ip("fd12::5")));
        assert!(t.trusts(ip("127.9.9.9")));
        assert!(t.trusts(ip("::ffff:127.0.0.1").to_canonical()));
        assert!(!t.trusts(ip("128.0.0.1")));
        assert!(TrustedProxies::parse("").unwrap().0.is_empty());
        assert!(Networks::parse("::1/129", "x").is_err());
        assert!(TrustedProxies::parse("10.0.0.0/33").is_err());
        assert!(TrustedProxies::parse("proxy.local").is_err());
        let all = TrustedProxies::parse("0.0.0.0/0").unwrap();
        assert!(all.trusts(ip("8.8.8.8")));
    }
}
