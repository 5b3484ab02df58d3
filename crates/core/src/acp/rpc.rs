//! JSON-RPC 2.0 over newline-delimited frames: classifying what a line is, the error codes, and the
//! [`Peer`] that writes frames (one writer task owns the output, so frames never interleave) and
//! correlates the agent's own requests (`session/request_permission`) with the client's responses.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

/// Invalid JSON.
pub const PARSE_ERROR: i64 = -32700;
/// Valid JSON that is not a JSON-RPC request.
pub const INVALID_REQUEST: i64 = -32600;
/// No such method.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// Parameters that do not fit the method.
pub const INVALID_PARAMS: i64 = -32602;
/// A failure inside the agent.
pub const INTERNAL_ERROR: i64 = -32603;
/// ACP's "resource not found" (an unknown session).
pub const RESOURCE_NOT_FOUND: i64 = -32002;

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, thiserror::Error)]
#[error("{message} ({code})")]
pub struct RpcError {
    /// Code.
    pub code: i64,
    /// Message.
    pub message: String,
    /// Detail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl RpcError {
    /// An error with `code` and `message`.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// Adds `data`.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// Invalid parameters, with the decoder's explanation.
    pub fn invalid_params(detail: impl std::fmt::Display) -> Self {
        RpcError::new(INVALID_PARAMS, "Invalid params").with_data(json!({ "detail": detail.to_string() }))
    }
}

/// What one input line is.
#[derive(Debug)]
pub enum Incoming {
    /// A request the agent must answer.
    Request {
        /// Id.
        id: Value,
        /// Method.
        method: String,
        /// Parameters (`null` when absent).
        params: Value,
    },
    /// A notification (no answer).
    Notification {
        /// Method.
        method: String,
        /// Parameters.
        params: Value,
    },
    /// The answer to one of the agent's requests.
    Response {
        /// Id.
        id: Value,
        /// The result or the error.
        outcome: Result<Value, RpcError>,
    },
    /// A line that is no JSON-RPC message; answer with `error` to `id` (null when unknown).
    Invalid {
        /// The id to answer, if one could be read.
        id: Value,
        /// The error.
        error: RpcError,
    },
}

/// Classifies one line.
pub fn classify(line: &str) -> Incoming {
    match serde_json::from_str(line) {
        Ok(v) => classify_value(v),
        Err(e) => Incoming::Invalid {
            id: Value::Null,
            error: RpcError::new(PARSE_ERROR, "Parse error").with_data(json!({ "detail": e.to_string() })),
        },
    }
}

/// Classifies one already-parsed frame (the client driver reads frames as JSON values).
pub fn classify_value(value: Value) -> Incoming {
    let Value::Object(mut obj) = value else {
        return invalid(Value::Null, "a message must be a JSON object");
    };
    let id = obj.remove("id");
    if let Some(id) = &id
        && !(id.is_string() || id.is_number() || id.is_null())
    {
        return invalid(Value::Null, "id must be a string, a number or null");
    }
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return invalid(id.unwrap_or(Value::Null), "jsonrpc must be \"2.0\"");
    }
    match obj.remove("method") {
        Some(Value::String(method)) => {
            let params = obj.remove("params").unwrap_or(Value::Null);
            if !(params.is_object() || params.is_array() || params.is_null()) {
                return invalid(id.unwrap_or(Value::Null), "params must be an object or an array");
            }
            match id {
                Some(id) => Incoming::Request { id, method, params },
                None => Incoming::Notification { method, params },
            }
        }
        Some(_) => invalid(id.unwrap_or(Value::Null), "method must be a string"),
        None => {
            let Some(id) = id else {
                return invalid(Value::Null, "a message needs a method or an id");
            };
            if let Some(result) = obj.remove("result") {
                return Incoming::Response {
                    id,
                    outcome: Ok(result),
                };
            }
            match obj.remove("error").map(serde_json::from_value::<RpcError>) {
                Some(Ok(e)) => Incoming::Response { id, outcome: Err(e) },
                _ => invalid(id, "a response needs a result or an error object"),
            }
        }
    }
}

fn invalid(id: Value, why: &str) -> Incoming {
    Incoming::Invalid {
        id,
        error: RpcError::new(INVALID_REQUEST, "Invalid Request").with_data(json!({ "detail": why })),
    }
}

/// Why an agent → client request got no result.
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    /// The client answered with an error.
    #[error("the client answered with an error: {0}")]
    Rpc(RpcError),
    /// The connection closed first.
    #[error("the connection closed before the client answered")]
    Closed,
}

/// The writing half of the connection, shared by every task.
pub struct Peer {
    out: mpsc::UnboundedSender<String>,
    next_id: AtomicU64,
    pending: Mutex<HashMap<u64, oneshot::Sender<Result<Value, RpcError>>>>,
}

impl Peer {
    /// A peer writing frames (without their newline) to `out`.
    pub fn new(out: mpsc::UnboundedSender<String>) -> Self {
        Peer {
            out,
            next_id: AtomicU64::new(0),
            pending: Mutex::new(HashMap::new()),
        }
    }

    fn send(&self, frame: &Value) {
        match serde_json::to_string(frame) {
            Ok(line) => {
                // A closed output means the client is gone; the read loop ends on its own.
                let _ = self.out.send(line);
            }
            Err(e) => tracing::error!(error = %e, "acp: cannot encode a frame"),
        }
    }

    /// Answers request `id` with `outcome`.
    pub fn respond(&self, id: Value, outcome: Result<Value, RpcError>) {
        let frame = match outcome {
            Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
            Err(error) => json!({ "jsonrpc": "2.0", "id": id, "error": error }),
        };
        self.send(&frame);
    }

    /// Sends a notification.
    pub fn notify(&self, method: &str, params: impl Serialize) {
        match serde_json::to_value(params) {
            Ok(params) => self.send(&json!({ "jsonrpc": "2.0", "method": method, "params": params })),
            Err(e) => tracing::error!(error = %e, method, "acp: cannot encode a notification"),
        }
    }

    /// Sends a request and waits for the client's answer.
    pub async fn request(&self, method: &str, params: impl Serialize) -> Result<Value, RequestError> {
        let params = serde_json::to_value(params)
            .map_err(|e| RequestError::Rpc(RpcError::new(INTERNAL_ERROR, e.to_string())))?;
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id, tx);
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        match rx.await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(RequestError::Rpc(e)),
            Err(_) => Err(RequestError::Closed),
        }
    }

    /// Routes a client response to the request waiting for it; false when none is (an unknown id).
    pub fn complete(&self, id: &Value, outcome: Result<Value, RpcError>) -> bool {
        let Some(n) = id.as_u64() else { return false };
        let waiter = self.pending.lock().unwrap_or_else(|p| p.into_inner()).remove(&n);
        match waiter {
            Some(tx) => {
                let _ = tx.send(outcome);
                true
            }
            None => false,
        }
    }

    /// Fails every request still waiting (the input closed).
    pub fn close(&self) {
        self.pending.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }
}
