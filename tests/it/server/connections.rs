//! The listener under hostile clients (issue #22 item 7), over raw sockets on 127.0.0.1: half-sent
//! request heads are closed after `header_read_timeout`, a silent or keep-alive connection after
//! `idle_timeout`, a slow body fails `408 body_timeout`; past `max_connections_per_ip` or
//! `max_connections` a new connection is closed at once while the open ones keep working; and a real
//! `serve` whose file descriptors run out under a slowloris flood answers `/healthz` again.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use agent_adaptor::server::{Connections, ServerConfig};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

use super::{get, listening_url, start_with};

fn limits(f: impl FnOnce(&mut Connections)) -> ServerConfig {
    let mut config = ServerConfig::for_tests();
    f(&mut config.connections);
    config
}

/// A connection to `addr` from the loopback address `from` (127.0.0.x are all local on Linux).
async fn connect_from(from: [u8; 4], addr: SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind(SocketAddr::from((from, 0))).unwrap();
    socket.connect(addr).await.unwrap()
}

/// True when the peer closed `s` (EOF or reset) within `within`, whatever it sent first.
async fn closed_within(s: &mut TcpStream, within: Duration) -> bool {
    let deadline = tokio::time::Instant::now() + within;
    let mut buf = [0u8; 4096];
    loop {
        match tokio::time::timeout_at(deadline, s.read(&mut buf)).await {
            Err(_) => return false,
            Ok(Ok(0)) | Ok(Err(_)) => return true,
            Ok(Ok(_)) => {}
        }
    }
}

/// Sends a `GET path` on a keep-alive connection and reads one response: status and body.
async fn request(s: &mut TcpStream, path: &str) -> (u16, String) {
    s.write_all(format!("GET {path} HTTP/1.1\r\nhost: t\r\n\r\n").as_bytes())
        .await
        .unwrap();
    read_response(s).await
}

/// Reads one HTTP/1.1 response with a `content-length` (panics after 5 s).
async fn read_response(s: &mut TcpStream) -> (u16, String) {
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            if let Some(end) = data.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&data[..end]).to_lowercase();
                let len: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .map_or(0, |v| v.trim().parse().unwrap());
                if data.len() >= end + 4 + len {
                    let status = head[9..12].parse().unwrap();
                    let body = String::from_utf8_lossy(&data[end + 4..end + 4 + len]).into_owned();
                    return (status, body);
                }
            }
            let n = s.read(&mut buf).await.unwrap();
            assert!(n > 0, "closed mid-response: {:?}", String::from_utf8_lossy(&data));
            data.extend_from_slice(&buf[..n]);
        }
    })
    .await
    .expect("a response within 5 s")
}

async fn metric(base: &str, name: &str) -> u64 {
    let text = get(base, "/metrics").await.text().await.unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{name} ")))
        .unwrap_or_else(|| panic!("{name} not in /metrics:\n{text}"))
        .parse()
        .unwrap()
}

