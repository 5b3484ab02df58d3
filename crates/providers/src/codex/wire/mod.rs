//! Exact serde mirror of the two Codex CLI 0.171.0 protocols: the `codex exec --json` JSONL event
//! stream ([`exec`]) and the `codex app-server` JSON-RPC over stdio. For app-server, [`rpc`],
//! [`notify`], [`server_request`] and [`items`] cover what the server sends; [`client`] what a
//! driver sends and [`results`] the typed answers to it; [`client_parse`] reads client frames back
//! (for fakes and tests).
//!
//! Parsing is tolerant by design:
//! - an unknown event type, notification method, server-request method or item type becomes an
//!   `Unknown` variant that keeps the JSON value;
//! - unknown fields are ignored, enum-like strings have an `Other` fallback;
//! - the `jsonrpc` marker is never required (Codex omits it), ids may be numbers or strings;
//! - duplicate keys (Codex emits `"id"` twice in `web_search` exec items) are accepted, the last
//!   value wins, as in `serde_json::Value`.
//!
//! A line that is not JSON at all is [`WireError::NotJson`]; a frame whose type/method is known but
//! whose shape does not match is [`WireError::Shape`] (the driver decides whether that is fatal).
//! Items nested inside other frames (e.g. `turn.items`) degrade to `Unknown` instead.
//!
//! Not here: translation into runtime events (the driver's `translate`), process handling.

pub mod client;
pub mod client_parse;
pub mod exec;
#[cfg(test)]
mod fixture_tests;
pub mod items;
pub mod notify;
pub mod results;
pub mod rpc;
pub mod server_request;
pub mod thread_item;

use std::fmt;

use serde::de::{self, DeserializeOwned, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

pub use exec::{ExecEvent, ExecItem, parse_exec_line};
pub use rpc::{RpcMessage, parse_rpc_line};

/// Why a line could not be turned into a typed frame.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WireError {
    /// The line is not JSON (CLI noise, a truncated write, a banner).
    #[error("not a JSON line: {source} (line starts {excerpt:?})")]
    NotJson {
        /// The first 80 characters of the line.
        excerpt: String,
        /// The parser error.
        #[source]
        source: serde_json::Error,
    },
    /// The frame's type or method is known but its fields do not have the expected shape.
    #[error("malformed `{kind}` frame: {source}")]
    Shape {
        /// The exec event `type` or JSON-RPC `method` (or `response`).
        kind: String,
        /// The deserialization error.
        #[source]
        source: serde_json::Error,
    },
}

impl WireError {
    pub(crate) fn not_json(line: &str, source: serde_json::Error) -> Self {
        WireError::NotJson {
            excerpt: line.chars().take(80).collect(),
            source,
        }
    }
}

/// A JSON-RPC request id: Codex uses integers for its own server requests, clients may use either.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RequestId {
    /// A numeric id.
    Int(i64),
    /// A string id.
    Str(String),
}

impl From<i64> for RequestId {
    fn from(v: i64) -> Self {
        RequestId::Int(v)
    }
}

impl From<&str> for RequestId {
    fn from(v: &str) -> Self {
        RequestId::Str(v.to_owned())
    }
}

impl From<String> for RequestId {
    fn from(v: String) -> Self {
        RequestId::Str(v)
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Int(i) => write!(f, "{i}"),
            RequestId::Str(s) => write!(f, "{s:?}"),
        }
    }
}

impl Serialize for RequestId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            RequestId::Int(i) => s.serialize_i64(*i),
            RequestId::Str(v) => s.serialize_str(v),
        }
    }
}

impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = RequestId;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an integer or string request id")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RequestId, E> {
                Ok(RequestId::Int(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RequestId, E> {
                i64::try_from(v)
                    .map(RequestId::Int)
                    .map_err(|_| E::custom("request id out of range"))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RequestId, E> {
                Ok(RequestId::Str(v.to_owned()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<RequestId, E> {
                Ok(RequestId::Str(v))
            }
        }
        d.deserialize_any(V)
    }
}

/// Deserializes `s` as `T`; if the direct parse fails (e.g. on a duplicate key), retries through
/// `serde_json::Value`, where the last duplicate wins. Returns the first error if both fail.
pub(crate) fn from_str_tolerant<T: DeserializeOwned>(s: &str) -> Result<T, serde_json::Error> {
    match serde_json::from_str::<T>(s) {
        Ok(v) => Ok(v),
        Err(first) => match serde_json::from_str::<serde_json::Value>(s) {
            Ok(value) => T::deserialize(value).map_err(|_| first),
            Err(_) => Err(first),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_ids_are_numbers_or_strings() {
        let a: RequestId = serde_json::from_str("7").unwrap();
        let b: RequestId = serde_json::from_str("\"abc\"").unwrap();
        assert_eq!(a, RequestId::Int(7));
        assert_eq!(b, RequestId::Str("abc".into()));
        assert_eq!(serde_json::to_string(&a).unwrap(), "7");
        assert_eq!(serde_json::to_string(&b).unwrap(), "\"abc\"");
        assert!(serde_json::from_str::<RequestId>("1.5").is_err());
        assert_eq!(b.to_string(), "\"abc\"");
    }

    #[test]
    fn tolerant_parse_accepts_duplicate_keys() {
        #[derive(Deserialize)]
        struct X {
            id: String,
        }
        assert!(serde_json::from_str::<X>(r#"{"id":"a","id":"b"}"#).is_err());
        let x: X = from_str_tolerant(r#"{"id":"a","id":"b"}"#).unwrap();
        assert_eq!(x.id, "b");
        assert!(from_str_tolerant::<X>("{").is_err());
    }
}
