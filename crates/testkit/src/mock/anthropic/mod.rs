//! A scriptable mock of the Anthropic Messages API on 127.0.0.1, for driving the real Claude Code CLI
//! offline in tests and benches.
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use agent_adaptor::testkit::mock::anthropic::{MockAnthropic, Reply, Script};
//! let mock = MockAnthropic::start(Script::queue([Reply::text("Hi!")])).await?;
//! // run the CLI with ANTHROPIC_BASE_URL = mock.base_url() (see `testkit::claude_env`)
//! let prompts: Vec<_> = mock.message_requests().iter().map(|r| r.last_user_text()).collect();
//! mock.shutdown().await;
//! # Ok(()) }
//! ```
//!
//! * `server.rs` — routes, logging, latency, paced and cut streams.
//! * `script.rs` — [`Reply`], [`Block`], [`Script`] (queue or closure, plus the side-request handler).
//! * `sse.rs` — the exact SSE / JSON rendering.
//! * `log.rs` — [`RequestLog`] and the helpers tests assert with.
//!
//! Not here: anything about the CLI's own stdout protocol (that is `providers::claude::wire`).

mod log;
mod script;
mod server;
mod sse;

use std::net::SocketAddr;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

pub use log::{RequestLog, ToolResult};
pub use script::{Block, ErrorReply, MessageReply, Reply, ReplyBody, ReplyFn, Script, StopReason, Usage};
pub use sse::{SseEvent, default_message_id, default_tool_use_id, message_events, message_json, request_id};

use server::Inner;

/// A running mock server; shuts down on [`MockAnthropic::shutdown`] or when dropped.
pub struct MockAnthropic {
    addr: SocketAddr,
    inner: Arc<Inner>,
    task: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for MockAnthropic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MockAnthropic").field("addr", &self.addr).finish()
    }
}

impl MockAnthropic {
    /// Binds 127.0.0.1 on a free port and starts serving `script`.
    pub async fn start(script: Script) -> std::io::Result<MockAnthropic> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let (arrived, _) = watch::channel(0);
        let inner = Arc::new(Inner {
            script,
            log: Mutex::new(Vec::new()),
            messages: AtomicUsize::new(0),
            started: Instant::now(),
            arrived,
            cancel: CancellationToken::new(),
        });
        let app = axum::Router::new()
            .fallback(server::handle)
            .with_state(inner.clone());
        let task = super::serve(listener, app, inner.cancel.clone(), "anthropic");
        Ok(MockAnthropic {
            addr,
            inner,
            task: Some(task),
        })
    }

    /// `http://127.0.0.1:<port>`, the value for `ANTHROPIC_BASE_URL`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every request so far, in arrival order (including preflights and 404s).
    pub fn requests(&self) -> Vec<RequestLog> {
        self.inner.log.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// Only the `POST /v1/messages` requests that belong to the conversation (no side requests).
    pub fn message_requests(&self) -> Vec<RequestLog> {
        self.requests()
            .into_iter()
            .filter(|r| r.is_messages() && !r.is_side_request())
            .collect()
    }

    /// Waits until at least `count` `POST /v1/messages` requests arrived; false on timeout.
    pub async fn wait_for_messages(&self, count: usize, timeout: Duration) -> bool {
        let mut rx = self.inner.arrived.subscribe();
        tokio::time::timeout(timeout, rx.wait_for(|n| *n >= count))
            .await
            .is_ok_and(|r| r.is_ok())
    }

    /// Stops serving: open streams end at once, then the server task is awaited (at most 2 s).
    pub async fn shutdown(mut self) {
        self.inner.cancel.cancel();
        if let Some(task) = self.task.take() {
            let abort = task.abort_handle();
            if tokio::time::timeout(Duration::from_secs(2), task).await.is_err() {
                abort.abort();
            }
        }
    }
}

impl Drop for MockAnthropic {
    fn drop(&mut self) {
        self.inner.cancel.cancel();
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

#[cfg(test)]
mod tests;
