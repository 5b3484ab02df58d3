//! App-server data types shared by notifications, responses and client frames: `ThreadItem`,
//! `Turn`, `Thread`, `TurnError`, `UserInput`, token usage, statuses.
//!
//! Field names are camelCase on the wire (except `text_elements`, which Codex spells snake_case).
//! `ThreadItem` and its variants live in `thread_item.rs` and are re-exported here.

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use super::thread_item::{
    AgentMessageItem, CommandExecutionItem, FileChangeItem, FileUpdateChange, McpToolCallItem, PlanItem,
    ReasoningItem, ThreadItem, UserMessageItem, WebSearchItem,
};

/// One user input element (`turn/start.input`, `turn/steer.input`, `userMessage.content`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum UserInput {
    /// Plain text; `text_elements` are UI spans (send `[]`).
    Text {
        /// The text.
        text: String,
        /// UI-defined spans inside `text`.
        #[serde(default)]
        text_elements: Vec<Value>,
    },
    /// An image by URL.
    Image {
        /// The URL (`data:` URLs work).
        url: String,
    },
    /// A local image file.
    LocalImage {
        /// Absolute path.
        path: String,
    },
    /// A skill reference (`$name` in the TUI).
    Skill {
        /// Skill name.
        name: String,
        /// Path of the skill's `SKILL.md`.
        path: String,
    },
    /// An input kind this version does not know (only produced when parsing).
    #[serde(other)]
    Other,
}

impl UserInput {
    /// A text input with no UI spans, as the TUI sends it.
    pub fn text(text: impl Into<String>) -> Self {
        UserInput::Text {
            text: text.into(),
            text_elements: Vec::new(),
        }
    }
}

/// `turn.status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum TurnStatus {
    /// Finished normally.
    Completed,
    /// Stopped by `turn/interrupt` (or a `cancel` approval decision).
    Interrupted,
    /// Failed (see `turn.error`).
    Failed,
    /// Running.
    InProgress,
    /// A status this version does not know.
    #[serde(other)]
    Other,
}

/// Status of command, file-change and MCP items.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ItemStatus {
    /// Running (or waiting for approval).
    InProgress,
    /// Finished.
    Completed,
    /// Failed.
    Failed,
    /// Refused by an approval decision.
    Declined,
    /// A status this version does not know.
    #[serde(other)]
    Other,
}

/// `TurnError`: the error of a failed turn and of the `error` notification.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnError {
    /// Message (may be a provider's JSON error body as text).
    pub message: String,
    /// Classification, e.g. `"badRequest"`, `"unauthorized"` or `{"responseStreamDisconnected":{…}}`.
    #[serde(default)]
    pub codex_error_info: Option<Value>,
    /// Extra detail.
    #[serde(default)]
    pub additional_details: Option<String>,
}

/// A turn, as in `turn/started`, `turn/completed` and the `turn/start` response.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Turn {
    /// Turn id (UUIDv7).
    pub id: String,
    /// Items included in this payload (often empty; see `itemsView`).
    #[serde(default)]
    pub items: Vec<ThreadItem>,
    /// Status.
    pub status: TurnStatus,
    /// Error of a failed turn.
    #[serde(default)]
    pub error: Option<TurnError>,
    /// Duration in ms, once completed.
    #[serde(default)]
    pub duration_ms: Option<i64>,
    /// Unix seconds.
    #[serde(default)]
    pub started_at: Option<i64>,
    /// Unix seconds.
    #[serde(default)]
    pub completed_at: Option<i64>,
}

/// A thread, as in `thread/started` and the `thread/start|resume|fork` responses.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Thread {
    /// Thread id (the resume id).
    pub id: String,
    /// Session id.
    #[serde(default)]
    pub session_id: Option<String>,
    /// First user message, for lists.
    #[serde(default)]
    pub preview: Option<String>,
    /// Model provider id.
    #[serde(default)]
    pub model_provider: Option<String>,
    /// Working directory.
    #[serde(default)]
    pub cwd: Option<String>,
    /// The thread this one was forked from.
    #[serde(default)]
    pub forked_from_id: Option<String>,
    /// Rollout path on disk.
    #[serde(default)]
    pub path: Option<String>,
    /// Whether it is persisted.
    #[serde(default)]
    pub ephemeral: Option<bool>,
    /// Turns (only when loaded).
    #[serde(default)]
    pub turns: Vec<Value>,
}

/// One side of `thread/tokenUsage/updated.tokenUsage`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenUsageBreakdown {
    /// Total tokens.
    #[serde(default)]
    pub total_tokens: u64,
    /// Input tokens.
    #[serde(default)]
    pub input_tokens: u64,
    /// Cached input tokens.
    #[serde(default)]
    pub cached_input_tokens: u64,
    /// Cache-write input tokens.
    #[serde(default)]
    pub cache_write_input_tokens: u64,
    /// Output tokens.
    #[serde(default)]
    pub output_tokens: u64,
    /// Reasoning output tokens.
    #[serde(default)]
    pub reasoning_output_tokens: u64,
}

/// `tokenUsage`: running total for the thread and the last request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadTokenUsage {
    /// Thread total.
    #[serde(default)]
    pub total: TokenUsageBreakdown,
    /// Last model request.
    #[serde(default)]
    pub last: TokenUsageBreakdown,
    /// Context window of the model, if known.
    #[serde(default)]
    pub model_context_window: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn user_input_serializes_like_the_tui() {
        assert_eq!(
            serde_json::to_value(UserInput::text("hi")).unwrap(),
            json!({"type":"text","text":"hi","text_elements":[]})
        );
        assert_eq!(
            serde_json::to_value(UserInput::LocalImage {
                path: "/a.png".into()
            })
            .unwrap(),
            json!({"type":"localImage","path":"/a.png"})
        );
    }

    #[test]
    fn turn_status_and_error_parse() {
        let t: Turn = serde_json::from_value(json!({"id":"t","items":[],"status":"failed","error":{"message":"x","codexErrorInfo":"badRequest"}})).unwrap();
        assert_eq!(t.status, TurnStatus::Failed);
        assert_eq!(t.error.unwrap().codex_error_info, Some(json!("badRequest")));
        let t: Turn = serde_json::from_value(json!({"id":"t","status":"paused"})).unwrap();
        assert_eq!(t.status, TurnStatus::Other);
    }
}
