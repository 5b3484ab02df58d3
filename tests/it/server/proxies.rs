//! Trusted proxies: behind a configured proxy the per-IP request limit charges the client that
//! `X-Forwarded-For` names (the rightmost untrusted hop, so a spoofed leftmost entry changes nothing),
//! an untrusted peer's header is ignored, and a trusted proxy's connections are exempt from the per-IP
//! connection bound. Before, every request behind a proxy shared the proxy's bucket and its connections.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use agent_adaptor::server::{IpLimits, ServerConfig, TrustedProxies};

use super::{client, start_with};

fn one_request_per_client(config: &mut ServerConfig) {
    config.ip_limits = IpLimits {
        requests_per_second: Some(0.01),
        burst: Some(1),
        max_clients: None,
    };
}

async fn status_from(base: &str, forwarded: Option<&str>) -> u16 {
    let mut req = client().get(format!("{base}/v1/agents"));
    if let Some(f) = forwarded {
        req = req.header("x-forwarded-for", f);
    }
    req.send().await.unwrap().status().as_u16()
}

#[tokio::test]
async fn proxies_behind_a_trusted_proxy_each_forwarded_client_has_its_own_bucket() {
    let mut config = ServerConfig::for_tests();
    one_request_per_client(&mut config);
    config.trusted_proxies = TrustedProxies::parse(&["127.0.0.1", "10.0.0.0/8"]).unwrap();
    let server = start_with(config).await;
    let base = server.url();
    assert_eq!(status_from(&base, Some("203.0.113.5")).await, 200);
    assert_eq!(
        status_from(&base, Some("203.0.113.5")).await,
        429,
        "the same client again"
    );
    assert_eq!(
        status_from(&base, Some("203.0.113.6")).await,
        200,
        "another client behind the proxy"
    );
    // The client appended by the proxy is the rightmost untrusted hop: a spoofed leftmost entry and
    // trusted inner hops do not buy a fresh bucket.
    assert_eq!(
        status_from(&base, Some("198.51.100.77, 203.0.113.5, 10.1.2.3")).await,
        429
    );
    assert_eq!(status_from(&base, Some("198.51.100.8, 10.1.2.3")).await, 200);
    // The proxy's own requests (no header) are the proxy's bucket.
    assert_eq!(status_from(&base, None).await, 200);
    assert_eq!(status_from(&base, None).await, 429);
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn proxies_an_untrusted_peers_forwarded_header_is_ignored() {
    let mut config = ServerConfig::for_tests();
    one_request_per_client(&mut config);
    let server = start_with(config).await;
    let base = server.url();
    assert_eq!(status_from(&base, Some("203.0.113.5")).await, 200);
    assert_eq!(
        status_from(&base, Some("203.0.113.6")).await,
        429,
        "a header from an untrusted peer must not pick the bucket"
    );
    server.shutdown().await.unwrap();
}

/// Opens a connection and sends one keep-alive request; returns the stream and the status line.
fn open_and_ask(addr: std::net::SocketAddr) -> (TcpStream, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(b"GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    let mut buf = [0u8; 512];
    let n = s.read(&mut buf).unwrap_or(0);
    let head = String::from_utf8_lossy(&buf[..n]);
    (s, head.lines().next().unwrap_or_default().to_owned())
}

async fn connections_served(trusted: bool) -> Vec<String> {
    let mut config = ServerConfig::for_tests();
    config.connections.max_connections_per_ip = 2;
    if trusted {
        config.trusted_proxies = TrustedProxies::parse(&["127.0.0.1"]).unwrap();
    }
    let server = start_with(config).await;
    let addr = server.local_addr();
    let statuses = tokio::task::spawn_blocking(move || {
        let mut open = Vec::new();
        let mut statuses = Vec::new();
        for _ in 0..4 {
            let (s, status) = open_and_ask(addr);
            open.push(s);
            statuses.push(status);
        }
        statuses
    })
    .await
    .unwrap();
    server.shutdown().await.unwrap();
    statuses
}

#[tokio::test]
async fn proxies_a_trusted_proxy_is_exempt_from_the_per_ip_connection_bound() {
    let trusted = connections_served(true).await;
    assert!(
        trusted.iter().all(|s| s.starts_with("HTTP/1.1 200")),
        "four connections from a trusted proxy: {trusted:?}"
    );
    let untrusted = connections_served(false).await;
    assert_eq!(
        untrusted.iter().filter(|s| s.starts_with("HTTP/1.1 200")).count(),
        2,
        "the bound still holds for an untrusted peer: {untrusted:?}"
    );
}
