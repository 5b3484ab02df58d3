//! The request log: every HTTP request the mock saw, with the parsed JSON body and helpers that pull
//! out what tests assert on (the prompt, tool results, the model, side-request detection).

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;

/// One request as the mock received it.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestLog {
    /// 1-based number among `POST /v1/messages` requests (main and side); 0 for any other request.
    pub n: usize,
    /// HTTP method, e.g. `POST`.
    pub method: String,
    /// Path without the query, e.g. `/v1/messages`.
    pub path: String,
    /// The raw query string, e.g. `beta=true`.
    pub query: Option<String>,
    /// Headers, names lowercased; repeated headers are joined with `, `.
    pub headers: BTreeMap<String, String>,
    /// The body parsed as JSON, when it was JSON.
    pub body: Option<Value>,
    /// The body size in bytes.
    pub body_len: usize,
    /// Time since the mock started.
    pub at: Duration,
    /// The HTTP status the mock answered (0 until answered; always set in [`super::MockAnthropic::requests`]).
    pub status: u16,
}

/// A `tool_result` block the CLI sent back to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    /// The `tool_use_id` it answers.
    pub tool_use_id: String,
    /// The content flattened to text (string content, or the text blocks joined with `\n`).
    pub content: String,
    /// `is_error`, false when absent.
    pub is_error: bool,
}

impl RequestLog {
    /// A header value by (case-insensitive) name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(&name.to_ascii_lowercase()).map(String::as_str)
    }

    /// True for `POST /v1/messages` (any query).
    pub fn is_messages(&self) -> bool {
        self.method == "POST" && self.path == "/v1/messages"
    }

    /// The `model` field of the body.
    pub fn model(&self) -> Option<&str> {
        self.body.as_ref()?.get("model")?.as_str()
    }

    /// Whether the body asked for streaming (`"stream": true`).
    pub fn is_streaming(&self) -> bool {
        self.body
            .as_ref()
            .and_then(|b| b.get("stream"))
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }

    /// A request that is not part of the conversation: the CLI's own small calls (session titles, topic
    /// detection, haiku "quota"/classifier calls). Detection: a `/v1/messages` request that carries no
    /// `tools`, or names a `haiku` model. Conversation requests always carry the CLI's tool list.
    /// Streaming is NOT a criterion: after a cut stream the CLI repeats the conversation request with
    /// `stream:false` (its non-streaming fallback), and that one must get the scripted reply.
    /// Claude Code 2.1.332 sent no side request at all in our runs, even without the `DISABLE_*` guards.
    pub fn is_side_request(&self) -> bool {
        if !self.is_messages() {
            return false;
        }
        let no_tools = self
            .body
            .as_ref()
            .and_then(|b| b.get("tools"))
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty);
        let haiku = self.model().is_some_and(|m| m.contains("haiku"));
        no_tools || haiku
    }

    /// The `messages` array (empty when absent).
    pub fn messages(&self) -> &[Value] {
        self.body
            .as_ref()
            .and_then(|b| b.get("messages"))
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice)
    }

    /// The system prompt: the string, or the text blocks joined with `\n`.
    pub fn system_text(&self) -> String {
        match self.body.as_ref().and_then(|b| b.get("system")) {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Array(blocks)) => blocks
                .iter()
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
            _ => String::new(),
        }
    }

    /// Names of the tools offered to the model.
    pub fn tool_names(&self) -> Vec<String> {
        self.body
            .as_ref()
            .and_then(|b| b.get("tools"))
            .and_then(Value::as_array)
            .map(|tools| {
                tools
                    .iter()
                    .filter_map(|t| t.get("name").and_then(Value::as_str).map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The last `role:"user"` message, if any.
    pub fn last_user_message(&self) -> Option<&Value> {
        self.messages()
            .iter()
            .rev()
            .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))
    }

    /// The text blocks of the last user message, excluding `<system-reminder>` blocks.
    pub fn last_user_texts(&self) -> Vec<String> {
        let Some(msg) = self.last_user_message() else {
            return Vec::new();
        };
        content_texts(msg.get("content"))
            .into_iter()
            .filter(|t| !t.trim_start().starts_with("<system-reminder>"))
            .collect()
    }

    /// The last text block of the last user message (the prompt the user typed, for a first turn).
    pub fn last_user_text(&self) -> Option<String> {
        self.last_user_texts().pop()
    }

    /// The `tool_result` blocks of the last user message.
    pub fn tool_results(&self) -> Vec<ToolResult> {
        let Some(Value::Array(blocks)) = self.last_user_message().and_then(|m| m.get("content")) else {
            return Vec::new();
        };
        blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
            .map(|b| ToolResult {
                tool_use_id: b
                    .get("tool_use_id")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                content: content_texts(b.get("content")).join("\n"),
                is_error: b.get("is_error").and_then(Value::as_bool).unwrap_or(false),
            })
            .collect()
    }

    /// Every text (from user and assistant messages, strings or text blocks) in order; handy to check
    /// that a resumed session carried the earlier history.
    pub fn all_texts(&self) -> Vec<String> {
        self.messages()
            .iter()
            .flat_map(|m| content_texts(m.get("content")))
            .collect()
    }
}

/// The texts of a message `content`: the string itself, or each `text` block's text.
fn content_texts(content: Option<&Value>) -> Vec<String> {
    match content {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str).map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn req(body: Value) -> RequestLog {
        RequestLog {
            n: 1,
            method: "POST".into(),
            path: "/v1/messages".into(),
            query: Some("beta=true".into()),
            headers: BTreeMap::new(),
            body: Some(body),
            body_len: 0,
            at: Duration::ZERO,
            status: 200,
        }
    }

    #[test]
    fn extracts_prompt_and_tool_results() {
        let r = req(json!({
            "model": "claude-opus-5-5", "stream": true, "tools": [{"name": "Bash"}],
            "messages": [
                {"role": "user", "content": [
                    {"type": "text", "text": "<system-reminder>x</system-reminder>"},
                    {"type": "text", "text": "say hi"}]},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t1"}]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": "out", "is_error": true},
                    {"type": "text", "text": "more"}]}
            ]
        }));
        assert!(!r.is_side_request());
        assert_eq!(r.last_user_text().as_deref(), Some("more"));
        let tr = r.tool_results();
        assert_eq!(tr.len(), 1);
        assert_eq!(tr[0].tool_use_id, "t1");
        assert_eq!(tr[0].content, "out");
        assert!(tr[0].is_error);
        assert_eq!(r.tool_names(), vec!["Bash".to_owned()]);
    }

    #[test]
    fn side_requests_are_detected() {
        assert!(
            req(json!({"model": "claude-haiku-4-5", "stream": true, "tools": [{"name": "x"}]}))
                .is_side_request()
        );
        assert!(!req(json!({"model": "m", "stream": false, "tools": [{"name": "x"}]})).is_side_request());
        assert!(req(json!({"model": "m", "stream": true, "messages": []})).is_side_request());
    }
}
