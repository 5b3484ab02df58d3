//! Cursor agent's `--print --output-format stream-json` protocol as serde types (stdout only: the prompt goes
//! on stdin as plain text), plus [`validate`]: the strict protocol rules the Go original enforces.
//!
//! Frames: `system/init`; `user` and `assistant` with `message.content[{type:"text",text}]`; `tool_call` with
//! `subtype` `started|completed`, a `call_id` and exactly one variant key under `tool_call`
//! (`shellToolCall`, `readToolCall`, `editToolCall`, `writeToolCall`, `mcpToolCall`, `taskToolCall`, …) holding
//! `args` and, when completed, `result` `{success|failure|error: …}`; and the terminal `result`.
//!
//! Tolerance: an unknown `type` is [`Frame::Unknown`]; unknown fields are ignored; unknown tool variants are
//! [`ToolKind::Other`]. Required fields are `Option`s here so the validator, not the parser, reports them.
//!
//! * `wire/tool.rs` — the `tool_call` payload: variants, typed args, result envelopes.
//! * `wire/validate.rs` — the protocol rules and their typed violations.

mod tool;
mod validate;

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use tool::{
    McpArgs, ReadArgs, ShellArgs, TaskArgs, ToolCall, ToolKind, ToolOutcome, ToolVariant, WriteArgs,
};
pub use validate::{Report, Validator, Violation, validate, validate_lines};

/// Why a line is not a frame.
#[derive(Debug, thiserror::Error)]
pub enum ParseError {
    /// Empty or whitespace only.
    #[error("empty line")]
    Empty,
    /// Not JSON.
    #[error("not JSON: {0}")]
    NotJson(#[source] serde_json::Error),
    /// JSON without a string `type`.
    #[error("JSON without a string `type`")]
    NoType,
    /// A known `type` with fields of the wrong JSON type.
    #[error("malformed `{kind}` frame: {source}")]
    Malformed {
        /// The frame's `type`.
        kind: String,
        /// What serde reported.
        #[source]
        source: serde_json::Error,
    },
}

/// One stdout line.
#[derive(Debug, Clone, PartialEq)]
pub enum Frame {
    /// `{"type":"system","subtype":"init",…}`, once, first.
    SystemInit(SystemInit),
    /// A `system` frame with another subtype, kept whole.
    SystemOther(Value),
    /// The prompt echoed back.
    User(MessageFrame),
    /// One complete assistant message (text between tool calls).
    Assistant(MessageFrame),
    /// A tool call starting or completing.
    ToolCall(ToolCallFrame),
    /// The terminal frame.
    Result(ResultFrame),
    /// Any other `type` (e.g. `thinking`), kept whole.
    Unknown(Value),
}

impl Frame {
    /// The frame's `session_id`, if present.
    pub fn session_id(&self) -> Option<&str> {
        match self {
            Frame::SystemInit(f) => f.session_id.as_deref(),
            Frame::User(f) | Frame::Assistant(f) => f.session_id.as_deref(),
            Frame::ToolCall(f) => f.session_id.as_deref(),
            Frame::Result(f) => f.session_id.as_deref(),
            Frame::SystemOther(v) | Frame::Unknown(v) => v.get("session_id").and_then(Value::as_str),
        }
    }

    /// A short name for messages: `system/init`, `tool_call/started`, …
    pub fn kind(&self) -> String {
        match self {
            Frame::SystemInit(_) => "system/init".to_owned(),
            Frame::SystemOther(v) => format!("system/{}", v["subtype"].as_str().unwrap_or("?")),
            Frame::User(_) => "user".to_owned(),
            Frame::Assistant(_) => "assistant".to_owned(),
            Frame::ToolCall(t) => format!("tool_call/{}", t.subtype),
            Frame::Result(_) => "result".to_owned(),
            Frame::Unknown(v) => v["type"].as_str().unwrap_or("?").to_owned(),
        }
    }
}

/// `system/init`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SystemInit {
    /// `env`, `flag` or `login`.
    #[serde(default, rename = "apiKeySource", skip_serializing_if = "Option::is_none")]
    pub api_key_source: Option<String>,
    /// The workspace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The chat id (also what `--resume` takes).
    #[serde(default)]
    pub session_id: Option<String>,
    /// The model's display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// `default`, …
    #[serde(default, rename = "permissionMode", skip_serializing_if = "Option::is_none")]
    pub permission_mode: Option<String>,
}

/// One `message.content` part.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContentPart {
    /// `text` (other part types are kept by name).
    #[serde(rename = "type")]
    pub kind: String,
    /// The text of a `text` part.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

/// `message` of a `user` / `assistant` frame.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// `user` or `assistant`.
    #[serde(default)]
    pub role: Option<String>,
    /// The parts.
    #[serde(default)]
    pub content: Vec<ContentPart>,
}

impl Message {
    /// The text parts concatenated without separators (how the Go original builds its output).
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter(|p| p.kind == "text")
            .filter_map(|p| p.text.as_deref())
            .collect()
    }
}

