//! `agent-adaptor acp --url URL`: the ACP agent an editor launches on stdio, backed by a running
//! service instead of the local library. Every frame read on stdin is POSTed to the service's
//! `/v1/agents/{agent}/acp` (Streamable HTTP, `docs/acp.md`); every message of the connection's and
//! the sessions' SSE streams is written to stdout. A stream that drops is resumed with
//! `Last-Event-ID`, so nothing is lost or repeated; when stdin closes the connection is ended
//! (`DELETE`), which cancels its running prompts.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderValue};
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio_util::codec::{FramedRead, LinesCodec};

const CONNECTION: &str = "acp-connection-id";
const SESSION: &str = "acp-session-id";
/// How often a dropped stream is retried before the bridge gives up on it.
const RETRIES: u32 = 20;

/// Why the bridge stopped.
#[derive(Debug, thiserror::Error)]
pub enum BridgeError {
    /// The URL or the key cannot be used.
    #[error("bad setting: {0}")]
    Setting(String),
    /// Writing stdout failed.
    #[error("stdout: {0}")]
    Output(#[from] std::io::Error),
}

/// Where and as whom the bridge connects.
#[derive(Debug, Clone)]
pub struct Remote {
    /// The service's base URL (`http://127.0.0.1:8080`).
    pub url: String,
    /// The agent's name.
    pub agent: String,
    /// The API key, sent as a bearer token.
    pub api_key: Option<String>,
}

struct Bridge {
    http: reqwest::Client,
    endpoint: String,
    auth: Option<HeaderValue>,
    /// Frames for stdout; `None` ends the output (the connection is over).
    out: mpsc::UnboundedSender<Option<String>>,
    connection: Mutex<Option<String>>,
    streaming: Mutex<HashSet<String>>,
}

/// A JSON-RPC error response to request `id`.
fn error_line(id: &Value, message: &str, data: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": message, "data": data}})
        .to_string()
}

impl Bridge {
    fn headers(&self, session: Option<&str>) -> HeaderMap {
        let mut h = HeaderMap::new();
        if let Some(auth) = &self.auth {
            h.insert(AUTHORIZATION, auth.clone());
        }
        let conn = self.connection.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if let Some(c) = conn.and_then(|c| HeaderValue::from_str(&c).ok()) {
            h.insert(CONNECTION, c);
        }
        if let Some(s) = session.and_then(|s| HeaderValue::from_str(s).ok()) {
            h.insert(SESSION, s);
        }
        h
    }

    fn emit(&self, line: String) {
        let _ = self.out.send(Some(line));
    }

    /// POSTs one frame; a refused request is answered on stdout with a JSON-RPC error.
    async fn post(self: &Arc<Self>, frame: &Value, line: String) {
        let id = frame.get("id").filter(|_| frame.get("method").is_some()).cloned();
        let initialize = frame.get("method").and_then(Value::as_str) == Some("initialize");
        let has_connection = self
            .connection
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_some();
        if !initialize && !has_connection {
            if let Some(id) = id {
                self.emit(error_line(
                    &id,
                    "the first message must be initialize",
                    Value::Null,
                ));
            }
            return;
        }
        let session = frame
            .get("params")
            .and_then(|p| p.get("sessionId"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        if let Some(s) = &session {
            self.follow(Some(s.clone())).await;
        }
        let sent = self
            .http
            .post(&self.endpoint)
            .headers(self.headers(session.as_deref()))
            .header(CONTENT_TYPE, "application/json")
            .body(line)
            .send()
            .await;
        let resp = match sent {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!(error = %e, "acp --url: the service did not answer");
                if let Some(id) = id {
                    self.emit(error_line(
                        &id,
                        "the service did not answer",
                        json!({"error": e.to_string()}),
                    ));
                }
                return;
            }
        };
        let status = resp.status();
        if initialize && status.is_success() {
            let conn = resp
                .headers()
                .get(CONNECTION)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let body = match resp.text().await {
                Ok(body) => body,
                Err(e) => {
                    if let Some(id) = id {
                        self.emit(error_line(
                            &id,
                            "the initialize answer was cut off",
                            json!({"error": e.to_string()}),
                        ));
                    }
                    return;
                }
            };
            if let Some(conn) = conn {
                *self.connection.lock().unwrap_or_else(|p| p.into_inner()) = Some(conn);
                self.follow(None).await;
            }
            self.emit(body);
            return;
        }
        if !status.is_success() {
            let body = resp.text().await.unwrap_or_default();
            let body: Value = serde_json::from_str(&body).unwrap_or(Value::String(body));
            tracing::warn!(%status, "acp --url: the service refused a message");
            if let Some(id) = id {
                self.emit(error_line(
                    &id,
                    &format!("the service answered {status}"),
                    json!({"status": status.as_u16(), "body": body}),
                ));
            }
        }
    }

    /// Follows the connection's stream (`None`) or a session's, unless already followed.
    async fn follow(self: &Arc<Self>, session: Option<String>) {
        let key = session.clone().unwrap_or_default();
        if !self
            .streaming
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key.clone())
        {
            return;
        }
        // The first attach is awaited, so a request's response cannot precede its stream.
        let first = self.open(session.as_deref(), None).await;
        let this = self.clone();
        tokio::spawn(async move {
            let mut resp = first;
            let mut last: Option<u64> = None;
            let mut retries = 0;
            loop {
                if let Some(r) = resp.take() {
                    retries = 0;
                    this.read(r, &mut last).await;
                }
                if retries >= RETRIES {
                    break;
                }
                retries += 1;
                tokio::time::sleep(Duration::from_millis(100 * u64::from(retries.min(10)))).await;
                resp = match this.reopen(session.as_deref(), last).await {
                    Reopen::Stream(r) => Some(r),
                    Reopen::Gone => break,
                    Reopen::Retry => None,
                };
            }
            this.streaming
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&key);
            if session.is_none() {
                // The connection's own stream ended for good: the connection is over.
                let _ = this.out.send(None);
            }
        });
    }

