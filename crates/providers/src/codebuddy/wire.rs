//! CodeBuddy Code's stream-json protocol (verified on 2.117.0), as serde types, both directions.
//!
//! The CLI writes one JSON object per line on stdout ([`Frame`], parsed by [`parse_line`]); in the control
//! transport the host writes [`InputFrame`]s on stdin. The shapes resemble Claude Code's but are CodeBuddy's
//! own: extra `__timestamp` / `_requestId` fields, `file-history-snapshot` and `error` lines, and a different
//! `can_use_tool` answer (see [`PermissionResponse`]). Nothing here is shared with another provider.
//!
//! Tolerance: an unknown `type` becomes [`Frame::Unknown`] with the whole object; unknown fields are ignored;
//! unknown subtypes, events, deltas and content blocks have `Other` variants. Only a line that is not a JSON
//! object, or a known type with a broken shape, is a [`ParseError`].
//!
//! * `wire/content.rs` — message content blocks and the `stream_event` payloads.
//! * `wire/control.rs` — control requests and responses, and the frames the host writes.

mod content;
mod control;

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use content::{
    ContentBlock, Delta, MessageDeltaBody, StreamEvent, StreamMessage, ToolResultContent, UserContent,
};
pub use control::{
    CanUseTool, ControlRequest, ControlRequestBody, ControlResponse, ControlResponseBody, HookCallback,
    INITIALIZE_REQUEST_ID, InitializeRequest, InitializeResponse, InputFrame, InterruptRequest,
    InterruptResponse, ModelInfo, PermissionResponse, RequestKind, SetModel, SetPermissionMode, UserInput,
    UserInputMessage,
};

/// Why a line is not a frame.
#[derive(Debug, thiserror::Error)]
pub enum ParseError {
    /// The line is empty or only whitespace.
    #[error("empty line")]
    Empty,
    /// The line is not JSON (the CLI printed something else on stdout).
    #[error("not JSON: {0}")]
    NotJson(#[source] serde_json::Error),
    /// Valid JSON, but not an object with a string `type`.
    #[error("JSON without a string `type`")]
    NoType,
    /// A known `type` whose fields do not have the expected shape.
    #[error("malformed `{kind}` frame: {source}")]
    Malformed {
        /// The frame's `type` (and subtype, for `system`).
        kind: String,
        /// What serde reported.
        #[source]
        source: serde_json::Error,
    },
}

/// One line the CLI writes on stdout.
#[derive(Debug, Clone, PartialEq)]
pub enum Frame {
    /// `{"type":"system","subtype":"init",…}`: the session's first frame (per turn in the control transport).
    SystemInit(SystemInit),
    /// `{"type":"system","subtype":"status","status":null}`: a status change (always `null` so far).
    SystemStatus(SystemStatus),
    /// A `system` frame with another subtype, kept whole.
    SystemOther(Value),
    /// `{"type":"stream_event","event":{…}}` (with `--include-partial-messages`).
    StreamEvent(StreamEventFrame),
    /// A complete assistant message (one per content block).
    Assistant(AssistantFrame),
    /// A user message echoed by the CLI: tool results.
    User(UserFrame),
    /// The end of a turn.
    Result(ResultFrame),
    /// `{"type":"file-history-snapshot",…}`: the CLI's file checkpoint bookkeeping.
    FileHistorySnapshot(FileHistorySnapshot),
    /// `{"type":"error","error":"…"}`: e.g. `--resume` with an unknown id (the process still exits 0).
    Error(ErrorFrame),
    /// A control request from the CLI (`can_use_tool`, …).
    ControlRequest(ControlRequest),
    /// A control response from the CLI (to `initialize`, `interrupt`, …).
    ControlResponse(ControlResponse),
    /// Any other `type`, kept whole.
    Unknown(Value),
}

impl Frame {
    /// The `session_id` the frame carries, if any (control frames and `error` carry none).
    pub fn session_id(&self) -> Option<&str> {
        match self {
            Frame::SystemInit(f) => Some(&f.session_id),
            Frame::SystemStatus(f) => f.session_id.as_deref(),
            Frame::StreamEvent(f) => f.session_id.as_deref(),
            Frame::Assistant(f) => f.session_id.as_deref(),
            Frame::User(f) => f.session_id.as_deref(),
            Frame::Result(f) => Some(&f.session_id),
            Frame::SystemOther(v) | Frame::Unknown(v) => v.get("session_id").and_then(Value::as_str),
            _ => None,
        }
    }

