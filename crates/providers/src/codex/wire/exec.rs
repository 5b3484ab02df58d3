//! `codex exec --json` output: one JSON event per stdout line.
//!
//! Observed sequence: `thread.started` → `turn.started` → `item.started`/`item.updated`/
//! `item.completed`… → `turn.completed` (usage) or `turn.failed`; `error` lines carry retry notices
//! ("Reconnecting... 1/1 …") and the final error text. Exec streams no deltas: an agent message
//! arrives whole in `item.completed`.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::{WireError, from_str_tolerant};

/// One exec event line.
#[derive(Debug, Clone, PartialEq)]
pub enum ExecEvent {
    /// `{"type":"thread.started","thread_id":…}`: the session id to resume with.
    ThreadStarted {
        /// The thread (session) id.
        thread_id: String,
    },
    /// `{"type":"turn.started"}`.
    TurnStarted,
    /// `item.started`: a command or file change began (messages only complete).
    ItemStarted(ExecItem),
    /// `item.updated`: an in-progress item changed (e.g. a todo list).
    ItemUpdated(ExecItem),
    /// `item.completed`: the final state of an item.
    ItemCompleted(ExecItem),
    /// `turn.completed`: the successful terminal, with token usage.
    TurnCompleted {
        /// Usage for the whole turn.
        usage: ExecUsage,
    },
    /// `turn.failed`: the failed terminal.
    TurnFailed {
        /// The error (its message may itself be a JSON error body from the provider).
        error: ExecError,
    },
    /// A top-level `error` line: a retry notice or the fatal error that precedes `turn.failed`.
    Error {
        /// Human-readable message.
        message: String,
    },
    /// Any other `type` (or a JSON line without one), kept as is.
    Unknown(Value),
}

/// Token usage in `turn.completed`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub struct ExecUsage {
    /// Input tokens.
    #[serde(default)]
    pub input_tokens: u64,
    /// Cached input tokens.
    #[serde(default)]
    pub cached_input_tokens: u64,
    /// Cache-write input tokens (new in 0.17x).
    #[serde(default)]
    pub cache_write_input_tokens: u64,
    /// Output tokens.
    #[serde(default)]
    pub output_tokens: u64,
    /// Reasoning output tokens.
    #[serde(default)]
    pub reasoning_output_tokens: u64,
}

/// The error of `turn.failed`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ExecError {
    /// The message.
    pub message: String,
}

/// Status of an exec item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExecItemStatus {
    /// Running.
    InProgress,
    /// Finished successfully.
    Completed,
    /// Finished with an error.
    Failed,
    /// Refused (approval denied).
    Declined,
    /// A status this version does not know.
    #[serde(other)]
    Other,
}

/// One item of an exec item event, by `item.type`.
#[derive(Debug, Clone, PartialEq)]
pub enum ExecItem {
    /// `agent_message`: assistant text (the final answer is the last one).
    AgentMessage(AgentMessage),
    /// `reasoning`: the reasoning summary text.
    Reasoning(Reasoning),
    /// `command_execution`: a shell command (`exec_command` tool).
    CommandExecution(CommandExecution),
    /// `file_change`: an `apply_patch`.
    FileChange(FileChange),
    /// `mcp_tool_call`: an MCP tool call.
    McpToolCall(McpToolCall),
    /// `web_search`: a server-side web search.
    WebSearch(WebSearch),
    /// `todo_list`: the plan tool's list.
    TodoList(TodoList),
    /// `error`: a non-fatal error item (e.g. unknown model metadata, model mismatch on resume).
    Error(ErrorItem),
    /// Any other item type, kept as is.
    Unknown(Value),
}

/// `agent_message` item.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct AgentMessage {
    /// Exec-local item id (`item_<n>`).
    pub id: String,
    /// The text.
    #[serde(default)]
    pub text: String,
}

/// `reasoning` item.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Reasoning {
    /// Exec-local item id.
    pub id: String,
    /// The summary text.
    #[serde(default)]
    pub text: String,
}

/// `command_execution` item.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct CommandExecution {
    /// Exec-local item id.
    pub id: String,
    /// The command line as run, e.g. `/bin/bash -lc 'echo hi'`.
    pub command: String,
    /// stdout+stderr collected so far.
    #[serde(default)]
    pub aggregated_output: String,
    /// Exit code once finished.
    #[serde(default)]
    pub exit_code: Option<i32>,
    /// Status.
    pub status: ExecItemStatus,
}

/// `file_change` item.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct FileChange {
    /// Exec-local item id.
    pub id: String,
    /// Changed files.
    #[serde(default)]
    pub changes: Vec<FileChangeEntry>,
    /// Status.
    pub status: ExecItemStatus,
}