    async fn open(&self, session: Option<&str>, last: Option<u64>) -> Option<reqwest::Response> {
        match self.reopen(session, last).await {
            Reopen::Stream(r) => Some(r),
            _ => None,
        }
    }

    async fn reopen(&self, session: Option<&str>, last: Option<u64>) -> Reopen {
        let mut req = self
            .http
            .get(&self.endpoint)
            .headers(self.headers(session))
            .header(ACCEPT, "text/event-stream");
        if let Some(l) = last {
            req = req.header("last-event-id", l.to_string());
        }
        match req.send().await {
            Ok(r) if r.status().is_success() => Reopen::Stream(r),
            Ok(r) if r.status().is_client_error() => {
                tracing::info!(status = %r.status(), ?session, "acp --url: stream refused");
                Reopen::Gone
            }
            Ok(_) | Err(_) => Reopen::Retry,
        }
    }

    /// Writes every SSE message of `resp` to stdout, tracking the last id.
    async fn read(&self, mut resp: reqwest::Response, last: &mut Option<u64>) {
        let mut buf = String::new();
        while let Ok(Some(chunk)) = resp.chunk().await {
            buf.push_str(&String::from_utf8_lossy(&chunk));
            while let Some(end) = buf.find("\n\n") {
                let raw: String = buf.drain(..end + 2).collect();
                let (mut id, mut data) = (None, Vec::new());
                for line in raw.lines() {
                    if let Some(v) = line.strip_prefix("id:") {
                        id = v.trim().parse::<u64>().ok();
                    } else if let Some(v) = line.strip_prefix("data:") {
                        data.push(v.strip_prefix(' ').unwrap_or(v));
                    }
                }
                if !data.is_empty() {
                    self.emit(data.join("\n"));
                }
                if id.is_some() {
                    *last = id;
                }
            }
        }
    }
}

enum Reopen {
    Stream(reqwest::Response),
    Gone,
    Retry,
}

/// Bridges `input`/`output` to the service until the input closes or the connection ends.
pub async fn bridge<R, W>(remote: Remote, input: R, mut output: W) -> Result<(), BridgeError>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let auth = match &remote.api_key {
        Some(k) => Some(
            HeaderValue::from_str(&format!("Bearer {k}"))
                .map_err(|_| BridgeError::Setting("the API key is not visible ASCII".into()))?,
        ),
        None => None,
    };
    let base = remote.url.trim_end_matches('/');
    if !base.starts_with("http://") && !base.starts_with("https://") {
        return Err(BridgeError::Setting(format!(
            "--url must be http(s)://…, got {base:?}"
        )));
    }
    let http = reqwest::Client::builder()
        .build()
        .map_err(|e| BridgeError::Setting(e.to_string()))?;
    let (out, mut lines_out) = mpsc::unbounded_channel::<Option<String>>();
    let bridge = Arc::new(Bridge {
        http,
        endpoint: format!("{base}/v1/agents/{}/acp", remote.agent),
        auth,
        out,
        connection: Mutex::new(None),
        streaming: Mutex::new(HashSet::new()),
    });
    let writer = tokio::spawn(async move {
        // `None` is the end of the connection's stream: stop writing.
        while let Some(Some(line)) = lines_out.recv().await {
            output.write_all(line.as_bytes()).await?;
            output.write_all(b"\n").await?;
            output.flush().await?;
        }
        Ok::<(), std::io::Error>(())
    });
    let mut lines = FramedRead::new(
        input,
        LinesCodec::new_with_max_length(agent_adaptor::acp::MAX_FRAME),
    );
    loop {
        let line = tokio::select! {
            line = lines.next() => line,
            () = closed(&writer) => None,
        };
        let Some(Ok(line)) = line else { break };
        if line.trim().is_empty() {
            continue;
        }
        let frame: Value = match serde_json::from_str(&line) {
            Ok(v) => v,
            Err(e) => {
                let parse = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": format!("Parse error: {e}")}});
                bridge.emit(parse.to_string());
                continue;
            }
        };
        // Posts run in order: a cancel is never overtaken by a later message.
        bridge.post(&frame, line).await;
    }
    let has_connection = bridge
        .connection
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .is_some();
    if has_connection {
        let ended = bridge
            .http
            .delete(&bridge.endpoint)
            .headers(bridge.headers(None))
            .send()
            .await;
        match ended {
            Ok(r) if r.status().is_success() || r.status() == reqwest::StatusCode::NOT_FOUND => {}
            Ok(r) => tracing::warn!(status = %r.status(), "acp --url: ending the connection was refused"),
            Err(e) => {
                tracing::warn!(error = %e, "acp --url: ending the connection failed; the service ends it when idle")
            }
        }
    }
    let _ = bridge.out.send(None);
    match writer.await {
        Ok(r) => r.map_err(BridgeError::Output),
        Err(e) => Err(BridgeError::Output(std::io::Error::other(e))),
    }
}

/// Resolves once the writer task has finished (stdout closed, or the connection ended).
async fn closed(writer: &tokio::task::JoinHandle<Result<(), std::io::Error>>) {
    while !writer.is_finished() {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
