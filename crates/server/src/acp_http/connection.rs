//! One ACP connection over HTTP: the ACP edge ([`crate::acp::serve`]) runs on an in-process pipe;
//! client messages POSTed to the service are written into it, and what the edge writes back is
//! routed to an [`Outbox`]: a message naming a `sessionId` (updates, permission requests) to that
//! session's stream, a response to the stream its request was routed to, the rest to the
//! connection's own stream.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::Value;
use tokio::io::AsyncWriteExt;
use tokio::sync::{mpsc, oneshot};
use tokio_util::codec::{FramedRead, LinesCodec};
use tokio_util::sync::CancellationToken;

use super::outbox::Outbox;
use crate::acp;

/// How many session streams one connection may hold.
pub const MAX_SESSIONS: usize = 64;
/// How many client requests may wait for their response on one connection.
const MAX_PENDING: usize = 1024;

/// Where the response to a client request goes.
#[derive(Debug)]
enum Route {
    Connection,
    /// A session's stream; `closes` for `session/close`, whose response is the stream's last message.
    Session {
        id: String,
        closes: bool,
    },
    /// The `initialize` response, answered in the POST's body.
    Initialize(oneshot::Sender<String>),
}

/// Why a client message was not taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SendError {
    /// The connection has ended.
    Closed,
    /// Too many requests are waiting for their responses.
    TooManyPending,
    /// Too many session streams are open.
    TooManySessions,
}

/// One ACP connection.
#[derive(Debug)]
pub struct Connection {
    /// Its id (`Acp-Connection-Id`).
    pub id: String,
    /// The tenant that opened it: only that tenant may use it.
    pub tenant: String,
    /// The agent it serves.
    pub agent: String,
    input: mpsc::Sender<String>,
    own: Arc<Outbox>,
    sessions: Mutex<HashMap<String, Arc<Outbox>>>,
    pending: Mutex<HashMap<String, Route>>,
    last_used: Mutex<Instant>,
    /// Fires when the connection ends (DELETE, idle, shutdown or the edge stopped).
    pub ended: CancellationToken,
}

/// The key of a JSON-RPC id (numbers and strings never collide).
pub fn id_key(id: &Value) -> Option<String> {
    match id {
        Value::String(s) => Some(format!("s:{s}")),
        Value::Number(n) => Some(format!("n:{n}")),
        _ => None,
    }
}

/// The `sessionId` of a message's params, if any.
pub fn session_of(message: &Value) -> Option<&str> {
    message.get("params")?.get("sessionId")?.as_str()
}

impl Connection {
    /// Starts a connection serving `agent` with `config`; the edge stops when the connection ends.
    pub fn start(id: String, tenant: String, agent: crate::runtime::Agent, config: acp::Config) -> Arc<Self> {
        let (to_edge, edge_in) = tokio::io::duplex(64 * 1024);
        let (edge_out, from_edge) = tokio::io::duplex(64 * 1024);
        let (input, mut lines_in) = mpsc::channel::<String>(64);
        let conn = Arc::new(Connection {
            id,
            tenant,
            agent: agent.name().to_owned(),
            input,
            own: Arc::new(Outbox::default()),
            sessions: Mutex::new(HashMap::new()),
            pending: Mutex::new(HashMap::new()),
            last_used: Mutex::new(Instant::now()),
            ended: CancellationToken::new(),
        });
        // Client lines into the edge; dropping the writer (the connection ended) closes its input.
        let ended = conn.ended.clone();
        let mut to_edge = to_edge;
        tokio::spawn(async move {
            loop {
                let line = tokio::select! {
                    () = ended.cancelled() => break,
                    line = lines_in.recv() => match line { Some(l) => l, None => break },
                };
                if to_edge.write_all(line.as_bytes()).await.is_err()
                    || to_edge.write_all(b"\n").await.is_err()
                {
                    break;
                }
            }
            let _ = to_edge.shutdown().await;
        });
        // The edge itself.
        let edge = conn.clone();
        tokio::spawn(async move {
            if let Err(e) = acp::serve(agent, config, edge_in, edge_out).await {
                tracing::info!(connection = %edge.id, error = %e, "acp http: the edge stopped");
            }
            edge.ended.cancel();
        });
        // The edge's lines to their streams.
        let router = conn.clone();
        tokio::spawn(async move {
            let mut lines = FramedRead::new(from_edge, LinesCodec::new_with_max_length(acp::MAX_FRAME));
            while let Some(Ok(line)) = lines.next().await {
                router.route(line);
            }
            router.own.close();
            for outbox in router.sessions.lock().unwrap_or_else(|p| p.into_inner()).values() {
                outbox.close();
            }
            router.ended.cancel();
        });
        conn
    }

