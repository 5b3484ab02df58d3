//! Classifies one stdout line of `codex app-server` into a JSON-RPC message: a notification
//! (`method`, no `id`), a server request (`method` and `id`), a response (`id` and `result`) or an
//! error response (`error`). The `jsonrpc` marker is optional (Codex omits it).

use std::borrow::Cow;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_json::value::RawValue;

use super::notify::ServerNotification;
use super::server_request::ServerRequest;
use super::{RequestId, WireError, from_str_tolerant};

/// One app-server message. (No `PartialEq`: a response keeps its `result` as raw JSON text.)
#[derive(Debug, Clone)]
pub enum RpcMessage {
    /// A notification; `emitted_at_ms` is Codex's top-level `emittedAtMs` timestamp, when present.
    Notification {
        /// The typed notification.
        notification: ServerNotification,
        /// Unix ms at emission.
        emitted_at_ms: Option<i64>,
    },
    /// A server → client request that must be answered with the same id.
    Request {
        /// The id to answer.
        id: RequestId,
        /// The typed request.
        request: ServerRequest,
    },
    /// A successful response to one of our requests; decode `result` with [`RpcMessage::decode`]
    /// into the typed results in [`super::results`]. It stays raw JSON until decoded, because
    /// some results are large (`model/list`, `thread/start`) and the driver often needs one field.
    Response {
        /// Our request id.
        id: RequestId,
        /// The result, as JSON text (`null` when absent).
        result: Box<RawValue>,
    },
    /// An error response (`id` is absent only for unparseable requests).
    Error {
        /// Our request id.
        id: Option<RequestId>,
        /// The error.
        error: RpcError,
    },
    /// JSON that is none of the above, kept as is.
    Unknown(Value),
}

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq, Deserialize, serde::Serialize)]
pub struct RpcError {
    /// Code, e.g. `-32600` (invalid request: "no active turn to steer", "no rollout found …").
    pub code: i64,
    /// Message.
    pub message: String,
    /// Extra data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl RpcMessage {
    /// Decodes a response's `result` into `T` (e.g. `ThreadResponse`); `None` for other messages.
    pub fn decode<T: DeserializeOwned>(&self) -> Option<Result<T, serde_json::Error>> {
        match self {
            RpcMessage::Response { result, .. } => Some(from_str_tolerant(result.get())),
            _ => None,
        }
    }

    /// A response's `result` as a `Value`; `None` for other messages.
    pub fn result_value(&self) -> Option<Result<Value, serde_json::Error>> {
        self.decode()
    }
}

