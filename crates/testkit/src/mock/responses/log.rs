//! The request log of the Responses mock: every request the CLI made, with its parsed JSON body
//! and how the mock's answer ended, plus accessors for what tests usually assert on (input items,
//! tool outputs, the `text.format` JSON schema).

use std::collections::BTreeMap;

use serde_json::Value;

/// How the mock's answer to one request ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamOutcome {
    /// Still streaming (or the request is not a `responses` call).
    Pending,
    /// `response.completed` (or `response.failed`) was written.
    Completed,
    /// The client went away before the stream ended (e.g. Codex abandoned it on `turn/steer`).
    ClientGone,
    /// The mock dropped the stream on purpose ([`super::Reply::drop_after`]).
    Dropped,
    /// An HTTP error status was answered instead of a stream.
    HttpError(u16),
    /// An unknown endpoint; answered 404.
    NotFound,
}

/// One request the CLI sent to the mock.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    /// 0-based position in the log.
    pub index: usize,
    /// HTTP method, e.g. `POST`.
    pub method: String,
    /// Path and query, e.g. `/v1/responses`.
    pub path: String,
    /// Request headers, lower-cased names (a repeated header keeps its last value).
    pub headers: BTreeMap<String, String>,
    /// The parsed JSON body, or `Value::Null` when the body was empty or not JSON.
    pub body: Value,
    /// Body bytes as text (lossy), kept for bodies that did not parse.
    pub raw_body: String,
    /// Milliseconds since the mock started when the request arrived.
    pub at_ms: u64,
    /// How the answer ended (updated while streaming).
    pub outcome: StreamOutcome,
}

impl RecordedRequest {
    /// The `input` array of a Responses request (empty if absent).
    pub fn input(&self) -> &[Value] {
        self.body
            .get("input")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// The `model` field.
    pub fn model(&self) -> Option<&str> {
        self.body.get("model").and_then(Value::as_str)
    }

    /// Texts of every `message` input item with this role, in order (content parts joined).
    pub fn texts_of_role(&self, role: &str) -> Vec<String> {
        self.input()
            .iter()
            .filter(|i| i.get("type").and_then(Value::as_str) == Some("message"))
            .filter(|i| i.get("role").and_then(Value::as_str) == Some(role))
            .map(message_text)
            .collect()
    }

    /// The text of the last `user` message in `input`.
    pub fn last_user_text(&self) -> Option<String> {
        self.texts_of_role("user").pop()
    }

    /// Every `function_call_output` / `custom_tool_call_output` as `(call_id, output text)`.
    pub fn tool_outputs(&self) -> Vec<(String, String)> {
        self.input()
            .iter()
            .filter(|i| {
                matches!(
                    i.get("type").and_then(Value::as_str),
                    Some("function_call_output" | "custom_tool_call_output")
                )
            })
            .map(|i| {
                let id = i
                    .get("call_id")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                let out = match i.get("output") {
                    Some(Value::String(s)) => s.clone(),
                    Some(other) => other.to_string(),
                    None => String::new(),
                };
                (id, out)
            })
            .collect()
    }

    /// The output text sent back for this call id, if any.
    pub fn tool_output(&self, call_id: &str) -> Option<String> {
        self.tool_outputs()
            .into_iter()
            .find(|(id, _)| id == call_id)
            .map(|(_, o)| o)
    }

    /// `text.format` when the CLI asked for structured output (`{"type":"json_schema",…}`).
    pub fn text_format(&self) -> Option<&Value> {
        self.body.get("text").and_then(|t| t.get("format"))
    }

    /// The names of the tools offered to the model (`tools[].name`, or `type` for built-ins).
    pub fn tool_names(&self) -> Vec<String> {
        self.body
            .get("tools")
            .and_then(Value::as_array)
            .map(|tools| {
                tools
                    .iter()
                    .filter_map(|t| t.get("name").or_else(|| t.get("type")).and_then(Value::as_str))
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// A compact one-line-per-item view of `input` (`type[:role]` plus a short text), for logs
    /// and recorded summaries.
    pub fn input_summary(&self) -> Vec<String> {
        self.input().iter().map(summarize_item).collect()
    }
}

/// Joins the text parts of a `message` input item.
fn message_text(item: &Value) -> String {
    match item.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

/// `type[:role] <first 80 chars>` for one input item.
fn summarize_item(item: &Value) -> String {
    let ty = item.get("type").and_then(Value::as_str).unwrap_or("?");
    let short = |s: &str| -> String {
        let one_line = s.replace('\n', "\\n");
        let mut out: String = one_line.chars().take(80).collect();
        if one_line.chars().count() > 80 {
            out.push('…');
        }
        out
    };
    match ty {
        "message" => {
            let role = item.get("role").and_then(Value::as_str).unwrap_or("?");
            format!("message:{role} {}", short(&message_text(item)))
        }
        "function_call" | "custom_tool_call" => {
            let name = item.get("name").and_then(Value::as_str).unwrap_or("?");
            let call = item.get("call_id").and_then(Value::as_str).unwrap_or("?");
            format!("{ty} {name} {call}")
        }
        "function_call_output" | "custom_tool_call_output" => {
            let call = item.get("call_id").and_then(Value::as_str).unwrap_or("?");
            let out = match item.get("output") {
                Some(Value::String(s)) => s.clone(),
                Some(v) => v.to_string(),
                None => String::new(),
            };
            format!("{ty} {call} {}", short(&out))
        }
        other => other.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn req(body: Value) -> RecordedRequest {
        RecordedRequest {
            index: 0,
            method: "POST".into(),
            path: "/v1/responses".into(),
            headers: BTreeMap::new(),
            body,
            raw_body: String::new(),
            at_ms: 0,
            outcome: StreamOutcome::Pending,
        }
    }

    #[test]
    fn accessors_read_inputs_outputs_and_format() {
        let r = req(json!({
            "model": "gpt-5.5",
            "input": [
                {"type":"message","role":"developer","content":[{"type":"input_text","text":"base"}]},
                {"type":"message","role":"user","content":[{"type":"input_text","text":"hello"}]},
                {"type":"function_call","name":"exec_command","call_id":"c1","arguments":"{}"},
                {"type":"function_call_output","call_id":"c1","output":"done\n"},
            ],
            "tools": [{"type":"function","name":"exec_command"},{"type":"web_search"}],
            "text": {"format": {"type":"json_schema","name":"codex_output_schema"}}
        }));
        assert_eq!(r.model(), Some("gpt-5.5"));
        assert_eq!(r.last_user_text().as_deref(), Some("hello"));
        assert_eq!(r.tool_output("c1").as_deref(), Some("done\n"));
        assert_eq!(r.tool_names(), vec!["exec_command", "web_search"]);
        assert_eq!(
            r.text_format().and_then(|f| f.get("name")),
            Some(&json!("codex_output_schema"))
        );
        assert_eq!(r.input_summary()[3], "function_call_output c1 done\\n");
    }
}