/// `user` / `assistant`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageFrame {
    /// The message.
    pub message: Message,
    /// The chat id.
    #[serde(default)]
    pub session_id: Option<String>,
}

/// `tool_call`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallFrame {
    /// `started` or `completed`.
    pub subtype: String,
    /// Pairs `started` with `completed` (may contain a newline, as in `call_X\nfc_X`).
    #[serde(default)]
    pub call_id: Option<String>,
    /// `{"<variant>": {args, result?}}`.
    #[serde(default)]
    pub tool_call: ToolCall,
    /// The chat id.
    #[serde(default)]
    pub session_id: Option<String>,
}

/// `result`: the terminal frame.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ResultFrame {
    /// `success` on success.
    #[serde(default)]
    pub subtype: Option<String>,
    /// Total time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// API time (documented as equal to `duration_ms`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_api_ms: Option<u64>,
    /// Required.
    #[serde(default)]
    pub is_error: Option<bool>,
    /// Required: the full assistant text.
    #[serde(default)]
    pub result: Option<String>,
    /// Required: the chat id.
    #[serde(default)]
    pub session_id: Option<String>,
    /// Optional request id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

impl ResultFrame {
    /// `subtype == "success"` and `is_error == false`.
    pub fn is_success(&self) -> bool {
        self.subtype.as_deref() == Some("success") && self.is_error == Some(false)
    }
}

#[derive(Deserialize)]
struct Peek<'a> {
    #[serde(borrow, rename = "type")]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    subtype: Option<Cow<'a, str>>,
}

fn typed<'a, T: Deserialize<'a>>(line: &'a str, kind: &str) -> Result<T, ParseError> {
    serde_json::from_str(line).map_err(|source| ParseError::Malformed {
        kind: kind.to_owned(),
        source,
    })
}

/// Parses one stdout line.
pub fn parse_line(line: &str) -> Result<Frame, ParseError> {
    let line = line.trim_end_matches(['\n', '\r']);
    if line.trim().is_empty() {
        return Err(ParseError::Empty);
    }
    let peek: Peek<'_> = serde_json::from_str(line).map_err(|e| {
        if e.is_data() {
            ParseError::NoType
        } else {
            ParseError::NotJson(e)
        }
    })?;
    let Some(kind) = peek.kind else {
        return Err(ParseError::NoType);
    };
    Ok(match kind.as_ref() {
        "system" if peek.subtype.as_deref() == Some("init") => Frame::SystemInit(typed(line, "system/init")?),
        "system" => Frame::SystemOther(serde_json::from_str(line).map_err(ParseError::NotJson)?),
        "user" => Frame::User(typed(line, "user")?),
        "assistant" => Frame::Assistant(typed(line, "assistant")?),
        "tool_call" => Frame::ToolCall(typed(line, "tool_call")?),
        "result" => Frame::Result(typed(line, "result")?),
        _ => Frame::Unknown(serde_json::from_str(line).map_err(ParseError::NotJson)?),
    })
}

/// Serializes a frame back to its JSON object, for writers such as the fake CLI.
pub fn to_value(frame: &Frame) -> Value {
    fn with_type<T: Serialize>(kind: &str, subtype: Option<&str>, body: &T) -> Value {
        let mut out = serde_json::Map::new();
        out.insert("type".into(), Value::String(kind.into()));
        if let Some(s) = subtype {
            out.insert("subtype".into(), Value::String(s.into()));
        }
        if let Ok(Value::Object(m)) = serde_json::to_value(body) {
            for (k, v) in m {
                out.entry(k).or_insert(v);
            }
        }
        Value::Object(out)
    }
    match frame {
        Frame::SystemInit(f) => with_type("system", Some("init"), f),
        Frame::User(f) => with_type("user", None, f),
        Frame::Assistant(f) => with_type("assistant", None, f),
        Frame::ToolCall(f) => with_type("tool_call", None, f),
        Frame::Result(f) => with_type("result", None, f),
        Frame::SystemOther(v) | Frame::Unknown(v) => v.clone(),
    }
}

/// Serializes a frame as one line the way the CLI writes it: `type` (and `subtype`) first, then the fields in
/// the documented order.
pub fn to_line(frame: &Frame) -> String {
    fn join<T: Serialize>(head: &str, body: &T) -> String {
        let body = serde_json::to_string(body).unwrap_or_else(|_| "{}".to_owned());
        match body.strip_prefix('{') {
            Some("}") | None => format!("{{{head}}}"),
            Some(rest) => format!("{{{head},{rest}"),
        }
    }
    match frame {
        Frame::SystemInit(f) => join(r#""type":"system","subtype":"init""#, f),
        Frame::User(f) => join(r#""type":"user""#, f),
        Frame::Assistant(f) => join(r#""type":"assistant""#, f),
        Frame::ToolCall(f) => join(r#""type":"tool_call""#, f),
        Frame::Result(f) => join(r#""type":"result""#, f),
        Frame::SystemOther(v) | Frame::Unknown(v) => v.to_string(),
    }
}

#[cfg(test)]
mod tests;