/// One entry of `file_change.changes`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct FileChangeEntry {
    /// Absolute path.
    pub path: String,
    /// `add`, `delete` or `update`.
    pub kind: String,
}

/// `mcp_tool_call` item.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct McpToolCall {
    /// Exec-local item id.
    pub id: String,
    /// MCP server name.
    pub server: String,
    /// Tool name.
    pub tool: String,
    /// Arguments object.
    #[serde(default)]
    pub arguments: Value,
    /// `{content, structured_content}` on success.
    #[serde(default)]
    pub result: Option<Value>,
    /// Error on failure.
    #[serde(default)]
    pub error: Option<Value>,
    /// Status.
    pub status: ExecItemStatus,
}

/// `web_search` item. Codex writes `"id"` twice here (its own `item_<n>`, then the provider's call
/// id); the last one wins.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct WebSearch {
    /// Item id (see the type docs about the duplicate key).
    pub id: String,
    /// The query.
    #[serde(default)]
    pub query: String,
    /// The provider's action object (`{type:"search", query, queries}`).
    #[serde(default)]
    pub action: Option<Value>,
}

/// `todo_list` item.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct TodoList {
    /// Exec-local item id.
    pub id: String,
    /// Entries.
    #[serde(default)]
    pub items: Vec<TodoEntry>,
}

/// One entry of a todo list.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct TodoEntry {
    /// Step text.
    pub text: String,
    /// Done or not.
    #[serde(default)]
    pub completed: bool,
}

/// `error` item.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ErrorItem {
    /// Exec-local item id.
    pub id: String,
    /// The warning text.
    pub message: String,
}

impl ExecItem {
    /// The item's id, when the variant is typed or the value has a string `id`.
    pub fn id(&self) -> Option<&str> {
        match self {
            ExecItem::AgentMessage(i) => Some(&i.id),
            ExecItem::Reasoning(i) => Some(&i.id),
            ExecItem::CommandExecution(i) => Some(&i.id),
            ExecItem::FileChange(i) => Some(&i.id),
            ExecItem::McpToolCall(i) => Some(&i.id),
            ExecItem::WebSearch(i) => Some(&i.id),
            ExecItem::TodoList(i) => Some(&i.id),
            ExecItem::Error(i) => Some(&i.id),
            ExecItem::Unknown(v) => v.get("id").and_then(Value::as_str),
        }
    }

    /// Parses an item object; an unknown `type` becomes [`ExecItem::Unknown`].
    pub fn from_json(raw: &str) -> Result<Self, serde_json::Error> {
        #[derive(Deserialize)]
        struct Probe<'a> {
            #[serde(borrow, rename = "type")]
            kind: Option<Cow<'a, str>>,
        }
        let kind = match serde_json::from_str::<Probe<'_>>(raw) {
            Ok(p) => p.kind.unwrap_or_default(),
            // A duplicate `type` key: read it from the Value (last wins).
            Err(_) => {
                let v: Value = serde_json::from_str(raw)?;
                Cow::Owned(
                    v.get("type")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                )
            }
        };
        Ok(match kind.as_ref() {
            "agent_message" => ExecItem::AgentMessage(from_str_tolerant(raw)?),
            "reasoning" => ExecItem::Reasoning(from_str_tolerant(raw)?),
            "command_execution" => ExecItem::CommandExecution(from_str_tolerant(raw)?),
            "file_change" => ExecItem::FileChange(from_str_tolerant(raw)?),
            "mcp_tool_call" => ExecItem::McpToolCall(from_str_tolerant(raw)?),
            "web_search" => ExecItem::WebSearch(from_str_tolerant(raw)?),
            "todo_list" => ExecItem::TodoList(from_str_tolerant(raw)?),
            "error" => ExecItem::Error(from_str_tolerant(raw)?),
            _ => ExecItem::Unknown(serde_json::from_str(raw)?),
        })
    }
}

