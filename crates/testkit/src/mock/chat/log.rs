//! [`RequestLog`]: one entry per HTTP request the mock received, with the parsed JSON body and helpers that
//! tests assert with (roles, last user text, the `<user_query>` CodeBuddy wraps the prompt in, tool names).

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;

/// One received request.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestLog {
    /// 1-based number among the completion requests; 0 for any other request.
    pub n: usize,
    /// `GET`, `POST`, …
    pub method: String,
    /// The path without the query.
    pub path: String,
    /// The raw query string.
    pub query: Option<String>,
    /// Headers, names lower-cased; repeated headers joined with `, `.
    pub headers: BTreeMap<String, String>,
    /// The body parsed as JSON, when it is JSON.
    pub body: Option<Value>,
    /// The body length in bytes.
    pub body_len: usize,
    /// When it arrived, since the mock started.
    pub at: Duration,
    /// The status the mock answered with (0 until decided).
    pub status: u16,
}

impl RequestLog {
    /// Whether this is a `POST …/chat/completions`.
    pub fn is_completion(&self) -> bool {
        self.method == "POST" && self.path.ends_with("/chat/completions")
    }

    /// A header value by (case-insensitive) name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(&name.to_ascii_lowercase()).map(String::as_str)
    }

    /// `body.model`.
    pub fn model(&self) -> Option<&str> {
        self.body.as_ref()?.get("model")?.as_str()
    }

    /// Whether `body.stream` is true.
    pub fn is_streaming(&self) -> bool {
        self.body
            .as_ref()
            .and_then(|b| b.get("stream"))
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }

    /// `body.messages`, or an empty slice.
    pub fn messages(&self) -> &[Value] {
        self.body
            .as_ref()
            .and_then(|b| b.get("messages"))
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice)
    }

    /// The role of every message, in order.
    pub fn roles(&self) -> Vec<&str> {
        self.messages()
            .iter()
            .map(|m| m.get("role").and_then(Value::as_str).unwrap_or(""))
            .collect()
    }

    /// The role of the last message.
    pub fn last_role(&self) -> Option<&str> {
        self.messages().last()?.get("role")?.as_str()
    }

    /// The text of the last message (string content, or its text parts joined).
    pub fn last_text(&self) -> String {
        self.messages().last().map(message_text).unwrap_or_default()
    }

    /// The text of the last `user` message.
    pub fn last_user_text(&self) -> String {
        self.messages()
            .iter()
            .rev()
            .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))
            .map(message_text)
            .unwrap_or_default()
    }

    /// Every `<user_query>…</user_query>` in the conversation, in order (CodeBuddy wraps each prompt so).
    pub fn user_queries(&self) -> Vec<String> {
        self.messages()
            .iter()
            .filter(|m| m.get("role").and_then(Value::as_str) == Some("user"))
            .flat_map(|m| extract_tagged(&message_text(m), "user_query"))
            .collect()
    }

    /// The last `<user_query>` of the last user message, or its whole text when it has none.
    pub fn last_user_query(&self) -> String {
        let text = self.last_user_text();
        extract_tagged(&text, "user_query").pop().unwrap_or(text)
    }

    /// The names of the offered tools (`body.tools[].function.name`).
    pub fn tool_names(&self) -> Vec<&str> {
        self.body
            .as_ref()
            .and_then(|b| b.get("tools"))
            .and_then(Value::as_array)
            .map(|ts| {
                ts.iter()
                    .filter_map(|t| t.pointer("/function/name").and_then(Value::as_str))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The `content` of every `tool` message, in order.
    pub fn tool_results(&self) -> Vec<String> {
        self.messages()
            .iter()
            .filter(|m| m.get("role").and_then(Value::as_str) == Some("tool"))
            .map(message_text)
            .collect()
    }
}

/// The text of one message: a string content, or the `text` of its parts joined.
pub fn message_text(m: &Value) -> String {
    match m.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

fn extract_tagged(text: &str, tag: &str) -> Vec<String> {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find(&open) {
        let after = &rest[start + open.len()..];
        let Some(end) = after.find(&close) else { break };
        out.push(after[..end].to_owned());
        rest = &after[end + close.len()..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn log(body: Value) -> RequestLog {
        RequestLog {
            n: 1,
            method: "POST".into(),
            path: "/chat/completions".into(),
            query: None,
            headers: BTreeMap::from([("x-conversation-id".to_owned(), "c1".to_owned())]),
            body: Some(body),
            body_len: 0,
            at: Duration::ZERO,
            status: 0,
        }
    }

    #[test]
    fn helpers_read_codebuddy_shaped_bodies() {
        let l = log(json!({"model": "default-model", "stream": true, "messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": [{"type": "text", "text": "<system-reminder>x</system-reminder>"},
                                          {"type": "text", "text": "<user_query>first</user_query>"}]},
            {"role": "assistant", "content": "ok"},
            {"role": "tool", "tool_call_id": "c", "content": "Stdout: hi"},
            {"role": "user", "content": "<user_query>second</user_query>"}],
            "tools": [{"type": "function", "function": {"name": "Bash"}}]}));
        assert!(l.is_completion() && l.is_streaming());
        assert_eq!(l.model(), Some("default-model"));
        assert_eq!(l.roles(), ["system", "user", "assistant", "tool", "user"]);
        assert_eq!(l.user_queries(), ["first", "second"]);
        assert_eq!(l.last_user_query(), "second");
        assert_eq!(l.tool_names(), ["Bash"]);
        assert_eq!(l.tool_results(), ["Stdout: hi"]);
        assert_eq!(l.header("X-Conversation-ID"), Some("c1"));
    }
}
