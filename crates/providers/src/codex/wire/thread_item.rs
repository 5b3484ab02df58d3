//! `ThreadItem`: one item of a thread, by `type` (`userMessage`, `agentMessage`, `reasoning`,
//! `commandExecution`, `fileChange`, `mcpToolCall`, `webSearch`, `plan`, `contextCompaction`).
//! Items nested in other frames never fail the frame: an unknown or malformed item becomes
//! [`ThreadItem::Unknown`].

use serde::{Deserialize, Deserializer};
use serde_json::Value;

use super::items::{ItemStatus, UserInput};

/// A thread item, by `type`.
#[derive(Debug, Clone, PartialEq)]
pub enum ThreadItem {
    /// `userMessage`; `clientId` echoes `clientUserMessageId` of `turn/start` / `turn/steer`.
    UserMessage(UserMessageItem),
    /// `agentMessage`.
    AgentMessage(AgentMessageItem),
    /// `reasoning`.
    Reasoning(ReasoningItem),
    /// `commandExecution`.
    CommandExecution(CommandExecutionItem),
    /// `fileChange`.
    FileChange(FileChangeItem),
    /// `mcpToolCall`.
    McpToolCall(McpToolCallItem),
    /// `webSearch`.
    WebSearch(WebSearchItem),
    /// `plan` (plan-mode proposal text).
    Plan(PlanItem),
    /// `contextCompaction`.
    ContextCompaction {
        /// Item id.
        id: String,
    },
    /// Any other item type (`dynamicToolCall`, `collabAgentToolCall`, `imageView`, …) or a known
    /// type whose shape did not match, kept as is.
    Unknown(Value),
}

/// `userMessage` item.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UserMessageItem {
    /// Item id.
    pub id: String,
    /// The input elements.
    #[serde(default)]
    pub content: Vec<UserInput>,
    /// The client's message id (the delivery acknowledgement of a steer).
    #[serde(default)]
    pub client_id: Option<String>,
}

/// `agentMessage` item.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentMessageItem {
    /// Item id (the model's message id, e.g. `msg_…`).
    pub id: String,
    /// Full text (empty in `item/started`).
    #[serde(default)]
    pub text: String,
    /// `commentary` / `final_answer` when the model sets it.
    #[serde(default)]
    pub phase: Option<String>,
}

/// `reasoning` item.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReasoningItem {
    /// Item id.
    pub id: String,
    /// Summary parts.
    #[serde(default)]
    pub summary: Vec<String>,
    /// Raw reasoning parts.
    #[serde(default)]
    pub content: Vec<String>,
}

/// `commandExecution` item.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandExecutionItem {
    /// Item id (the model's call id).
    pub id: String,
    /// The command line, e.g. `/bin/bash -lc 'echo hi'`.
    pub command: String,
    /// Working directory.
    #[serde(default)]
    pub cwd: Option<String>,
    /// Status.
    pub status: ItemStatus,
    /// Exit code once finished.
    #[serde(default)]
    pub exit_code: Option<i32>,
    /// Collected output once finished.
    #[serde(default)]
    pub aggregated_output: Option<String>,
    /// Duration in ms once finished.
    #[serde(default)]
    pub duration_ms: Option<i64>,
    /// Parsed actions (`[{type:"unknown"|"read"|…, command, …}]`).
    #[serde(default)]
    pub command_actions: Vec<Value>,
}

/// `fileChange` item.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileChangeItem {
    /// Item id.
    pub id: String,
    /// Changed files.
    #[serde(default)]
    pub changes: Vec<FileUpdateChange>,
    /// Status.
    pub status: ItemStatus,
}

/// One entry of `fileChange.changes`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileUpdateChange {
    /// Absolute path.
    pub path: String,
    /// `{"type":"add"|"delete"|"update", "move_path"?}`.
    #[serde(default)]
    pub kind: Value,
    /// Unified diff.
    #[serde(default)]
    pub diff: Option<String>,
}

/// `mcpToolCall` item.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpToolCallItem {
    /// Item id.
    pub id: String,
    /// MCP server name.
    pub server: String,
    /// Tool name.
    pub tool: String,
    /// Arguments.
    #[serde(default)]
    pub arguments: Value,
    /// Result on success.
    #[serde(default)]
    pub result: Option<Value>,
    /// Error on failure.
    #[serde(default)]
    pub error: Option<Value>,
    /// Status.
    pub status: ItemStatus,
    /// Duration once finished.
    #[serde(default)]
    pub duration_ms: Option<i64>,
}

/// `webSearch` item.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WebSearchItem {
    /// Item id.
    pub id: String,
    /// The query.
    #[serde(default)]
    pub query: String,
    /// The provider's action object.
    #[serde(default)]
    pub action: Option<Value>,
}

/// `plan` item.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct PlanItem {
    /// Item id.
    pub id: String,
    /// Plan text.
    #[serde(default)]
    pub text: String,
}

impl ThreadItem {
    /// The item id, when present.
    pub fn id(&self) -> Option<&str> {
        match self {
            ThreadItem::UserMessage(i) => Some(&i.id),
            ThreadItem::AgentMessage(i) => Some(&i.id),
            ThreadItem::Reasoning(i) => Some(&i.id),
            ThreadItem::CommandExecution(i) => Some(&i.id),
            ThreadItem::FileChange(i) => Some(&i.id),
            ThreadItem::McpToolCall(i) => Some(&i.id),
            ThreadItem::WebSearch(i) => Some(&i.id),
            ThreadItem::Plan(i) => Some(&i.id),
            ThreadItem::ContextCompaction { id } => Some(id),
            ThreadItem::Unknown(v) => v.get("id").and_then(Value::as_str),
        }
    }