/// Parses one stdout line of `codex exec --json`.
pub fn parse_exec_line(line: &str) -> Result<ExecEvent, WireError> {
    #[derive(Deserialize)]
    struct Probe<'a> {
        #[serde(borrow, rename = "type")]
        kind: Option<Cow<'a, str>>,
        #[serde(borrow)]
        item: Option<&'a RawValue>,
    }
    let line = line.trim_end_matches(['\n', '\r']);
    let probe: Probe<'_> = match serde_json::from_str(line) {
        Ok(p) => p,
        // Not even a flat probe parses: either not JSON, or a duplicate key at the top level.
        Err(e) => {
            let value: Value = serde_json::from_str(line).map_err(|_| WireError::not_json(line, e))?;
            return Ok(ExecEvent::Unknown(value));
        }
    };
    let kind = probe.kind.as_deref().unwrap_or_default();
    let shape = |source: serde_json::Error| WireError::Shape {
        kind: kind.to_owned(),
        source,
    };
    let item = |raw: Option<&RawValue>| -> Result<ExecItem, WireError> {
        match raw {
            Some(r) => ExecItem::from_json(r.get()).map_err(shape),
            None => Err(shape(serde::de::Error::missing_field("item"))),
        }
    };
    Ok(match kind {
        "thread.started" => {
            #[derive(Deserialize)]
            struct T {
                thread_id: String,
            }
            let t: T = from_str_tolerant(line).map_err(shape)?;
            ExecEvent::ThreadStarted {
                thread_id: t.thread_id,
            }
        }
        "turn.started" => ExecEvent::TurnStarted,
        "item.started" => ExecEvent::ItemStarted(item(probe.item)?),
        "item.updated" => ExecEvent::ItemUpdated(item(probe.item)?),
        "item.completed" => ExecEvent::ItemCompleted(item(probe.item)?),
        "turn.completed" => {
            #[derive(Deserialize)]
            struct T {
                #[serde(default)]
                usage: ExecUsage,
            }
            let t: T = from_str_tolerant(line).map_err(shape)?;
            ExecEvent::TurnCompleted { usage: t.usage }
        }
        "turn.failed" => {
            #[derive(Deserialize)]
            struct T {
                error: ExecError,
            }
            let t: T = from_str_tolerant(line).map_err(shape)?;
            ExecEvent::TurnFailed { error: t.error }
        }
        "error" => {
            #[derive(Deserialize)]
            struct T {
                message: String,
            }
            let t: T = from_str_tolerant(line).map_err(shape)?;
            ExecEvent::Error { message: t.message }
        }
        _ => ExecEvent::Unknown(serde_json::from_str(line).map_err(|e| WireError::not_json(line, e))?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_each_event_kind() {
        let ev = parse_exec_line(r#"{"type":"thread.started","thread_id":"t1"}"#).unwrap();
        assert_eq!(
            ev,
            ExecEvent::ThreadStarted {
                thread_id: "t1".into()
            }
        );
        assert_eq!(
            parse_exec_line("{\"type\":\"turn.started\"}\n").unwrap(),
            ExecEvent::TurnStarted
        );
        let ev = parse_exec_line(r#"{"type":"turn.failed","error":{"message":"boom"}}"#).unwrap();
        assert_eq!(
            ev,
            ExecEvent::TurnFailed {
                error: ExecError {
                    message: "boom".into()
                }
            }
        );
        let ev = parse_exec_line(
            r#"{"type":"turn.completed","usage":{"input_tokens":3,"output_tokens":2,"extra":1}}"#,
        )
        .unwrap();
        assert!(
            matches!(ev, ExecEvent::TurnCompleted { usage } if usage.input_tokens == 3 && usage.output_tokens == 2)
        );
    }

    #[test]
    fn unknown_types_and_fields_are_tolerated() {
        let ev = parse_exec_line(r#"{"type":"turn.paused","x":1}"#).unwrap();
        assert!(matches!(ev, ExecEvent::Unknown(v) if v["x"] == 1));
        let ev = parse_exec_line(r#"{"type":"item.completed","item":{"id":"i","type":"hologram","z":2}}"#)
            .unwrap();
        assert!(matches!(ev, ExecEvent::ItemCompleted(ExecItem::Unknown(v)) if v["z"] == 2));
        let ev = parse_exec_line(r#"{"type":"item.started","item":{"id":"i","type":"command_execution","command":"ls","status":"queued"}}"#).unwrap();
        assert!(
            matches!(ev, ExecEvent::ItemStarted(ExecItem::CommandExecution(c)) if c.status == ExecItemStatus::Other)
        );
    }

    #[test]
    fn non_json_and_bad_shapes_are_typed_errors() {
        assert!(matches!(
            parse_exec_line("Reading additional input from stdin..."),
            Err(WireError::NotJson { .. })
        ));
        let err = parse_exec_line(r#"{"type":"thread.started"}"#).unwrap_err();
        assert!(
            matches!(&err, WireError::Shape { kind, .. } if kind == "thread.started"),
            "{err}"
        );
        assert!(matches!(
            parse_exec_line(r#"{"type":"item.completed"}"#),
            Err(WireError::Shape { .. })
        ));
    }

    #[test]
    fn duplicate_id_in_web_search_items_is_accepted() {
        let line = r#"{"type":"item.completed","item":{"id":"item_0","type":"web_search","id":"ws_1","query":"q","action":{"type":"search"}}}"#;
        let ExecEvent::ItemCompleted(ExecItem::WebSearch(w)) = parse_exec_line(line).unwrap() else {
            panic!("not web_search")
        };
        assert_eq!(w.id, "ws_1");
        assert_eq!(w.query, "q");
    }
}