/// Parses one stdout line of `codex app-server`.
pub fn parse_rpc_line(line: &str) -> Result<RpcMessage, WireError> {
    #[derive(Deserialize)]
    struct Probe<'a> {
        #[serde(borrow)]
        method: Option<Cow<'a, str>>,
        #[serde(default)]
        id: Option<RequestId>,
        #[serde(borrow)]
        params: Option<&'a RawValue>,
        #[serde(borrow)]
        result: Option<&'a RawValue>,
        #[serde(borrow)]
        error: Option<&'a RawValue>,
        #[serde(rename = "emittedAtMs")]
        emitted_at_ms: Option<i64>,
    }
    let line = line.trim_end_matches(['\n', '\r']);
    let probe: Probe<'_> = match serde_json::from_str(line) {
        Ok(p) => p,
        Err(e) => {
            // A duplicate top-level key or an odd id type: keep the value if it is JSON at all.
            let value: Value = serde_json::from_str(line).map_err(|_| WireError::not_json(line, e))?;
            return Ok(RpcMessage::Unknown(value));
        }
    };
    let params = probe.params.map(RawValue::get);
    match (probe.method, probe.id) {
        (Some(method), None) => {
            let notification =
                ServerNotification::parse(&method, params).map_err(|source| WireError::Shape {
                    kind: method.to_string(),
                    source,
                })?;
            Ok(RpcMessage::Notification {
                notification,
                emitted_at_ms: probe.emitted_at_ms,
            })
        }
        (Some(method), Some(id)) => {
            let request = ServerRequest::parse(&method, params).map_err(|source| WireError::Shape {
                kind: method.to_string(),
                source,
            })?;
            Ok(RpcMessage::Request { id, request })
        }
        (None, id) => {
            if let Some(err) = probe.error {
                let error: RpcError = from_str_tolerant(err.get()).map_err(|source| WireError::Shape {
                    kind: "error".into(),
                    source,
                })?;
                return Ok(RpcMessage::Error { id, error });
            }
            match id {
                Some(id) => {
                    let result = match probe.result {
                        Some(r) => r.to_owned(),
                        None => {
                            RawValue::from_string("null".to_owned()).map_err(|source| WireError::Shape {
                                kind: "response".into(),
                                source,
                            })?
                        }
                    };
                    Ok(RpcMessage::Response { id, result })
                }
                None => Ok(RpcMessage::Unknown(
                    serde_json::from_str(line).map_err(|e| WireError::not_json(line, e))?,
                )),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_the_four_message_kinds() {
        let m = parse_rpc_line(r#"{"method":"turn/started","params":{"threadId":"t","turn":{"id":"u","items":[],"status":"inProgress"}},"emittedAtMs":5}"#).unwrap();
        assert!(matches!(
            m,
            RpcMessage::Notification {
                notification: ServerNotification::TurnStarted(_),
                emitted_at_ms: Some(5)
            }
        ));
        let m = parse_rpc_line(r#"{"jsonrpc":"2.0","method":"item/fileChange/requestApproval","id":0,"params":{"threadId":"t","turnId":"u","itemId":"i"}}"#).unwrap();
        assert!(matches!(
            m,
            RpcMessage::Request {
                id: RequestId::Int(0),
                request: ServerRequest::FileChangeApproval(_)
            }
        ));
        let m = parse_rpc_line(r#"{"id":"a","result":{"turnId":"u"}}"#).unwrap();
        assert!(matches!(&m, RpcMessage::Response { id: RequestId::Str(s), .. } if s == "a"));
        let m = parse_rpc_line(r#"{"id":4,"error":{"code":-32600,"message":"no active turn to steer"}}"#)
            .unwrap();
        assert!(
            matches!(m, RpcMessage::Error { id: Some(RequestId::Int(4)), error } if error.code == -32600)
        );
    }

    #[test]
    fn responses_decode_lazily() {
        let m = parse_rpc_line(r#"{"id":"a","result":{"turnId":"u"}}"#).unwrap();
        assert_eq!(m.result_value().unwrap().unwrap()["turnId"], "u");
        let m = parse_rpc_line(r#"{"id":2}"#).unwrap();
        assert_eq!(m.result_value().unwrap().unwrap(), Value::Null);
        let n = parse_rpc_line(r#"{"method":"warning","params":{"message":"m"}}"#).unwrap();
        assert!(n.result_value().is_none());
    }

    #[test]
    fn tolerates_unknowns_and_rejects_non_json() {
        let m = parse_rpc_line(r#"{"method":"brand/new","params":{"a":1}}"#).unwrap();
        assert!(matches!(
            m,
            RpcMessage::Notification {
                notification: ServerNotification::Unknown { .. },
                ..
            }
        ));
        let m = parse_rpc_line(r#"{"method":"brand/new/request","id":9,"params":{}}"#).unwrap();
        assert!(matches!(
            m,
            RpcMessage::Request {
                request: ServerRequest::Unknown { .. },
                ..
            }
        ));
        assert!(matches!(
            parse_rpc_line(r#"{"hello":1}"#).unwrap(),
            RpcMessage::Unknown(_)
        ));
        assert!(matches!(
            parse_rpc_line(r#"{"id":1.5,"result":{}}"#).unwrap(),
            RpcMessage::Unknown(_)
        ));
        assert!(matches!(
            parse_rpc_line("ERROR codex could not find bubblewrap"),
            Err(WireError::NotJson { .. })
        ));
        let err = parse_rpc_line(r#"{"method":"turn/completed","params":{"threadId":"t"}}"#).unwrap_err();
        assert!(matches!(err, WireError::Shape { ref kind, .. } if kind == "turn/completed"));
    }
}
