//! Contract events → ACP `session/update`s. Text and reasoning content become message and thought
//! chunks; a tool call's start becomes `tool_call` (pending), its complete arguments an update to
//! `in_progress` with `rawInput`, its result an update to `completed` (or `failed` when the result says
//! `is_error`). Tool call ids are prefixed with the run id, so they stay unique across a session's
//! prompts (drivers number calls per run). Everything else (process output, notices, message states)
//! has no ACP update and is left out.

use serde_json::Value;

use super::wire::{ContentBlock, SessionUpdate, ToolCallContent, ToolCallStatus, ToolKind};
use crate::driver::{Phase, Role};
use crate::runtime::{Event, Payload};

/// The session-unique id of driver tool call `id` in run `run_id`.
pub fn tool_call_id(run_id: &str, id: &str) -> String {
    format!("{run_id}.{id}")
}

/// A tool category from its name (for the client's icon only).
pub fn tool_kind(name: &str) -> ToolKind {
    let n = name.to_ascii_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| n.contains(w));
    if has(&["write", "edit", "patch", "replace", "create"]) {
        ToolKind::Edit
    } else if has(&["delete", "remove"]) {
        ToolKind::Delete
    } else if has(&["move", "rename"]) {
        ToolKind::Move
    } else if has(&["read", "view", "cat", "open"]) {
        ToolKind::Read
    } else if has(&["grep", "glob", "search", "find", "list", "ls"]) {
        ToolKind::Search
    } else if has(&["bash", "shell", "exec", "command", "terminal", "run"]) {
        ToolKind::Execute
    } else if has(&["fetch", "web", "http", "url"]) {
        ToolKind::Fetch
    } else if has(&["think"]) {
        ToolKind::Think
    } else {
        ToolKind::Other
    }
}

/// The updates `ev` of run `run_id` becomes (none for most events).
pub fn updates(run_id: &str, ev: &Event) -> Vec<SessionUpdate> {
    match &ev.payload {
        Payload::TextDelta(t) if t.phase == Phase::Content && !t.text.is_empty() => {
            let content = ContentBlock::text(t.text.clone());
            vec![match t.role {
                Role::Assistant => SessionUpdate::AgentMessageChunk { content },
                Role::User => SessionUpdate::UserMessageChunk { content },
            }]
        }
        Payload::Thinking(t) if t.phase == Phase::Content && !t.text.is_empty() => {
            vec![SessionUpdate::AgentThoughtChunk {
                content: ContentBlock::text(t.text.clone()),
            }]
        }
        Payload::ToolCall(c) if c.phase == Phase::Start => vec![SessionUpdate::ToolCall {
            tool_call_id: tool_call_id(run_id, &c.id),
            title: c.name.clone(),
            kind: tool_kind(&c.name),
            status: ToolCallStatus::Pending,
            raw_input: c.args.clone().map(Value::Object),
        }],
        Payload::ToolCall(c) if c.phase == Phase::End => vec![SessionUpdate::ToolCallUpdate {
            tool_call_id: tool_call_id(run_id, &c.id),
            status: Some(ToolCallStatus::InProgress),
            raw_input: c.args.clone().map(Value::Object),
            raw_output: None,
            content: None,
        }],
        Payload::ToolResult(r) => {
            let failed = r.result.get("is_error").and_then(Value::as_bool) == Some(true);
            let content = r.result.get("text").and_then(Value::as_str).map(|t| {
                vec![ToolCallContent::Content {
                    content: ContentBlock::text(t),
                }]
            });
            vec![SessionUpdate::ToolCallUpdate {
                tool_call_id: tool_call_id(run_id, &r.id),
                status: Some(if failed {
                    ToolCallStatus::Failed
                } else {
                    ToolCallStatus::Completed
                }),
                raw_input: None,
                raw_output: Some(Value::Object(r.result.clone())),
                content,
            }]
        }
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_kinds_follow_the_name() {
        assert_eq!(tool_kind("write_file"), ToolKind::Edit);
        assert_eq!(tool_kind("Bash"), ToolKind::Execute);
        assert_eq!(tool_kind("Read"), ToolKind::Read);
        assert_eq!(tool_kind("echo"), ToolKind::Other);
    }
}
