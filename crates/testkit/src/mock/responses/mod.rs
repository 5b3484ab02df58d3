//! A scriptable mock of the OpenAI Responses API (`POST /v1/responses`, SSE) on 127.0.0.1, the
//! model endpoint the real Codex CLI talks to in tests.
//!
//! ```no_run
//! # async fn demo() -> Result<(), agent_adaptor::testkit::mock::responses::MockError> {
//! use agent_adaptor::testkit::mock::responses::{MockResponses, Reply, Script};
//! let mock = MockResponses::start(
//!     Script::new()
//!         .then(Reply::new().text("I will run it.").exec_command("echo hi"))
//!         .then_with(|log| {
//!             let out = log.last().and_then(|r| r.tool_outputs().pop()).map(|(_, o)| o).unwrap_or_default();
//!             Reply::new().text(format!("Tool said: {out}"))
//!         }),
//! )
//! .await?;
//! let base = mock.base_url(); // "http://127.0.0.1:<port>/v1": the provider's base_url
//! // … run codex with testkit::codex_env …
//! assert_eq!(mock.requests().len(), 2);
//! mock.shutdown().await;
//! # Ok(()) }
//! ```
//!
//! Every request is logged ([`MockResponses::requests`]); unknown endpoints answer 404 and show up
//! in the log with [`StreamOutcome::NotFound`]. Codex 0.171.0 calls nothing but `…/responses`.
//!
//! Files: `script.rs` (what to answer), `reply.rs` (one answer), `sse.rs` (how a reply becomes events), `server.rs` (axum),
//! `log.rs` (the request log).

mod log;
mod reply;
mod script;
mod server;
mod sse;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::oneshot;
use tokio::task::JoinHandle;

pub use log::{RecordedRequest, StreamOutcome};
pub use reply::{Element, Failure, Reply, Usage};
pub use script::{ReplyFn, Script, Step};
pub use sse::{Frame, render};

/// Errors starting the mock.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MockError {
    /// Binding 127.0.0.1:0 failed.
    #[error("responses mock: cannot bind 127.0.0.1:0: {0}")]
    Bind(#[source] std::io::Error),
}

