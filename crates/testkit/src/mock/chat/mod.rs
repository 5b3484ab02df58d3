//! A scriptable mock of the OpenAI Chat Completions API on 127.0.0.1, for driving the real CodeBuddy Code
//! CLI (and any other Chat Completions client) offline in tests and benches.
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use agent_adaptor::testkit::mock::chat::{MockChat, Reply, Script};
//! let mock = MockChat::start(Script::queue([Reply::text("Hi!")])).await?;
//! // run the CLI with CODEBUDDY_BASE_URL = mock.base_url() (see `testkit::codebuddy_env`)
//! let prompts: Vec<_> = mock.completion_requests().iter().map(|r| r.last_user_query()).collect();
//! mock.shutdown().await;
//! # Ok(()) }
//! ```
//!
//! * `server.rs` — the route table, the request log, pacing, cut and hanging streams.
//! * `script.rs` — [`Reply`], [`StreamReply`], [`Part`], [`Script`] (a queue or a closure over the log).
//! * `sse.rs` — the exact chunk JSON and SSE framing.
//! * `log.rs` — [`RequestLog`] and its assertion helpers.
//!
//! Not here: anything about a CLI's own stdout protocol (that is `providers::codebuddy::wire`).

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

pub use log::{RequestLog, message_text};
pub use script::{
    Cut, CutKind, ErrorReply, FinishReason, Part, Reply, ReplyFn, Script, StreamReply, Usage, split_chunks,
};
pub use sse::{CREATED, chunks, completion, default_call_id, default_completion_id, frames};

use server::Inner;

/// A running mock server; stops on [`MockChat::shutdown`] or when dropped.
pub struct MockChat {
    addr: SocketAddr,
    inner: Arc<Inner>,
    task: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for MockChat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MockChat").field("addr", &self.addr).finish()
    }
}

impl MockChat {
    /// Binds 127.0.0.1 on a free port and starts serving `script`.
    pub async fn start(script: Script) -> std::io::Result<MockChat> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let (arrived, _) = watch::channel(0);
        let inner = Arc::new(Inner {
            script,
            log: Mutex::new(Vec::new()),
            completions: AtomicUsize::new(0),
            started: Instant::now(),
            arrived,
            cancel: CancellationToken::new(),
        });
        let app = axum::Router::new()
            .fallback(server::handle)
            .with_state(inner.clone());
        let task = super::serve(listener, app, inner.cancel.clone(), "chat");
        Ok(MockChat {
            addr,
            inner,
            task: Some(task),
        })
    }

    /// `http://127.0.0.1:<port>`: the value for `CODEBUDDY_BASE_URL` (CodeBuddy appends `/chat/completions`
    /// with no `/v1`).
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every request so far, in arrival order (including 404s).
    pub fn requests(&self) -> Vec<RequestLog> {
        self.inner.log.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// Only the `POST …/chat/completions` requests.
    pub fn completion_requests(&self) -> Vec<RequestLog> {
        self.requests()
            .into_iter()
            .filter(RequestLog::is_completion)
            .collect()
    }

    /// Requests the mock answered 404 (routes it does not know).
    pub fn unknown_requests(&self) -> Vec<RequestLog> {
        self.requests().into_iter().filter(|r| r.status == 404).collect()
    }

    /// Waits until at least `count` completion requests arrived; false on timeout.
    pub async fn wait_for_completions(&self, count: usize, timeout: Duration) -> bool {
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

impl Drop for MockChat {
    fn drop(&mut self) {
        self.inner.cancel.cancel();
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

#[cfg(test)]
mod tests;
