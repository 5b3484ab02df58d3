//! Webhook targets: which URLs a subscription may name (checked at creation) and which addresses a
//! delivery may reach (checked at each attempt, after resolving the host, and pinned for that attempt so
//! a second lookup cannot swap in another address).

use std::net::{IpAddr, SocketAddr};

use reqwest::Url;

/// The longest accepted URL, in bytes.
pub const MAX_URL: usize = 2048;

/// Why a URL is not an acceptable target.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    /// Not a URL, or longer than [`MAX_URL`].
    #[error("not an absolute http(s) URL of at most 2048 bytes: {0}")]
    Malformed(String),
    /// Another scheme than `http` or `https`.
    #[error("only http and https URLs are accepted, not {0:?}")]
    Scheme(String),
    /// Credentials in the URL (they would be shown in every listing).
    #[error("the URL must not carry a user name or password")]
    Credentials,
    /// The host is (or resolves only to) a non-public address and private targets are refused.
    #[error("{0} is not a public address and this service refuses private webhook targets")]
    Private(IpAddr),
    /// The host did not resolve.
    #[error("cannot resolve {host}: {detail}")]
    Resolve {
        /// The host.
        host: String,
        /// The resolver's message.
        detail: String,
    },
}

/// Parses and checks a subscription's URL: absolute, `http` or `https`, a host, no credentials, and —
/// when `allow_private` is off — not a literal non-public address.
pub fn check_url(url: &str, allow_private: bool) -> Result<Url, TargetError> {
    if url.len() > MAX_URL {
        return Err(TargetError::Malformed("too long".into()));
    }
    let parsed = Url::parse(url).map_err(|e| TargetError::Malformed(e.to_string()))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(TargetError::Scheme(parsed.scheme().to_owned()));
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(TargetError::Malformed("no host".into()));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(TargetError::Credentials);
    }
    if !allow_private
        && let Some(ip) = literal_ip(&parsed)
        && !is_public(ip)
    {
        return Err(TargetError::Private(ip));
    }
    Ok(parsed)
}

/// The address the URL names literally, if it does.
fn literal_ip(url: &Url) -> Option<IpAddr> {
    match url.host()? {
        url::Host::Ipv4(ip) => Some(IpAddr::V4(ip)),
        url::Host::Ipv6(ip) => Some(IpAddr::V6(ip)),
        url::Host::Domain(_) => None,
    }
}

/// Resolves the URL's host to the address an attempt connects to: the first the policy allows.
pub async fn resolve(url: &Url, allow_private: bool) -> Result<SocketAddr, TargetError> {
    let host = url.host_str().unwrap_or_default();
    let port = url.port_or_known_default().unwrap_or(80);
    if let Some(ip) = literal_ip(url) {
        if !allow_private && !is_public(ip) {
            return Err(TargetError::Private(ip));
        }
        return Ok(SocketAddr::new(ip, port));
    }
    let found: Vec<SocketAddr> = tokio::net::lookup_host((host, port))
        .await
        .map_err(|e| TargetError::Resolve {
            host: host.to_owned(),
            detail: e.to_string(),
        })?
        .collect();
    let first = found.first().copied().ok_or_else(|| TargetError::Resolve {
        host: host.to_owned(),
        detail: "no address".into(),
    })?;
    if allow_private {
        return Ok(first);
    }
    found
        .into_iter()
        .find(|a| is_public(a.ip()))
        .ok_or(TargetError::Private(first.ip()))
}

/// True for a globally routable unicast address: not loopback, private (RFC 1918, IPv6 unique local),
/// link-local, shared (100.64/10), documentation, benchmarking, unspecified, broadcast or multicast.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            !(v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || v4.is_documentation()
                || a == 0
                || (a == 100 && (64..128).contains(&b))
                || (a == 198 && (b == 18 || b == 19))
                || a >= 240)
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public(IpAddr::V4(v4));
            }
            let first = v6.segments()[0];
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00
                || (first & 0xffc0) == 0xfe80
                || first == 0x2001 && v6.segments()[1] == 0x0db8)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_checked() {
        assert!(check_url("https://example.com/hook", false).is_ok());
        assert!(check_url("http://127.0.0.1:9/x", true).is_ok());
        assert!(matches!(
            check_url("ftp://example.com", true),
            Err(TargetError::Scheme(_))
        ));
        assert!(matches!(
            check_url("not a url", true),
            Err(TargetError::Malformed(_))
        ));
        assert!(matches!(
            check_url("http://u:p@example.com", true),
            Err(TargetError::Credentials)
        ));
        assert!(matches!(
            check_url("http://127.0.0.1/", false),
            Err(TargetError::Private(_))
        ));
        assert!(matches!(
            check_url("http://[::1]/", false),
            Err(TargetError::Private(_))
        ));
        assert!(matches!(
            check_url("http://10.1.2.3/", false),
            Err(TargetError::Private(_))
        ));
    }

    #[test]
    fn only_global_addresses_are_public() {
        for private in [
            "127.0.0.1",
            "10.0.0.1",
            "192.168.1.1",
            "172.16.0.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
        ] {
            assert!(
                !is_public(private.parse().unwrap_or(IpAddr::from([127, 0, 0, 1]))),
                "{private}"
            );
        }
        for public in ["1.1.1.1", "93.184.216.34", "2606:4700:4700::1111"] {
            assert!(
                is_public(public.parse().unwrap_or(IpAddr::from([127, 0, 0, 1]))),
                "{public}"
            );
        }
    }

    #[tokio::test]
    async fn a_loopback_name_is_refused_when_private_targets_are() {
        let url = check_url("http://localhost:9/x", false).unwrap_or_else(|e| panic!("{e}"));
        assert!(matches!(resolve(&url, false).await, Err(TargetError::Private(_))));
        assert!(resolve(&url, true).await.is_ok());
    }
}
