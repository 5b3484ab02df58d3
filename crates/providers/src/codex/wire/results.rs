//! Typed `result` objects of the requests a driver sends (`initialize`, `thread/start|resume|fork`,
//! `turn/start`, `turn/steer`, `model/list`). Decode them from [`super::RpcMessage::Response`] with
//! [`super::RpcMessage::decode`]. Unknown fields are ignored.

use serde::Deserialize;
use serde_json::Value;

use super::items::{Thread, Turn};

/// `initialize` result.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResponse {
    /// `<clientInfo.name>/0.171.0 (…)`.
    pub user_agent: String,
    /// The resolved `CODEX_HOME`.
    #[serde(default)]
    pub codex_home: Option<String>,
    /// `unix`.
    #[serde(default)]
    pub platform_family: Option<String>,
    /// `linux`.
    #[serde(default)]
    pub platform_os: Option<String>,
}

/// `thread/start`, `thread/resume` and `thread/fork` result.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadResponse {
    /// The thread (its `id` is the resume id).
    pub thread: Thread,
    /// Effective model.
    #[serde(default)]
    pub model: Option<String>,
    /// Effective provider.
    #[serde(default)]
    pub model_provider: Option<String>,
    /// Effective approval policy (string or `{granular:…}`).
    #[serde(default)]
    pub approval_policy: Option<Value>,
    /// Effective sandbox policy.
    #[serde(default)]
    pub sandbox: Option<Value>,
}

/// `turn/start` result.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct TurnStartResponse {
    /// The turn (status `inProgress`). During an active turn this is the ACTIVE turn's id: the
    /// input was injected like a steer.
    pub turn: Turn,
}

/// `turn/steer` result.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnSteerResponse {
    /// The active turn the input joined.
    pub turn_id: String,
}

/// `model/list` result.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelListResponse {
    /// Models.
    pub data: Vec<ModelInfo>,
    /// Next page.
    #[serde(default)]
    pub next_cursor: Option<String>,
}

/// One model of `model/list`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelInfo {
    /// Id.
    pub id: String,
    /// Slug to pass as `model`.
    pub model: String,
    /// Display name.
    #[serde(default)]
    pub display_name: String,
    /// Whether it is the default.
    #[serde(default)]
    pub is_default: bool,
    /// Hidden from pickers.
    #[serde(default)]
    pub hidden: bool,
}