    /// Whether the frame ends a turn (`result`).
    pub fn is_terminal(&self) -> bool {
        matches!(self, Frame::Result(_))
    }
}

/// Token counts, as the CLI reports them (Anthropic-shaped; cache counts may be `null`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens.
    #[serde(default)]
    pub input_tokens: u64,
    /// Completion tokens.
    #[serde(default)]
    pub output_tokens: u64,
    /// Tokens written to the prompt cache.
    #[serde(default)]
    pub cache_creation_input_tokens: Option<u64>,
    /// Tokens read from the prompt cache.
    #[serde(default)]
    pub cache_read_input_tokens: Option<u64>,
}

/// `system/init`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemInit {
    /// The session (equal to `uuid` on this frame).
    pub session_id: String,
    /// The frame id.
    #[serde(default)]
    pub uuid: Option<String>,
    /// Where the key came from (`www.codebuddy.ai` even with `CODEBUDDY_API_KEY`).
    #[serde(default, rename = "apiKeySource")]
    pub api_key_source: Option<String>,
    /// The working directory.
    #[serde(default)]
    pub cwd: Option<String>,
    /// Tool names the session knows.
    #[serde(default)]
    pub tools: Vec<String>,
    /// MCP servers and their state.
    #[serde(default)]
    pub mcp_servers: Vec<Value>,
    /// The model id (`default-model` unless `--model`).
    #[serde(default)]
    pub model: Option<String>,
    /// `default`, `acceptEdits`, `plan`, `bypassPermissions`, …
    #[serde(default, rename = "permissionMode")]
    pub permission_mode: Option<String>,
    /// Slash commands, without the slash.
    #[serde(default)]
    pub slash_commands: Vec<String>,
    /// The output style.
    #[serde(default)]
    pub output_style: Option<String>,
    /// ISO-8601 write time.
    #[serde(default, rename = "__timestamp")]
    pub timestamp: Option<String>,
    /// The CLI's request id for this turn.
    #[serde(default, rename = "_requestId")]
    pub request_id: Option<String>,
}

/// `system/status`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemStatus {
    /// The status; `null` in every recording.
    #[serde(default)]
    pub status: Option<Value>,
    /// The session.
    #[serde(default)]
    pub session_id: Option<String>,
    /// The frame id.
    #[serde(default)]
    pub uuid: Option<String>,
}

/// `stream_event`: one Anthropic-style streaming event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamEventFrame {
    /// The event.
    pub event: StreamEvent,
    /// The session.
    #[serde(default)]
    pub session_id: Option<String>,
    /// Set inside a subagent.
    #[serde(default)]
    pub parent_tool_use_id: Option<String>,
    /// The frame id.
    #[serde(default)]
    pub uuid: Option<String>,
}

/// An assistant message as the CLI stores it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AssistantMessage {
    /// The completion id (`chatcmpl-…`), or a fresh uuid for synthesized messages (thinking, errors,
    /// "Interrupted by user").
    pub id: String,
    /// Usually exactly one block.
    #[serde(default)]
    pub content: Vec<ContentBlock>,
    /// The model that answered (`default-model` for synthesized messages).
    #[serde(default)]
    pub model: Option<String>,
    /// `tool_use` on a tool call, otherwise `null`.
    #[serde(default)]
    pub stop_reason: Option<String>,
    /// Token counts.
    #[serde(default)]
    pub usage: Option<Usage>,
}

