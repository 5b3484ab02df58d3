//! A legacy-SSE MCP server on 127.0.0.1 (the 2024-11-05 "HTTP+SSE" transport), for proving SSE MCP
//! through the real CLIs. `GET /sse` opens an event stream whose first event is `event: endpoint` with
//! `data: /messages?sessionId=<id>`; JSON-RPC messages are POSTed there (answered `202 Accepted`) and
//! every response goes out as `event: message` on that session's stream. It answers `initialize`,
//! `tools/list` and `tools/call` for one tool, `echo`, which returns its arguments as JSON text
//! prefixed with `SSE-ECHO `; notifications are accepted silently, other methods get `-32601`.
//! rmcp only ships a streamable-HTTP server transport, so the framing is done here by hand.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Json;
use axum::Router;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::routing::{get, post};
use futures::Stream;
use futures::StreamExt;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_stream::wrappers::UnboundedReceiverStream;
use tokio_util::sync::CancellationToken;

/// The one tool's name.
pub const ECHO_TOOL: &str = "echo";
/// The prefix of every `echo` result (`SSE-ECHO {"text":"hi"}`).
pub const ECHO_PREFIX: &str = "SSE-ECHO ";

#[derive(Default)]
struct Inner {
    sessions: Mutex<HashMap<String, mpsc::UnboundedSender<Value>>>,
    methods: Mutex<Vec<String>>,
    calls: Mutex<Vec<Value>>,
    next: AtomicU64,
    cancel: CancellationToken,
}

/// A running legacy-SSE MCP server; stops when dropped.
pub struct SseMcpServer {
    addr: SocketAddr,
    inner: Arc<Inner>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl SseMcpServer {
    /// Binds 127.0.0.1:0 and serves until dropped.
    pub async fn start() -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let inner = Arc::new(Inner::default());
        let app = Router::new()
            .route("/sse", get(open_stream))
            .route("/messages", post(message))
            .with_state(inner.clone());
        let task = super::serve(listener, app, inner.cancel.clone(), "sse_mcp");
        Ok(SseMcpServer {
            addr,
            inner,
            task: Some(task),
        })
    }

    /// `http://127.0.0.1:<port>/sse`: the URL a client is configured with.
    pub fn url(&self) -> String {
        format!("http://{}/sse", self.addr)
    }

    /// Every JSON-RPC method received so far (requests and notifications), in arrival order.
    pub fn methods(&self) -> Vec<String> {
        self.inner.methods.lock().map(|m| m.clone()).unwrap_or_default()
    }

    /// The `arguments` of every `tools/call` received so far.
    pub fn calls(&self) -> Vec<Value> {
        self.inner.calls.lock().map(|c| c.clone()).unwrap_or_default()
    }
}

impl Drop for SseMcpServer {
    fn drop(&mut self) {
        self.inner.cancel.cancel();
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

/// `GET /sse`: a new session whose first event names its POST endpoint.
async fn open_stream(State(inner): State<Arc<Inner>>) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let id = format!("s{}", inner.next.fetch_add(1, Ordering::SeqCst) + 1);
    let (tx, rx) = mpsc::unbounded_channel::<Value>();
    if let Ok(mut s) = inner.sessions.lock() {
        s.insert(id.clone(), tx);
    }
    let first = futures::stream::once(async move {
        Ok(Event::default()
            .event("endpoint")
            .data(format!("/messages?sessionId={id}")))
    });
    let messages =
        UnboundedReceiverStream::new(rx).map(|v| Ok(Event::default().event("message").data(v.to_string())));
    let cancel = inner.cancel.clone();
    let stream = first
        .chain(messages)
        .take_until(async move { cancel.cancelled_owned().await });
    Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(5)))
}

#[derive(Deserialize)]
struct Session {
    #[serde(rename = "sessionId")]
    session_id: String,
}

/// `POST /messages?sessionId=<id>`: 202, the answer (if any) on the session's stream.
async fn message(
    State(inner): State<Arc<Inner>>,
    Query(q): Query<Session>,
    Json(msg): Json<Value>,
) -> StatusCode {
    let Some(tx) = inner
        .sessions
        .lock()
        .ok()
        .and_then(|s| s.get(&q.session_id).cloned())
    else {
        return StatusCode::NOT_FOUND;
    };
    let method = msg["method"].as_str().unwrap_or_default().to_owned();
    if let Ok(mut m) = inner.methods.lock() {
        m.push(method.clone());
    }
    let Some(id) = msg.get("id").cloned() else {
        return StatusCode::ACCEPTED; // a notification (or a response): nothing to answer
    };
    let reply = match method.as_str() {
        "initialize" => json!({"jsonrpc": "2.0", "id": id, "result": {
            "protocolVersion": msg["params"]["protocolVersion"].as_str().unwrap_or("2024-11-05"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "sse-probe", "version": "1.0.0"},
        }}),
        "tools/list" => json!({"jsonrpc": "2.0", "id": id, "result": {"tools": [{
            "name": ECHO_TOOL,
            "description": "Echo the arguments",
            "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
        }]}}),
        "tools/call" if msg["params"]["name"] == ECHO_TOOL => {
            let args = msg["params"]["arguments"].clone();
            if let Ok(mut c) = inner.calls.lock() {
                c.push(args.clone());
            }
            json!({"jsonrpc": "2.0", "id": id, "result": {
                "content": [{"type": "text", "text": format!("{ECHO_PREFIX}{args}")}],
            }})
        }
        _ => json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "method not found"}}),
    };
    if tx.send(reply).is_err() {
        return StatusCode::GONE;
    }
    StatusCode::ACCEPTED
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn unknown_sessions_are_404() {
        let s = SseMcpServer::start().await.unwrap();
        let inner = s.inner.clone();
        let code = message(
            State(inner),
            Query(Session {
                session_id: "nope".into(),
            }),
            Json(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})),
        )
        .await;
        assert_eq!(code, StatusCode::NOT_FOUND);
        assert_eq!(s.methods(), Vec::<String>::new());
    }
}
