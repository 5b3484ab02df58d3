//! A run's live log is a bounded window over the durable log: a subscriber that stalls while a long run
//! goes on falls out of the window, is told so (`lag`, no `id:`), and then gets every event it missed
//! from the store and the rest live — the same sequences the store holds, no gap, no duplicate — while
//! the run keeps only its window (plus what waits for the store) in memory.

use std::time::Duration;

use agent_adaptor::runtime::DEFAULT_TENANT;
use agent_adaptor::server::ServerConfig;

use super::{Frame, get_json, run_id, start_run, start_with};

/// Parses every complete frame of `buf` (comments skipped), leaving a partial one in it.
pub fn drain_frames(buf: &mut String, out: &mut Vec<Frame>) {
    while let Some(end) = buf.find("\n\n") {
        let raw: String = buf.drain(..end + 2).collect();
        let mut f = Frame::default();
        let mut data = Vec::new();
        let mut any = false;
        for line in raw.trim_end_matches('\n').split('\n') {
            if line.starts_with(':') {
                continue;
            }
            any = true;
            let (name, value) = line.split_once(':').unwrap_or((line, ""));
            let value = value.strip_prefix(' ').unwrap_or(value);
            match name {
                "id" => f.id = Some(value.to_owned()),
                "event" => f.event = Some(value.to_owned()),
                "data" => data.push(value.to_owned()),
                _ => {}
            }
        }
        f.data = data.join("\n");
        if any {
            out.push(f);
        }
    }
}

/// An SSE client on a socket with a tiny receive buffer (HTTP/1.0, so the body is the raw frames): when
/// it stops reading, the server's writes stall after a few kilobytes instead of filling megabytes of
/// loopback buffers.
pub struct StallingClient {
    socket: tokio::net::TcpStream,
    buf: String,
    head_done: bool,
    /// Frames parsed so far.
    pub frames: Vec<Frame>,
}

impl StallingClient {
    /// `GET path` on `base` (`http://127.0.0.1:port`).
    pub async fn get(base: &str, path: &str) -> StallingClient {
        use tokio::io::AsyncWriteExt;
        let addr: std::net::SocketAddr = base.trim_start_matches("http://").parse().unwrap();
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.set_recv_buffer_size(4096).unwrap();
        let mut socket = socket.connect(addr).await.unwrap();
        let request = format!("GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n");
        socket.write_all(request.as_bytes()).await.unwrap();
        StallingClient {
            socket,
            buf: String::new(),
            head_done: false,
            frames: Vec::new(),
        }
    }

    /// Reads one chunk; false at the end of the body.
    async fn read_some(&mut self) -> bool {
        use tokio::io::AsyncReadExt;
        let mut chunk = vec![0u8; 64 * 1024];
        let n = tokio::time::timeout(Duration::from_secs(120), self.socket.read(&mut chunk))
            .await
            .expect("the stream goes on")
            .unwrap();
        if n == 0 {
            return false;
        }
        self.buf
            .push_str(std::str::from_utf8(&chunk[..n]).expect("UTF-8 frames"));
        if !self.head_done {
            let Some(end) = self.buf.find("\r\n\r\n") else {
                return true;
            };
            assert!(
                self.buf.starts_with("HTTP/1.") && self.buf[..end].contains(" 200 "),
                "{}",
                &self.buf[..end]
            );
            self.buf.drain(..end + 4);
            self.head_done = true;
        }
        drain_frames(&mut self.buf, &mut self.frames);
        true
    }

    /// Reads until at least `n` frames arrived.
    pub async fn read_frames(&mut self, n: usize) {
        while self.frames.len() < n {
            assert!(self.read_some().await, "the stream ended early");
        }
    }

    /// Reads to the end of the body.
    pub async fn read_to_end(&mut self) {
        while self.read_some().await {}
        drain_frames(&mut self.buf, &mut self.frames);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscriber_behind_the_live_window_is_told_it_lagged_and_catches_up_from_the_store() {
    let mut config = ServerConfig::for_tests();
    config.live_window = 64;
    // Every delta recorded (the driver waits for the pump rather than dropping content).
    config.agents[0].events.blocking = true;
    let server = start_with(config).await;
    let base = server.url();
    let run = start_run(
        &base,
        "/v1/agents/reference/runs",
        serde_json::json!({"prompt": "bulk:200000 for the window"}),
    )
    .await;
    let id = run_id(&run);
    let mut sse = StallingClient::get(&base, &format!("/v1/runs/{id}/events")).await;
    // 200,000 deltas: the server's socket send buffer (autotuned up to a few MB on loopback) cannot
    // absorb the rest while the client stalls (with 60,000 it once did in CI: no lag notice).
    // The client keeps up for its first 2,000 events (it reads from the live window), then stalls
    // while the run produces everything else.
    sse.read_frames(2000).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
    loop {
        let state = get_json(&base, &format!("/v1/runs/{id}")).await;
        if state["state"] != "running" {
            assert_eq!(state["state"], "succeeded", "{state}");
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the run finishes while its subscriber stalls"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // The finished run keeps only its window in memory.
    let entry = server
        .state()
        .runs
        .get(DEFAULT_TENANT, &id)
        .expect("still in memory");
    assert!(
        entry.log.in_memory() <= 64,
        "the run keeps {} events in memory (window 64)",
        entry.log.in_memory()
    );
    // Reading on: a lag notice, then everything the store holds, in order.
    sse.read_to_end().await;
    let frames = sse.frames;
    let lags: Vec<&Frame> = frames
        .iter()
        .filter(|f| f.event.as_deref() == Some("lag"))
        .collect();
    eprintln!("{} frames, {} lag notices", frames.len(), lags.len());
    assert!(!lags.is_empty(), "the stalled subscriber is told it lagged");
    for lag in &lags {
        assert!(lag.id.is_none(), "a lag notice has no id");
        let body = lag.json();
        assert_eq!(body["code"], "lagged", "{body}");
        assert!(body["through"].as_u64() > body["after"].as_u64(), "{body}");
    }
    assert!(frames.iter().all(|f| f.event.as_deref() != Some("gap")), "no gap");
    let seen: Vec<u64> = frames.iter().filter(|f| f.id.is_some()).map(Frame::seq).collect();
    let mut durable = Vec::new();
    let mut after = None;
    loop {
        let page = server
            .state()
            .store
            .read_run(DEFAULT_TENANT, &id, after, 10_000)
            .await
            .unwrap();
        let Some(last) = page.last().map(|r| r.seq) else {
            break;
        };
        durable.extend(page.iter().map(|r| r.seq));
        after = Some(last);
    }
    assert_eq!(seen.first(), Some(&1));
    assert_eq!(seen.len(), durable.len(), "as many events as the store holds");
    assert!(seen == durable, "the same sequences as the durable log");
    assert!(seen.len() > 200_000, "{} events", seen.len());
    assert_eq!(frames.last().unwrap().event.as_deref(), Some("done"));
    server.shutdown().await.unwrap();
}
