//! Parses the frames a client writes to `codex app-server` (the inverse of [`super::client`]), for
//! fake app-servers in tests and for checking recorded stdin transcripts.

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::client::ClientRequest;
use super::rpc::RpcError;
use super::{RequestId, WireError};

/// One client → server frame.
#[derive(Debug, Clone, PartialEq)]
pub enum ClientFrame {
    /// A request.
    Request {
        /// Its id.
        id: RequestId,
        /// The typed request (`Other` for methods without typed params).
        request: ClientRequest,
    },
    /// A notification (`initialized`).
    Notification {
        /// Method.
        method: String,
        /// Params (`Null` when absent).
        params: Value,
    },
    /// The answer to a server request.
    Response {
        /// The server request's id.
        id: RequestId,
        /// The result (decision, answers, …).
        result: Value,
    },
    /// A refusal of a server request.
    Error {
        /// The server request's id.
        id: RequestId,
        /// The error.
        error: RpcError,
    },
}

impl ClientRequest {
    /// Builds the typed request from a method and its params.
    pub fn from_parts(method: &str, params: Value) -> Result<Self, serde_json::Error> {
        fn p<T: DeserializeOwned>(v: Value) -> Result<T, serde_json::Error> {
            T::deserialize(v)
        }
        Ok(match method {
            "initialize" => Self::Initialize(p(params)?),
            "thread/start" => Self::ThreadStart(p(params)?),
            "thread/resume" => Self::ThreadResume(p(params)?),
            "thread/fork" => Self::ThreadFork(p(params)?),
            "thread/list" => Self::ThreadList(p(params)?),
            "turn/start" => Self::TurnStart(p(params)?),
            "turn/steer" => Self::TurnSteer(p(params)?),
            "turn/interrupt" => Self::TurnInterrupt(p(params)?),
            "model/list" => Self::ModelList(p(params)?),
            other => Self::Other {
                method: other.to_owned(),
                params,
            },
        })
    }
}

/// Parses one line a client wrote.
pub fn parse_client_line(line: &str) -> Result<ClientFrame, WireError> {
    #[derive(Deserialize)]
    struct Raw {
        #[serde(default)]
        id: Option<RequestId>,
        #[serde(default)]
        method: Option<String>,
        #[serde(default)]
        params: Option<Value>,
        #[serde(default)]
        result: Option<Value>,
        #[serde(default)]
        error: Option<RpcError>,
    }
    let line = line.trim_end_matches(['\n', '\r']);
    let raw: Raw = serde_json::from_str(line).map_err(|e| WireError::not_json(line, e))?;
    let shape = |kind: &str, source| WireError::Shape {
        kind: kind.to_owned(),
        source,
    };
    match (raw.id, raw.method) {
        (Some(id), Some(method)) => {
            let request = ClientRequest::from_parts(&method, raw.params.unwrap_or(Value::Null))
                .map_err(|e| shape(&method, e))?;
            Ok(ClientFrame::Request { id, request })
        }
        (None, Some(method)) => Ok(ClientFrame::Notification {
            method,
            params: raw.params.unwrap_or(Value::Null),
        }),
        (Some(id), None) => match raw.error {
            Some(error) => Ok(ClientFrame::Error { id, error }),
            None => Ok(ClientFrame::Response {
                id,
                result: raw.result.unwrap_or(Value::Null),
            }),
        },
        (None, None) => Err(shape(
            "client frame",
            serde::de::Error::custom("neither id nor method"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codex::wire::client::{self, TurnInterruptParams};

    #[test]
    fn parses_and_reencodes_client_frames() {
        let line = r#"{"id":4,"method":"turn/interrupt","params":{"threadId":"t","turnId":"u"}}"#;
        let ClientFrame::Request { id, request } = parse_client_line(line).unwrap() else {
            panic!("not a request")
        };
        assert_eq!(
            request,
            ClientRequest::TurnInterrupt(TurnInterruptParams {
                thread_id: "t".into(),
                turn_id: "u".into()
            })
        );
        assert_eq!(request.to_line(&id), line);
        assert!(
            matches!(parse_client_line(&client::initialized()).unwrap(), ClientFrame::Notification { method, .. } if method == "initialized")
        );
        assert!(matches!(
            parse_client_line(r#"{"id":0,"result":{"decision":"accept"}}"#).unwrap(),
            ClientFrame::Response { .. }
        ));
        assert!(matches!(
            parse_client_line(r#"{"id":0,"error":{"code":-32601,"message":"x"}}"#).unwrap(),
            ClientFrame::Error { .. }
        ));
        assert!(matches!(parse_client_line("{}"), Err(WireError::Shape { .. })));
        assert!(matches!(
            parse_client_line(r#"{"id":1,"method":"turn/steer","params":{}}"#),
            Err(WireError::Shape { .. })
        ));
        let other = ClientRequest::from_parts("config/read", serde_json::json!({})).unwrap();
        assert_eq!(other.method(), "config/read");
    }
}
