//! Provider session state, checkpoints and the codec that makes them durable.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// Guard key: the working directory the session was created in.
pub const PARAM_CWD: &str = "cwd";
/// Guard key: the workspace identity.
pub const PARAM_WORKSPACE: &str = "workspace_id";
/// Guard key: the fingerprint of the materialized profile resources.
pub const PARAM_PROFILE: &str = "profile_fingerprint";

/// What a provider needs to resume a session.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SessionState {
    /// The provider's resume id (Claude session id, Codex thread id, Cursor chat id…).
    pub resume_id: String,
    /// A display id for humans.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub display_id: String,
    /// Guard keys and driver extras.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub data: BTreeMap<String, String>,
}

/// A checkpoint reported by a driver. Only a `valid` one — clean exit, official success terminal,
/// explicit top-level session id that round-trips through the codec — may replace a thread's
/// healthy state.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Checkpoint {
    /// The session state.
    pub state: SessionState,
    /// Whether it is a healthy resume point.
    pub valid: bool,
}

/// Encodes and decodes session state for durable storage.
pub trait SessionCodec: Send + Sync {
    /// A stable, non-empty codec name (stored with the record).
    fn name(&self) -> &str;
    /// Encodes a state.
    fn encode(&self, state: &SessionState) -> Value;
    /// Decodes a state; errors are human-readable reasons.
    fn decode(&self, value: &Value) -> Result<SessionState, String>;
    /// A deterministic, non-empty fingerprint of the guard keys of `state`.
    fn guard_fingerprint(&self, state: &SessionState) -> String {
        let mut h = Sha256::new();
        for (k, v) in &state.data {
            h.update(k.as_bytes());
            h.update([0]);
            h.update(v.as_bytes());
            h.update([0]);
        }
        hex::encode(h.finalize())
    }
}

/// The default codec: the state as a JSON object, versioned by name.
#[derive(Debug, Clone, Copy, Default)]
pub struct JsonSessionCodec;

impl SessionCodec for JsonSessionCodec {
    fn name(&self) -> &str {
        "json-v1"
    }

    fn encode(&self, state: &SessionState) -> Value {
        serde_json::to_value(state).unwrap_or(Value::Null)
    }

    fn decode(&self, value: &Value) -> Result<SessionState, String> {
        let state: SessionState =
            serde_json::from_value(value.clone()).map_err(|e| format!("invalid session state: {e}"))?;
        if state.resume_id.is_empty() {
            return Err("session state has an empty resume id".into());
        }
        Ok(state)
    }
}

/// A canonical SHA-256 over `parts`, length-prefixed so different splits never collide.
pub fn fingerprint(parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p.as_bytes());
    }
    hex::encode(h.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_codec_round_trips_and_rejects_empty_ids() {
        let c = JsonSessionCodec;
        let mut s = SessionState {
            resume_id: "abc".into(),
            ..Default::default()
        };
        s.data.insert(PARAM_CWD.into(), "/w".into());
        assert_eq!(c.decode(&c.encode(&s)).unwrap(), s);
        assert!(c.decode(&serde_json::json!({"resume_id": ""})).is_err());
        assert!(c.decode(&serde_json::json!(42)).is_err());
    }

    #[test]
    fn guard_fingerprint_changes_with_guard_keys() {
        let c = JsonSessionCodec;
        let mut s = SessionState {
            resume_id: "abc".into(),
            ..Default::default()
        };
        s.data.insert(PARAM_CWD.into(), "/a".into());
        let a = c.guard_fingerprint(&s);
        assert_eq!(a, c.guard_fingerprint(&s.clone()));
        s.data.insert(PARAM_CWD.into(), "/b".into());
        assert_ne!(a, c.guard_fingerprint(&s));
    }

    #[test]
    fn fingerprint_is_split_sensitive() {
        assert_ne!(fingerprint(&["ab", "c"]), fingerprint(&["a", "bc"]));
        assert_eq!(fingerprint(&["x"]), fingerprint(&["x"]));
    }
}