/// `assistant`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AssistantFrame {
    /// The message.
    pub message: AssistantMessage,
    /// The session.
    #[serde(default)]
    pub session_id: Option<String>,
    /// Set inside a subagent.
    #[serde(default)]
    pub parent_tool_use_id: Option<String>,
    /// The frame id (equal to `message.id` here).
    #[serde(default)]
    pub uuid: Option<String>,
}

/// The message of a `user` frame.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserMessage {
    /// `user`.
    #[serde(default)]
    pub role: Option<String>,
    /// A string or blocks (tool results).
    pub content: UserContent,
}

/// `user`: tool results the CLI produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserFrame {
    /// The message.
    pub message: UserMessage,
    /// The session.
    #[serde(default)]
    pub session_id: Option<String>,
    /// The tool_use this result belongs to (set on tool results).
    #[serde(default)]
    pub parent_tool_use_id: Option<String>,
    /// The frame id.
    #[serde(default)]
    pub uuid: Option<String>,
}

/// A tool call the permission layer refused, as listed in `result.permission_denials`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PermissionDenial {
    /// The tool.
    pub tool_name: String,
    /// The call.
    pub tool_use_id: String,
    /// Its input.
    #[serde(default)]
    pub tool_input: Value,
}

/// `result`: the end of a turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultFrame {
    /// `success`, `error_during_execution`, … (kept as the wire string).
    pub subtype: String,
    /// Whether the turn failed.
    pub is_error: bool,
    /// The final text; absent on errors, `""` after an interrupt.
    #[serde(default)]
    pub result: Option<String>,
    /// The session.
    pub session_id: String,
    /// The frame id.
    #[serde(default)]
    pub uuid: Option<String>,
    /// Wall time of the turn.
    #[serde(default)]
    pub duration_ms: Option<u64>,
    /// Time spent in model calls (cumulative over the process in the control transport).
    #[serde(default)]
    pub duration_api_ms: Option<u64>,
    /// Messages in the turn, counted the CLI's way.
    #[serde(default)]
    pub num_turns: Option<u64>,
    /// Always 0 against the mock.
    #[serde(default)]
    pub total_cost_usd: Option<f64>,
    /// Token counts of the turn.
    #[serde(default)]
    pub usage: Option<Usage>,
    /// Refused tool calls.
    #[serde(default)]
    pub permission_denials: Vec<PermissionDenial>,
    /// Error texts (on `error_during_execution`), e.g. `"500 mock: internal error (…)"`.
    #[serde(default)]
    pub errors: Vec<String>,
    /// The validated object with `--json-schema`.
    #[serde(default)]
    pub structured_output: Option<Value>,
}

impl ResultFrame {
    /// `subtype == "success"` and not `is_error`.
    pub fn is_success(&self) -> bool {
        self.subtype == "success" && !self.is_error
    }
}

/// `file-history-snapshot`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileHistorySnapshot {
    /// The snapshot id.
    #[serde(default)]
    pub id: Option<String>,
    /// Milliseconds since the epoch.
    #[serde(default)]
    pub timestamp: Option<u64>,
    /// Whether it updates an earlier snapshot.
    #[serde(default, rename = "isSnapshotUpdate")]
    pub is_snapshot_update: bool,
    /// `{messageId, trackedFileBackups}`.
    #[serde(default)]
    pub snapshot: Value,
}

/// `{"type":"error","error":"…"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorFrame {
    /// The message.
    pub error: String,
}

/// The prefix of the `error` line for an unknown `--resume` id.
pub const UNKNOWN_SESSION_PREFIX: &str = "No conversation found with session ID: ";

impl ErrorFrame {
    /// The id, when this is the "unknown `--resume` id" error.
    pub fn unknown_session(&self) -> Option<&str> {
        self.error.strip_prefix(UNKNOWN_SESSION_PREFIX)
    }
}

