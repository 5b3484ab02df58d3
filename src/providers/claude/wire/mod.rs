//! Exact serde mirror of the Claude Code 2.1.332 stream-json protocol, both directions.
//!
//! * Output (stdout): [`parse_line`] → [`Frame`]. Tolerant: an unknown `type` or `system` subtype is
//!   [`Frame::Unknown`], unknown fields are ignored, and only a line that is not JSON at all (or a known
//!   frame whose essential fields have the wrong shape) is a [`WireError`].
//! * Input (stdin): [`InputFrame`] and its constructors, serialized with [`InputFrame::to_line`].
//!
//! Facts and examples: `docs/providers/claude-wire.md`; recorded streams: `tests/fixtures/claude/`.
//! This module is pure data: no I/O, no process handling, no mapping to runtime events.

mod content;
mod control;
mod input;
mod output;

use std::borrow::Cow;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

pub use content::{
    ApiMessage, ContentBlock, Delta, MessageContent, MessageDeltaBody, ModelUsage, ModelUsageMap,
    StreamEvent, Usage,
};
pub use control::{
    CanUseTool, CancelAsyncAck, CliRequest, ControlCancelRequest, ControlRequest, ControlResponse,
    ControlResponseBody, InitializeInfo, InterruptAck,
};
pub use input::{
    InputFrame, OutgoingControlRequest, OutgoingControlResponse, PermissionResult, Priority,
    ResponseEnvelope, SdkRequest, UserInput,
};
pub use output::{
    AbandonedBlocks, ApiRetry, AssistantFrame, CommandLifecycle, Init, LifecycleState, ResultFrame, Status,
    StreamEventFrame, System, Task, ThinkingTokens, UserFrame, UserMessage,
};

/// One stdout line of the CLI.
#[derive(Debug, Clone, PartialEq)]
pub enum Frame {
    /// `system/*`.
    System(System),
    /// `stream_event` (with `--include-partial-messages`).
    StreamEvent(StreamEventFrame),
    /// `assistant`.
    Assistant(AssistantFrame),
    /// `user` (tool results, interrupt markers, replays).
    User(UserFrame),
    /// `result`.
    Result(ResultFrame),
    /// `control_request` from the CLI (must be answered).
    ControlRequest(ControlRequest),
    /// `control_response` to one of our requests.
    ControlResponse(ControlResponse),
    /// `control_cancel_request`.
    ControlCancelRequest(ControlCancelRequest),
    /// `command_lifecycle`.
    CommandLifecycle(CommandLifecycle),
    /// Valid JSON of a type or subtype this module does not know (kept whole).
    Unknown(Value),
}

/// Why a line could not be decoded.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    /// An empty or whitespace-only line.
    #[error("empty line")]
    Empty,
    /// Not JSON: CLI noise, a truncated line from a killed process, …
    #[error("not a JSON line ({prefix:?}…): {source}")]
    NotJson {
        /// The first bytes of the line, lossily decoded, for the notice.
        prefix: String,
        /// The JSON error.
        #[source]
        source: serde_json::Error,
    },
    /// A known frame type whose fields do not have the expected shape.
    #[error("malformed {frame} frame: {source}")]
    Shape {
        /// `type` (and `/subtype`).
        frame: String,
        /// The decoding error.
        #[source]
        source: serde_json::Error,
    },
}

/// The two keys that decide the frame kind.
#[derive(Deserialize)]
struct Probe<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    subtype: Option<Cow<'a, str>>,
}

/// `type` and `subtype` of a line, borrowed when possible.
type Kind<'a> = (Option<Cow<'a, str>>, Option<Cow<'a, str>>);

