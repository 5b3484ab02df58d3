//! `RunAgentInput`, parsed leniently (unknown keys ignored, optional collections defaulted), and
//! the collision-free mapping from a client `threadId` to a thread key.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::interrupts::ApprovalMode;

/// One message of the conversation the client sends (the whole history, every run).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputMessage {
    /// Message id.
    #[serde(default)]
    pub id: String,
    /// `user`, `assistant`, `tool`, `system`, `developer`, `reasoning`, `activity`.
    pub role: String,
    /// String or content parts.
    #[serde(default)]
    pub content: Option<Value>,
    /// For `tool` messages.
    #[serde(default)]
    pub tool_call_id: Option<String>,
    /// Assistant tool calls.
    #[serde(default)]
    pub tool_calls: Option<Value>,
}

impl InputMessage {
    /// The text content: a string, or the `text` parts joined with newlines.
    pub fn text(&self) -> String {
        match &self.content {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Array(parts)) => parts
                .iter()
                .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
            _ => String::new(),
        }
    }
}

/// A `resume[]` entry answering an interrupt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResumeEntry {
    /// The interrupt answered.
    pub interrupt_id: String,
    /// `resolved` or `cancelled`.
    pub status: String,
    /// The answer (absent when cancelled).
    #[serde(default)]
    pub payload: Option<Value>,
}

/// The request body of an AG-UI run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunAgentInput {
    /// Client thread id (opaque).
    #[serde(default)]
    pub thread_id: String,
    /// Client run id (may repeat on an interrupt resume).
    #[serde(default)]
    pub run_id: String,
    /// The full history.
    #[serde(default)]
    pub messages: Vec<InputMessage>,
    /// Frontend tools.
    #[serde(default)]
    pub tools: Vec<Value>,
    /// Context items.
    #[serde(default)]
    pub context: Vec<Value>,
    /// Client state.
    #[serde(default)]
    pub state: Option<Value>,
    /// Free-form per-run options.
    #[serde(default)]
    pub forwarded_props: Option<Value>,
    /// Interrupt answers.
    #[serde(default)]
    pub resume: Vec<ResumeEntry>,
    /// The client's protocol version (1.0 clients send it; 0.0.x ones do not).
    #[serde(default)]
    pub protocol_version: Option<String>,
}

impl RunAgentInput {
    /// The prompt: the text of the last user message with text.
    pub fn prompt(&self) -> Option<String> {
        self.messages
            .iter()
            .rev()
            .filter(|m| m.role == "user")
            .map(InputMessage::text)
            .find(|t| !t.trim().is_empty())
    }

    /// The last message, when it is a tool result for a frontend tool: `(tool_call_id, content)`.
    pub fn tool_result(&self) -> Option<(String, String)> {
        let last = self.messages.last()?;
        (last.role == "tool").then(|| (last.tool_call_id.clone().unwrap_or_default(), last.text()))
    }

    /// The `tool` messages that end the history (the results of the client's tools for the calls
    /// of the previous run), in order: `(tool_call_id, content)`.
    pub fn trailing_tool_results(&self) -> Vec<(String, String)> {
        let start = self
            .messages
            .iter()
            .rposition(|m| m.role != "tool")
            .map_or(0, |i| i + 1);
        self.messages[start..]
            .iter()
            .map(|m| (m.tool_call_id.clone().unwrap_or_default(), m.text()))
            .collect()
    }

    /// How this run surfaces approvals: `forwardedProps.approvals` (`stream`, `interrupt`, `tool`),
    /// else by the protocol version (see [`ApprovalMode::choose`]).
    pub fn approval_mode(&self) -> Result<ApprovalMode, String> {
        let forwarded = match self.forwarded_props.as_ref().and_then(|p| p.get("approvals")) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.as_str()),
            Some(other) => return Err(format!("expected a string, got {other}")),
        };
        ApprovalMode::choose(forwarded, self.protocol_version.as_deref())
    }

    /// The id of the last user message, used as the supplemental message id.
    pub fn last_user_id(&self) -> Option<String> {
        self.messages
            .iter()
            .rev()
            .find(|m| m.role == "user")
            .map(|m| m.id.clone())
            .filter(|id| !id.is_empty())
    }
}

/// A collision-free thread key for a client thread id: length-prefixed, so no two different
/// (bridge, id) pairs share a key.
pub fn thread_key(thread_id: &str) -> String {
    format!("agui:{}:{}", thread_id.len(), thread_id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_leniently_and_picks_the_last_user_text() {
        let body = r#"{"threadId":"t","runId":"r","messages":[
            {"id":"u1","role":"user","content":"first"},
            {"id":"a1","role":"assistant","content":"ok"},
            {"id":"u2","role":"user","content":[{"type":"text","text":"second"},{"type":"image","source":{}}]}],
            "unknownKey": 1}"#;
        let input: RunAgentInput = serde_json::from_str(body).unwrap();
        assert_eq!(input.prompt().as_deref(), Some("second"));
        assert_eq!(input.last_user_id().as_deref(), Some("u2"));
        assert!(input.tools.is_empty() && input.tool_result().is_none());
    }

    #[test]
    fn tool_results_and_thread_keys() {
        let input: RunAgentInput = serde_json::from_str(
            r#"{"threadId":"t","runId":"r","messages":[{"id":"x","role":"tool","toolCallId":"tc1","content":"{\"ok\":true}"}]}"#,
        )
        .unwrap();
        assert_eq!(input.tool_result(), Some(("tc1".into(), "{\"ok\":true}".into())));
        assert_ne!(thread_key("a:1"), thread_key("a"));
        assert_eq!(thread_key("abc"), "agui:3:abc");
        let two: RunAgentInput = serde_json::from_str(
            r#"{"threadId":"t","runId":"r","protocolVersion":"1.0","messages":[{"id":"u","role":"user","content":"q"},
            {"id":"x","role":"tool","toolCallId":"a","content":"1"},{"id":"y","role":"tool","toolCallId":"b","content":"2"}]}"#,
        )
        .unwrap();
        assert_eq!(
            two.trailing_tool_results(),
            vec![("a".into(), "1".into()), ("b".into(), "2".into())]
        );
        assert_eq!(two.approval_mode(), Ok(ApprovalMode::Interrupt));
        assert!(
            input.trailing_tool_results().len() == 1 && input.approval_mode() == Ok(ApprovalMode::Stream)
        );
    }
}
