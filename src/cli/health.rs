//! `agent-adaptor health`: asks a running service whether it is up, for a container `HEALTHCHECK` or a
//! supervisor, with no HTTP client installed in the image. Exit 0 when the service answers 200, 1 when it
//! answers anything else or nothing in time, 2 for a URL it cannot use.
//!
//! The address defaults to the service's own `AGENT_ADAPTOR_BIND` (a wildcard bind is asked on loopback),
//! else 127.0.0.1:8080; `--ready` asks `/readyz` (the store answers) instead of `/healthz` (the process
//! serves). Only plain `http://` is spoken: the check runs next to the service, inside its network.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Arguments of `health`.
#[derive(Debug, Args)]
pub struct HealthArgs {
    /// The service's base URL (`http://host:port`); default: from `AGENT_ADAPTOR_BIND`, else
    /// `http://127.0.0.1:8080`.
    #[arg(long)]
    url: Option<String>,
    /// Ask `/readyz` (the store answers) rather than `/healthz` (the process serves).
    #[arg(long)]
    ready: bool,
    /// Seconds to wait for the answer (default 5).
    #[arg(long, default_value_t = 5)]
    timeout_secs: u64,
}

/// Why a health URL cannot be used.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum UrlError {
    /// Not `http://`.
    #[error("only http:// URLs are checked, got {0:?}")]
    Scheme(String),
    /// No host and port.
    #[error("{0:?} has no host:port")]
    Authority(String),
}

/// The `host:port` of `url` (scheme `http`, port 80 when absent).
fn authority(url: &str) -> Result<String, UrlError> {
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| UrlError::Scheme(url.to_owned()))?;
    let host = rest.split(['/', '?']).next().unwrap_or_default();
    if host.is_empty() {
        return Err(UrlError::Authority(url.to_owned()));
    }
    let has_port = match host.rfind(']') {
        Some(close) => host[close..].contains(':'),
        None => host.contains(':'),
    };
    Ok(if has_port {
        host.to_owned()
    } else {
        format!("{host}:80")
    })
}

/// The address to ask when no URL is given: the service's bind, on loopback when it is a wildcard.
fn default_authority(bind: Option<&str>) -> String {
    match bind.and_then(|b| b.parse::<SocketAddr>().ok()) {
        Some(addr) if addr.ip().is_unspecified() => {
            let loopback: std::net::IpAddr = if addr.is_ipv4() {
                std::net::Ipv4Addr::LOCALHOST.into()
            } else {
                std::net::Ipv6Addr::LOCALHOST.into()
            };
            SocketAddr::new(loopback, addr.port()).to_string()
        }
        Some(addr) => addr.to_string(),
        None => "127.0.0.1:8080".to_owned(),
    }
}

/// One `GET path` over a fresh connection; the status code of the answer.
async fn status_of(authority: &str, path: &str) -> std::io::Result<u16> {
    let mut stream = TcpStream::connect(authority).await?;
    let request = format!("GET {path} HTTP/1.1\r\nhost: {authority}\r\nconnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await?;
    let mut head = Vec::with_capacity(256);
    let mut buf = [0u8; 256];
    while !head.windows(2).any(|w| w == b"\r\n") {
        let n = stream.read(&mut buf).await?;
        if n == 0 || head.len() > 4096 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
    let line = String::from_utf8_lossy(&head);
    line.split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("not an HTTP answer: {:?}", line.lines().next())))
}

/// Runs the check.
pub async fn health(args: HealthArgs) -> ExitCode {
    let authority = match args.url.as_deref() {
        Some(url) => match authority(url) {
            Ok(a) => a,
            Err(e) => {
                eprintln!("agent-adaptor: {e}");
                return ExitCode::from(2);
            }
        },
        None => default_authority(std::env::var("AGENT_ADAPTOR_BIND").ok().as_deref()),
    };
    let path = if args.ready { "/readyz" } else { "/healthz" };
    let wait = Duration::from_secs(args.timeout_secs.max(1));
    match tokio::time::timeout(wait, status_of(&authority, path)).await {
        Ok(Ok(200)) => ExitCode::SUCCESS,
        Ok(Ok(code)) => {
            eprintln!("agent-adaptor: http://{authority}{path} answered {code}");
            ExitCode::from(1)
        }
        Ok(Err(e)) => {
            eprintln!("agent-adaptor: http://{authority}{path}: {e}");
            ExitCode::from(1)
        }
        Err(_) => {
            eprintln!("agent-adaptor: http://{authority}{path}: no answer in {wait:?}");
            ExitCode::from(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_defaults() {
        assert_eq!(authority("http://127.0.0.1:9/x").unwrap(), "127.0.0.1:9");
        assert_eq!(authority("http://svc").unwrap(), "svc:80");
        assert_eq!(authority("http://[::1]:81").unwrap(), "[::1]:81");
        assert_eq!(authority("http://[::1]").unwrap(), "[::1]:80");
        assert!(matches!(authority("https://x:1"), Err(UrlError::Scheme(_))));
        assert!(matches!(authority("http:///p"), Err(UrlError::Authority(_))));
        assert_eq!(default_authority(Some("0.0.0.0:8080")), "127.0.0.1:8080");
        assert_eq!(default_authority(Some("[::]:81")), "[::1]:81");
        assert_eq!(default_authority(Some("10.1.1.1:7")), "10.1.1.1:7");
        assert_eq!(default_authority(None), "127.0.0.1:8080");
    }
}