/// Decodes one stdout line (without or with its trailing newline).
pub fn parse_line(line: &[u8]) -> Result<Frame, WireError> {
    let line = line.trim_ascii();
    if line.is_empty() {
        return Err(WireError::Empty);
    }
    let (ty, subtype) = match fast_probe(line) {
        Some(found) => found,
        None => match serde_json::from_slice::<Probe<'_>>(line) {
            Ok(probe) => (probe.ty, probe.subtype),
            // Valid JSON that is not an object with string `type`/`subtype` (an array, `"type":3`…).
            Err(_) => return unknown(line),
        },
    };
    let Some(ty) = ty else {
        return unknown(line);
    };
    let sub = subtype.as_deref();
    let frame = match ty.as_ref() {
        "stream_event" => Frame::StreamEvent(decode(line, "stream_event")?),
        "assistant" => Frame::Assistant(decode(line, "assistant")?),
        "user" => Frame::User(decode(line, "user")?),
        "result" => Frame::Result(decode(line, "result")?),
        "command_lifecycle" => Frame::CommandLifecycle(decode(line, "command_lifecycle")?),
        "control_cancel_request" => Frame::ControlCancelRequest(decode(line, "control_cancel_request")?),
        "control_response" => Frame::ControlResponse(decode(line, "control_response")?),
        "control_request" => {
            let raw: control::RawControlRequest = decode(line, "control_request")?;
            let req = ControlRequest::try_from(raw).map_err(|source| WireError::Shape {
                frame: "control_request/can_use_tool".to_owned(),
                source,
            })?;
            Frame::ControlRequest(req)
        }
        "system" => match sub {
            Some("init") => Frame::System(System::Init(decode(line, "system/init")?)),
            Some("status") => Frame::System(System::Status(decode(line, "system/status")?)),
            Some("api_retry") => Frame::System(System::ApiRetry(decode(line, "system/api_retry")?)),
            Some("thinking_tokens") => {
                Frame::System(System::ThinkingTokens(decode(line, "system/thinking_tokens")?))
            }
            Some("task_started") => Frame::System(System::TaskStarted(decode(line, "system/task_started")?)),
            Some("task_notification") => Frame::System(System::TaskNotification(decode(
                line,
                "system/task_notification",
            )?)),
            _ => return unknown(line),
        },
        _ => return unknown(line),
    };
    Ok(frame)
}

/// Reads `type` (and `subtype`) straight from the bytes when the line starts with
/// `{"type":"<t>"` and, for `system`, continues with `,"subtype":"<s>"` — how 2.1.332 writes every
/// frame except `result`. Anything else (escapes, other key order) returns None for the full probe.
fn fast_probe(line: &[u8]) -> Option<Kind<'_>> {
    let rest = line.strip_prefix(br#"{"type":""#)?;
    let end = rest.iter().position(|&b| b == b'"' || b == b'\\')?;
    if rest[end] != b'"' {
        return None;
    }
    let ty = std::str::from_utf8(&rest[..end]).ok()?;
    if ty != "system" {
        return Some((Some(Cow::Borrowed(ty)), None));
    }
    let rest = rest[end + 1..].strip_prefix(br#","subtype":""#)?;
    let end = rest.iter().position(|&b| b == b'"' || b == b'\\')?;
    if rest[end] != b'"' {
        return None;
    }
    let sub = std::str::from_utf8(&rest[..end]).ok()?;
    Some((Some(Cow::Borrowed(ty)), Some(Cow::Borrowed(sub))))
}

fn decode<T: DeserializeOwned>(line: &[u8], frame: &str) -> Result<T, WireError> {
    serde_json::from_slice(line).map_err(|source| {
        if source.is_syntax() || source.is_eof() {
            not_json(line, source)
        } else {
            WireError::Shape {
                frame: frame.to_owned(),
                source,
            }
        }
    })
}

fn unknown(line: &[u8]) -> Result<Frame, WireError> {
    serde_json::from_slice(line)
        .map(Frame::Unknown)
        .map_err(|source| not_json(line, source))
}

fn not_json(line: &[u8], source: serde_json::Error) -> WireError {
    let prefix: String = String::from_utf8_lossy(&line[..line.len().min(80)]).into_owned();
    WireError::NotJson { prefix, source }
}

#[cfg(test)]
mod tests;
