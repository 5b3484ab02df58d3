//! Trusted proxies: which peer addresses may tell the service who the client is.
//!
//! Behind a load balancer every connection comes from the balancer, so the per-IP request limit and the
//! logs would see one client. When the socket peer is in the configured trusted set (addresses or CIDR
//! ranges, `[proxies] trusted` / `--trusted-proxy`), the client is read from `X-Forwarded-For`: walking the
//! list from the right (the entry the nearest proxy appended), trusted hops are skipped and the first
//! untrusted address is the client; if every hop is trusted, the leftmost is. An entry that is not an IP
//! address ends the walk at the hop to its right, so a client cannot inject a value past a proxy that
//! appended correctly. A peer outside the set is the client, whatever headers it sends. With the set empty
//! (the default) the header is never read.
//!
//! Connections from a trusted proxy are exempt from the per-IP connection bound (they carry many clients)
//! but still count against the global one.

use std::net::IpAddr;
use std::str::FromStr;

use axum::http::HeaderMap;
use ipnet::IpNet;

/// The header proxies append the client address to.
pub const FORWARDED_FOR: &str = "x-forwarded-for";

/// The peers allowed to name the client. Empty by default: nobody is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedProxies {
    nets: Vec<IpNet>,
}

/// A trusted-proxy entry that is neither an IP address nor a CIDR range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("trusted proxy {0:?} is neither an IP address nor a CIDR range (10.0.0.0/8, fd00::/8)")]
pub struct BadProxy(pub String);

impl TrustedProxies {
    /// Parses addresses (`10.1.2.3`, `::1`) and CIDR ranges (`10.0.0.0/8`).
    pub fn parse<S: AsRef<str>>(entries: &[S]) -> Result<Self, BadProxy> {
        let nets = entries
            .iter()
            .map(|e| {
                let e = e.as_ref().trim();
                IpNet::from_str(e)
                    .or_else(|_| IpAddr::from_str(e).map(IpNet::from))
                    .map_err(|_| BadProxy(e.to_owned()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(TrustedProxies { nets })
    }

    /// True when no proxy is trusted.
    pub fn is_empty(&self) -> bool {
        self.nets.is_empty()
    }

    /// True when `ip` is a trusted proxy (an IPv4-mapped IPv6 address counts as its IPv4 address).
    pub fn trusts(&self, ip: IpAddr) -> bool {
        let ip = ip.to_canonical();
        self.nets.iter().any(|n| n.contains(&ip))
    }

    /// The client of a request that arrived from `peer` with `headers`; see the module docs.
    pub fn client_ip(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        if !self.trusts(peer) {
            return peer;
        }
        let hops = headers
            .get_all(FORWARDED_FOR)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .map(str::trim)
            .filter(|h| !h.is_empty())
            .collect::<Vec<_>>();
        let mut client = peer;
        for hop in hops.iter().rev() {
            match IpAddr::from_str(hop) {
                Ok(ip) => {
                    client = ip.to_canonical();
                    if !self.trusts(client) {
                        return client;
                    }
                }
                Err(_) => return client,
            }
        }
        client
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(xff: &[&str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in xff {
            h.append(FORWARDED_FOR, v.parse().unwrap());
        }
        h
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn an_untrusted_peer_is_the_client_whatever_it_sends() {
        let p = TrustedProxies::parse(&["10.0.0.0/8"]).unwrap();
        assert_eq!(
            p.client_ip(ip("192.0.2.1"), &headers(&["203.0.113.9"])),
            ip("192.0.2.1")
        );
        let none = TrustedProxies::default();
        assert_eq!(
            none.client_ip(ip("10.0.0.1"), &headers(&["203.0.113.9"])),
            ip("10.0.0.1")
        );
    }

    #[test]
    fn the_rightmost_untrusted_hop_is_the_client() {
        let p = TrustedProxies::parse(&["10.0.0.0/8", "127.0.0.1"]).unwrap();
        let peer = ip("127.0.0.1");
        assert_eq!(p.client_ip(peer, &headers(&["203.0.113.9"])), ip("203.0.113.9"));
        // A spoofed leftmost entry is ignored: the proxy appended the real client on the right.
        assert_eq!(
            p.client_ip(peer, &headers(&["198.51.100.1, 203.0.113.9, 10.1.1.1"])),
            ip("203.0.113.9")
        );
        // Several header lines are one list, in order.
        assert_eq!(
            p.client_ip(peer, &headers(&["198.51.100.1", "203.0.113.9"])),
            ip("203.0.113.9")
        );
        // Every hop trusted: the leftmost.
        assert_eq!(
            p.client_ip(peer, &headers(&["10.2.2.2, 10.1.1.1"])),
            ip("10.2.2.2")
        );
        // No header: the peer.
        assert_eq!(p.client_ip(peer, &HeaderMap::new()), peer);
    }

    #[test]
    fn garbage_ends_the_walk_at_the_last_address_a_proxy_vouched_for() {
        let p = TrustedProxies::parse(&["10.0.0.0/8"]).unwrap();
        let peer = ip("10.0.0.1");
        assert_eq!(p.client_ip(peer, &headers(&["203.0.113.9, not-an-ip"])), peer);
        assert_eq!(
            p.client_ip(peer, &headers(&["not-an-ip, 10.3.3.3"])),
            ip("10.3.3.3")
        );
        assert_eq!(p.client_ip(peer, &headers(&["unknown"])), peer);
    }

    #[test]
    fn mapped_addresses_and_bad_entries() {
        let p = TrustedProxies::parse(&["127.0.0.1", "fd00::/8"]).unwrap();
        assert!(p.trusts(ip("::ffff:127.0.0.1")));
        assert!(p.trusts(ip("fd12::1")));
        assert!(!p.trusts(ip("127.0.0.2")));
        assert_eq!(
            TrustedProxies::parse(&["10.0.0.0/33"]),
            Err(BadProxy("10.0.0.0/33".into()))
        );
        assert!(TrustedProxies::parse(&["example.com"]).is_err());
    }
}