    fn route(&self, line: String) {
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            tracing::warn!(connection = %self.id, "acp http: the edge wrote a line that is not JSON");
            return;
        };
        let is_response = message.get("method").is_none();
        if is_response {
            let route = message
                .get("id")
                .and_then(id_key)
                .and_then(|k| self.pending.lock().unwrap_or_else(|p| p.into_inner()).remove(&k));
            match route {
                Some(Route::Initialize(tx)) => {
                    let _ = tx.send(line);
                }
                Some(Route::Session { id, closes }) => {
                    let outbox = self.session(&id);
                    outbox.push(Arc::from(line));
                    if closes {
                        outbox.close();
                        self.sessions
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .remove(&id);
                    }
                }
                Some(Route::Connection) | None => self.own.push(Arc::from(line)),
            }
            return;
        }
        match session_of(&message) {
            Some(s) => self.session(s).push(Arc::from(line)),
            None => self.own.push(Arc::from(line)),
        }
    }

    /// The stream of session `id` (created on first use: the edge may announce a session's updates
    /// before its client opens the stream; they wait for it).
    pub fn session(&self, id: &str) -> Arc<Outbox> {
        let mut sessions = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        sessions.entry(id.to_owned()).or_default().clone()
    }

    /// The stream of session `id`, creating it unless [`MAX_SESSIONS`] are open.
    pub fn open_session(&self, id: &str) -> Result<Arc<Outbox>, SendError> {
        let mut sessions = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(o) = sessions.get(id) {
            return Ok(o.clone());
        }
        if sessions.len() >= MAX_SESSIONS {
            return Err(SendError::TooManySessions);
        }
        Ok(sessions.entry(id.to_owned()).or_default().clone())
    }

    /// The connection's own stream.
    pub fn own(&self) -> Arc<Outbox> {
        self.own.clone()
    }

    /// Marks the connection used now.
    pub fn touch(&self) {
        *self.last_used.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
    }

    /// True when no receiver is attached and nothing was posted for `idle`.
    pub fn is_idle(&self, idle: Duration) -> bool {
        if self.own.attached() {
            return false;
        }
        if self
            .sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .any(|o| o.attached())
        {
            return false;
        }
        self.last_used.lock().unwrap_or_else(|p| p.into_inner()).elapsed() >= idle
    }

    /// Sends the `initialize` request `line` (id `id`) and waits for its response line.
    pub async fn initialize(&self, id: &Value, line: String, wait: Duration) -> Option<String> {
        let (tx, rx) = oneshot::channel();
        let key = id_key(id)?;
        self.pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key, Route::Initialize(tx));
        self.input.send(line).await.ok()?;
        tokio::time::timeout(wait, rx).await.ok()?.ok()
    }

    /// Sends one client message (`line`, parsed as `message`) into the edge; a request's response
    /// is routed to its session's stream when it names one, else to the connection's.
    pub async fn send(&self, message: &Value, line: String) -> Result<(), SendError> {
        if self.ended.is_cancelled() {
            return Err(SendError::Closed);
        }
        self.touch();
        let is_request = message.get("method").is_some();
        if let (true, Some(key)) = (is_request, message.get("id").and_then(id_key)) {
            let route = match session_of(message) {
                Some(s) => {
                    self.open_session(s)?;
                    Route::Session {
                        id: s.to_owned(),
                        closes: message.get("method").and_then(Value::as_str) == Some("session/close"),
                    }
                }
                None => Route::Connection,
            };
            let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
            if pending.len() >= MAX_PENDING {
                return Err(SendError::TooManyPending);
            }
            pending.insert(key, route);
        }
        self.input.send(line).await.map_err(|_| SendError::Closed)
    }

    /// Ends the connection: the edge's input closes, its running prompts are cancelled, its streams
    /// end.
    pub fn end(&self) {
        self.ended.cancel();
    }
}