    /// The wire `type` of the item.
    pub fn kind(&self) -> &str {
        match self {
            ThreadItem::UserMessage(_) => "userMessage",
            ThreadItem::AgentMessage(_) => "agentMessage",
            ThreadItem::Reasoning(_) => "reasoning",
            ThreadItem::CommandExecution(_) => "commandExecution",
            ThreadItem::FileChange(_) => "fileChange",
            ThreadItem::McpToolCall(_) => "mcpToolCall",
            ThreadItem::WebSearch(_) => "webSearch",
            ThreadItem::Plan(_) => "plan",
            ThreadItem::ContextCompaction { .. } => "contextCompaction",
            ThreadItem::Unknown(v) => v.get("type").and_then(Value::as_str).unwrap_or(""),
        }
    }

    /// Builds the typed item from a JSON value; unknown or malformed items become `Unknown`.
    pub fn from_value(v: Value) -> Self {
        fn typed<T: serde::de::DeserializeOwned>(v: &Value, wrap: fn(T) -> ThreadItem) -> Option<ThreadItem> {
            T::deserialize(v).ok().map(wrap)
        }
        let parsed = match v.get("type").and_then(Value::as_str) {
            Some("userMessage") => typed(&v, ThreadItem::UserMessage),
            Some("agentMessage") => typed(&v, ThreadItem::AgentMessage),
            Some("reasoning") => typed(&v, ThreadItem::Reasoning),
            Some("commandExecution") => typed(&v, ThreadItem::CommandExecution),
            Some("fileChange") => typed(&v, ThreadItem::FileChange),
            Some("mcpToolCall") => typed(&v, ThreadItem::McpToolCall),
            Some("webSearch") => typed(&v, ThreadItem::WebSearch),
            Some("plan") => typed(&v, ThreadItem::Plan),
            Some("contextCompaction") => v
                .get("id")
                .and_then(Value::as_str)
                .map(|id| ThreadItem::ContextCompaction { id: id.to_owned() }),
            _ => None,
        };
        parsed.unwrap_or(ThreadItem::Unknown(v))
    }
}

impl ThreadItem {
    /// Parses an item from its JSON text: a direct typed parse for known types (the hot path of
    /// `item/started` / `item/completed`), falling back to [`ThreadItem::from_value`] for
    /// unknown types, odd shapes or duplicate keys.
    pub fn from_json(raw: &str) -> Result<Self, serde_json::Error> {
        #[derive(Deserialize)]
        struct Probe<'a> {
            #[serde(borrow, rename = "type")]
            kind: Option<std::borrow::Cow<'a, str>>,
        }
        fn typed<T: serde::de::DeserializeOwned>(raw: &str, wrap: fn(T) -> ThreadItem) -> Option<ThreadItem> {
            serde_json::from_str(raw).ok().map(wrap)
        }
        let fast = match serde_json::from_str::<Probe<'_>>(raw).ok().and_then(|p| p.kind) {
            Some(kind) => match kind.as_ref() {
                "userMessage" => typed(raw, ThreadItem::UserMessage),
                "agentMessage" => typed(raw, ThreadItem::AgentMessage),
                "reasoning" => typed(raw, ThreadItem::Reasoning),
                "commandExecution" => typed(raw, ThreadItem::CommandExecution),
                "fileChange" => typed(raw, ThreadItem::FileChange),
                "mcpToolCall" => typed(raw, ThreadItem::McpToolCall),
                "webSearch" => typed(raw, ThreadItem::WebSearch),
                "plan" => typed(raw, ThreadItem::Plan),
                _ => None,
            },
            None => None,
        };
        match fast {
            Some(item) => Ok(item),
            None => Ok(ThreadItem::from_value(serde_json::from_str(raw)?)),
        }
    }
}

impl<'de> Deserialize<'de> for ThreadItem {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(ThreadItem::from_value(Value::deserialize(d)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn thread_items_parse_by_type_and_degrade_to_unknown() {
        let item = ThreadItem::from_value(
            json!({"type":"userMessage","id":"u1","clientId":"c-1","content":[{"type":"text","text":"hi","text_elements":[]},{"type":"mention","name":"x"}]}),
        );
        let ThreadItem::UserMessage(u) = &item else {
            panic!("{item:?}")
        };
        assert_eq!(u.client_id.as_deref(), Some("c-1"));
        assert_eq!(u.content, vec![UserInput::text("hi"), UserInput::Other]);
        let item = ThreadItem::from_value(
            json!({"type":"commandExecution","id":"c","command":"ls","status":"inProgress","exitCode":null}),
        );
        assert!(
            matches!(item, ThreadItem::CommandExecution(ref c) if c.status == ItemStatus::InProgress && c.exit_code.is_none())
        );
        // Known type, wrong shape: kept as Unknown rather than failing the frame.
        let item = ThreadItem::from_value(json!({"type":"commandExecution","id":"c"}));
        assert!(matches!(item, ThreadItem::Unknown(_)));
        assert_eq!(item.kind(), "commandExecution");
        let item = ThreadItem::from_value(json!({"type":"sleep","id":"s","durationMs":5}));
        assert_eq!(item.id(), Some("s"));
        let fast =
            ThreadItem::from_json(r#"{"type":"agentMessage","id":"m","text":"hi","id":"m2"}"#).unwrap();
        assert!(
            matches!(fast, ThreadItem::AgentMessage(ref a) if a.id == "m2" && a.text == "hi"),
            "{fast:?}"
        );
        let fast = ThreadItem::from_json(r#"{"type":"plan","id":"p","text":"1. x"}"#).unwrap();
        assert!(matches!(fast, ThreadItem::Plan(_)));
        assert!(matches!(
            ThreadItem::from_json(r#"{"type":"sleep","id":"s"}"#).unwrap(),
            ThreadItem::Unknown(_)
        ));
    }
}