/// A running mock; dropping it stops the server (use [`MockResponses::shutdown`] to wait for it).
pub struct MockResponses {
    addr: std::net::SocketAddr,
    shared: Arc<server::Shared>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for MockResponses {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MockResponses")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl MockResponses {
    /// Binds 127.0.0.1 on an ephemeral port and serves `script`.
    pub async fn start(script: Script) -> Result<Self, MockError> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .map_err(MockError::Bind)?;
        let addr = listener.local_addr().map_err(MockError::Bind)?;
        let shared = Arc::new(server::Shared {
            script: Mutex::new(script),
            log: Mutex::new(Vec::new()),
            started: Instant::now(),
        });
        let app = axum::Router::new()
            .fallback(server::handle)
            .with_state(shared.clone());
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let serve = axum::serve(listener, app).with_graceful_shutdown(async move {
                let _ = stopped.await;
            });
            if let Err(e) = serve.await {
                tracing::warn!(error = %e, "responses mock: server error");
            }
        });
        Ok(Self {
            addr,
            shared,
            stop: Some(stop),
            task: Some(task),
        })
    }

    /// `http://127.0.0.1:<port>/v1`, the value for the Codex provider's `base_url`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The bound socket address.
    pub fn addr(&self) -> std::net::SocketAddr {
        self.addr
    }

    /// A snapshot of every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.log().clone()
    }

    /// Only the `POST …/responses` requests.
    pub fn responses_requests(&self) -> Vec<RecordedRequest> {
        self.requests()
            .into_iter()
            .filter(|r| r.outcome != StreamOutcome::NotFound)
            .collect()
    }

    /// Replaces the script (e.g. between two phases of one test).
    pub fn set_script(&self, script: Script) {
        *self.shared.script.lock().unwrap_or_else(|e| e.into_inner()) = script;
    }

    /// Waits until at least `n` requests arrived, or `timeout` passes; returns whether they did.
    pub async fn wait_for_requests(&self, n: usize, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        loop {
            if self.shared.log().len() >= n {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Stops accepting, lets open streams finish for up to 2 s, then aborts them.
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(mut task) = self.task.take()
            && tokio::time::timeout(Duration::from_secs(2), &mut task)
                .await
                .is_err()
        {
            task.abort();
        }
    }
}

impl Drop for MockResponses {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    async fn post(url: &str, body: Value) -> (u16, String, reqwest::header::HeaderMap) {
        let resp = reqwest::Client::new().post(url).json(&body).send().await.unwrap();
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        (status, resp.text().await.unwrap_or_default(), headers)
    }

    fn events(sse: &str) -> Vec<Value> {
        sse.lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .map(|d| serde_json::from_str(d).unwrap())
            .collect()
    }

    #[tokio::test]
    async fn streams_scripted_replies_and_logs_requests() {
        let mock = MockResponses::start(
            Script::new()
                .then(Reply::new().text("hello world"))
                .then_with(|log| Reply::new().text(format!("saw {} requests", log.len()))),
        )
        .await
        .unwrap();
        let url = format!("{}/responses", mock.base_url());
        let body = json!({"model":"gpt-5.5","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}]});
        let (status, text, headers) = post(&url, body.clone()).await;
        assert_eq!(status, 200);
        assert_eq!(headers["content-type"], "text/event-stream");
        let ev = events(&text);
        assert_eq!(ev.first().unwrap()["type"], "response.created");
        let last = ev.last().unwrap();
        assert_eq!(last["type"], "response.completed");
        assert_eq!(last["response"]["output"][0]["content"][0]["text"], "hello world");
        let (_, text2, _) = post(&url, body.clone()).await;
        assert_eq!(
            events(&text2).last().unwrap()["response"]["output"][0]["content"][0]["text"],
            "saw 2 requests"
        );
        let (_, text3, _) = post(&url, body).await;
        assert!(text3.contains("ECHO n=3: hi"), "fallback echoes: {text3}");
        let log = mock.requests();
        assert_eq!(log.len(), 3);
        assert_eq!(log[0].last_user_text().as_deref(), Some("hi"));
        assert!(log.iter().all(|r| r.outcome == StreamOutcome::Completed));
        mock.shutdown().await;
    }

    #[tokio::test]
    async fn injects_http_errors_and_logs_unknown_paths() {
        let mock = MockResponses::start(Script::replies([Reply::rate_limited(3), Reply::unauthorized()]))
            .await
            .unwrap();
        let url = format!("{}/responses", mock.base_url());
        let (status, text, headers) = post(&url, json!({})).await;
        assert_eq!(status, 429);
        assert_eq!(headers["retry-after"], "3");
        assert!(text.contains("rate_limit_exceeded"));
        let (status, _, _) = post(&url, json!({})).await;
        assert_eq!(status, 401);
        let resp = reqwest::get(format!("{}/models", mock.base_url())).await.unwrap();
        assert_eq!(resp.status().as_u16(), 404);
        let log = mock.requests();
        assert_eq!(log[2].outcome, StreamOutcome::NotFound);
        assert_eq!(log[2].path, "/v1/models");
        assert_eq!(mock.responses_requests().len(), 2);
    }

    #[tokio::test]
    async fn drops_a_stream_midway() {
        let mock = MockResponses::start(Script::replies([Reply::new()
            .text("never finished")
            .drop_after(3)]))
        .await
        .unwrap();
        let url = format!("{}/responses", mock.base_url());
        let resp = reqwest::Client::new()
            .post(&url)
            .json(&json!({}))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status().as_u16(), 200);
        let body = resp.text().await;
        // The body is cut without the terminating chunk: reqwest reports an error, or at best a
        // body without response.completed.
        if let Ok(text) = body {
            assert!(!text.contains("response.completed"));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert_eq!(mock.requests()[0].outcome, StreamOutcome::Dropped);
    }

    #[tokio::test]
    async fn slow_stream_is_paced() {
        let mock = MockResponses::start(Script::replies([Reply::new()
            .text("ab")
            .event_delay(Duration::from_millis(20))]))
        .await
        .unwrap();
        let url = format!("{}/responses", mock.base_url());
        let t = Instant::now();
        let (_, text, _) = post(&url, json!({})).await;
        // 9 events -> 8 gaps of 20 ms.
        assert!(
            t.elapsed() >= Duration::from_millis(150),
            "took {:?}",
            t.elapsed()
        );
        assert!(text.contains("response.completed"));
    }
}