/// Just enough to route a line: its `type` and `subtype`.
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

fn whole(line: &str) -> Result<Value, ParseError> {
    serde_json::from_str(line).map_err(ParseError::NotJson)
}

/// The CLI always writes `{"type":"…"` first (and `,"subtype":"…"` next when there is one), so the route is
/// usually read from the prefix without scanning the line; anything else falls back to [`Peek`].
fn fast_route(line: &str) -> Option<(&str, Option<&str>)> {
    fn quoted(s: &str) -> Option<(&str, &str)> {
        let end = s.find(['"', '\\'])?;
        (s.as_bytes()[end] == b'"').then(|| (&s[..end], &s[end + 1..]))
    }
    let (kind, rest) = quoted(line.strip_prefix(r#"{"type":""#)?)?;
    let subtype = rest
        .strip_prefix(r#","subtype":""#)
        .and_then(quoted)
        .map(|(s, _)| s);
    Some((kind, subtype))
}

/// Parses one stdout line (without or with its trailing newline).
pub fn parse_line(line: &str) -> Result<Frame, ParseError> {
    let line = line.trim_end_matches(['\n', '\r']);
    if line.trim().is_empty() {
        return Err(ParseError::Empty);
    }
    let peek = match fast_route(line) {
        Some((kind, subtype)) => Peek {
            kind: Some(Cow::Borrowed(kind)),
            subtype: subtype.map(Cow::Borrowed),
        },
        None => serde_json::from_str::<Peek<'_>>(line).map_err(|e| {
            if e.is_data() {
                // JSON, but not an object (e.g. an array or a number).
                ParseError::NoType
            } else {
                ParseError::NotJson(e)
            }
        })?,
    };
    let Some(kind) = peek.kind else {
        return Err(ParseError::NoType);
    };
    Ok(match kind.as_ref() {
        "system" => match peek.subtype.as_deref() {
            Some("init") => Frame::SystemInit(typed(line, "system/init")?),
            Some("status") => Frame::SystemStatus(typed(line, "system/status")?),
            _ => Frame::SystemOther(whole(line)?),
        },
        "stream_event" => Frame::StreamEvent(typed(line, "stream_event")?),
        "assistant" => Frame::Assistant(typed(line, "assistant")?),
        "user" => Frame::User(typed(line, "user")?),
        "result" => Frame::Result(typed(line, "result")?),
        "file-history-snapshot" => Frame::FileHistorySnapshot(typed(line, "file-history-snapshot")?),
        "error" => Frame::Error(typed(line, "error")?),
        "control_request" => Frame::ControlRequest(typed(line, "control_request")?),
        "control_response" => Frame::ControlResponse(typed(line, "control_response")?),
        _ => Frame::Unknown(whole(line)?),
    })
}

/// What `--print --output-format json` prints: one (pretty-printed) JSON array of history items — `message`,
/// `function_call`, `function_call_result`, `file-history-snapshot`, … in a Responses-like shape — ending with
/// the `result` object (which carries `structured_output` with `--json-schema`).
#[derive(Debug, Clone, PartialEq)]
pub struct JsonOutput {
    /// Every item before the result, untyped.
    pub items: Vec<Value>,
    /// The final result.
    pub result: ResultFrame,
}

/// Parses the whole stdout of `--output-format json`.
pub fn parse_json_output(text: &str) -> Result<JsonOutput, ParseError> {
    let mut items: Vec<Value> = serde_json::from_str(text).map_err(ParseError::NotJson)?;
    let last = items.pop().ok_or(ParseError::NoType)?;
    if last.get("type").and_then(Value::as_str) != Some("result") {
        return Err(ParseError::NoType);
    }
    let result = serde_json::from_value(last).map_err(|source| ParseError::Malformed {
        kind: "result".to_owned(),
        source,
    })?;
    Ok(JsonOutput { items, result })
}

#[cfg(test)]
mod tests;