#[tokio::test]
async fn connections_half_sent_request_heads_are_closed_after_the_header_timeout() {
    let server = start_with(limits(|c| c.header_read_timeout = Duration::from_millis(300))).await;
    let mut half = Vec::new();
    for _ in 0..50 {
        let mut s = TcpStream::connect(server.local_addr()).await.unwrap();
        s.write_all(b"GET /healthz HTTP/1.1\r\nhost: t\r\nx-slow: ")
            .await
            .unwrap();
        half.push(s);
    }
    let started = Instant::now();
    for s in &mut half {
        assert!(
            closed_within(s, Duration::from_secs(3)).await,
            "a half-sent head still open {:?} after it began",
            started.elapsed()
        );
    }
    assert!(metric(&server.url(), "agent_adaptor_connections_timed_out_total").await >= 50);
    assert_eq!(get(&server.url(), "/healthz").await.status(), 200);
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn connections_idle_and_keep_alive_connections_are_closed_after_the_idle_timeout() {
    let server = start_with(limits(|c| c.idle_timeout = Duration::from_millis(300))).await;
    let mut silent = TcpStream::connect(server.local_addr()).await.unwrap();
    let mut kept = TcpStream::connect(server.local_addr()).await.unwrap();
    assert_eq!(request(&mut kept, "/healthz").await.0, 200);
    assert_eq!(request(&mut kept, "/healthz").await.0, 200, "keep-alive works");
    assert!(
        closed_within(&mut silent, Duration::from_secs(3)).await,
        "a connection that never sent a byte is still open"
    );
    assert!(
        closed_within(&mut kept, Duration::from_secs(3)).await,
        "a keep-alive connection with no next request is still open"
    );
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn connections_a_body_that_does_not_arrive_in_time_is_408_body_timeout() {
    let server = start_with(limits(|c| c.body_read_timeout = Duration::from_millis(300))).await;
    let mut s = TcpStream::connect(server.local_addr()).await.unwrap();
    s.write_all(
        b"POST /v1/agents/reference/runs HTTP/1.1\r\nhost: t\r\ncontent-type: application/json\r\n\
          content-length: 100\r\n\r\n{\"prompt\":",
    )
    .await
    .unwrap();
    let started = Instant::now();
    let (status, body) = read_response(&mut s).await;
    assert_eq!(status, 408, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["error"]["code"], "body_timeout", "{body}");
    assert!(started.elapsed() < Duration::from_secs(3));
    assert!(
        closed_within(&mut s, Duration::from_secs(3)).await,
        "the connection is closed after a body timeout"
    );
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn connections_past_the_per_ip_and_global_bounds_are_closed_at_once_while_open_ones_work() {
    let server = start_with(limits(|c| {
        c.max_connections = 5;
        c.max_connections_per_ip = 3;
    }))
    .await;
    let addr = server.local_addr();
    let mut open = Vec::new();
    for _ in 0..3 {
        let mut s = connect_from([127, 0, 0, 1], addr).await;
        assert_eq!(request(&mut s, "/healthz").await.0, 200);
        open.push(s);
    }
    // The fourth from the same address is refused promptly, with the JSON error shape.
    let mut over = connect_from([127, 0, 0, 1], addr).await;
    let started = Instant::now();
    let mut seen = Vec::new();
    let closed = tokio::time::timeout(Duration::from_secs(1), over.read_to_end(&mut seen)).await;
    assert!(closed.is_ok(), "an over-limit connection is still open after 1 s");
    assert!(started.elapsed() < Duration::from_secs(1));
    let seen = String::from_utf8_lossy(&seen);
    assert!(
        seen.is_empty() || (seen.starts_with("HTTP/1.1 503") && seen.contains("too_many_connections")),
        "{seen}"
    );
    // Another address still gets in, up to the global bound.
    for _ in 0..2 {
        let mut s = connect_from([127, 0, 0, 2], addr).await;
        assert_eq!(request(&mut s, "/healthz").await.0, 200);
        open.push(s);
    }
    let mut global = connect_from([127, 0, 0, 3], addr).await;
    assert!(
        closed_within(&mut global, Duration::from_secs(1)).await,
        "past max_connections a new address is refused too"
    );
    // The open ones keep working, and a closed one frees its place.
    for s in &mut open {
        assert_eq!(request(s, "/healthz").await.0, 200);
    }
    drop(open.remove(0));
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let mut s = connect_from([127, 0, 0, 1], addr).await;
        s.write_all(b"GET /metrics HTTP/1.1\r\nhost: t\r\n\r\n")
            .await
            .unwrap();
        let mut first = [0u8; 12];
        if s.read_exact(&mut first).await.is_ok() && &first == b"HTTP/1.1 200" {
            break;
        }
        assert!(Instant::now() < deadline, "the freed place was never reused");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    server.shutdown().await.unwrap();
}

/// `serve` with at most 128 file descriptors (`ulimit -n` in a shell that then execs it).
fn serve_with_few_fds() -> std::process::Child {
    std::process::Command::new("sh")
        .args([
            "-c",
            "ulimit -n 128 && exec \"$0\" \"$@\"",
            env!("CARGO_BIN_EXE_agent-adaptor"),
            "serve",
            "--bind",
            "127.0.0.1:0",
            "--store",
            "memory",
            "--no-discover",
            "--header-read-timeout",
            "1s",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

#[tokio::test]
async fn connections_a_slowloris_flood_past_the_fd_limit_does_not_take_serve_down() {
    let mut child = serve_with_few_fds();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let base = listening_url(&mut stdout);
    let addr: SocketAddr = base.trim_start_matches("http://").parse().unwrap();
    // 300 half-sent heads, held open: more than the server has descriptors.
    let mut flood = Vec::new();
    for _ in 0..300 {
        let Ok(Ok(mut s)) = tokio::time::timeout(Duration::from_secs(2), TcpStream::connect(addr)).await
        else {
            continue;
        };
        let _ = s.write_all(b"GET /healthz HTTP/1.1\r\nhost: t\r\n").await;
        flood.push(s);
    }
    assert!(
        flood.len() > 128,
        "the flood opened only {} connections",
        flood.len()
    );
    // While the flood is still held, /healthz answers again within a few header timeouts.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let probe = super::client().get(format!("{base}/healthz")).send();
        let ok = tokio::time::timeout(Duration::from_secs(2), probe)
            .await
            .is_ok_and(|r| r.is_ok_and(|r| r.status() == 200));
        if ok {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(
            child.try_wait().unwrap().is_none(),
            "serve exited under the flood"
        );
        assert!(
            Instant::now() < deadline,
            "/healthz never answered during the flood"
        );
    }
    drop(flood);
    assert_eq!(get(&base, "/healthz").await.status(), 200);
    super::sigterm(&child);
    assert!(child.wait().unwrap().success(), "serve shut down cleanly");
}

/// hyper's own parse-error answers (issue #22 item 8): a request line, a header block or a head that
/// hyper refuses before any route sees it gets the same status with the service's JSON error body, and a
/// well-formed request on the next connection is served as before.
#[tokio::test]
async fn requests_hyper_cannot_parse_get_the_json_error_shape_with_their_status() {
    let server = start_with(ServerConfig::for_tests()).await;
    let addr = server.local_addr();
    let cases: [(Vec<u8>, u16, &str); 4] = [
        (
            format!("GET /{} HTTP/1.1\r\nhost: t\r\n\r\n", "a".repeat(70_000)).into_bytes(),
            414,
            "uri_too_long",
        ),
        (
            format!(
                "GET / HTTP/1.1\r\nhost: t\r\nx-big: {}\r\n\r\n",
                "a".repeat(500_000)
            )
            .into_bytes(),
            431,
            "headers_too_large",
        ),
        (
            (0..150)
                .fold(String::from("GET / HTTP/1.1\r\n"), |s, i| {
                    s + &format!("x-{i}: 1\r\n")
                })
                .into_bytes()
                .into_iter()
                .chain(*b"\r\n")
                .collect(),
            431,
            "headers_too_large",
        ),
        (b"NOT HTTP AT ALL\r\n\r\n".to_vec(), 400, "malformed_request"),
    ];
    for (raw, status, code) in cases {
        let mut s = TcpStream::connect(addr).await.unwrap();
        s.write_all(&raw).await.unwrap();
        let (got, body) = read_response(&mut s).await;
        assert_eq!(got, status, "{body}");
        let body: serde_json::Value =
            serde_json::from_str(&body).unwrap_or_else(|e| panic!("JSON ({e}): {body:?}"));
        assert_eq!(body["error"]["code"], code, "{body}");
        assert!(
            body["error"]["message"].as_str().is_some_and(|m| !m.is_empty()),
            "{body}"
        );
    }
    let mut s = TcpStream::connect(addr).await.unwrap();
    let (status, body) = request(&mut s, "/v1/no-such-route").await;
    assert_eq!(status, 404, "the service's own answers pass through: {body}");
    assert!(body.contains("not_found"), "{body}");
    server.shutdown().await.unwrap();
}
