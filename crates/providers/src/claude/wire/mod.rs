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

/// Reads `type` (and `subtype`) straight from the bytes: a fast path for lines that start with
/// `{"type":"<t>"` (every frame but `result`), else one byte scan for the top-level keys. Returns None
/// when a value needs unescaping or the line is not a well-formed object; the serde probe decides then.
fn fast_probe(line: &[u8]) -> Option<Kind<'_>> {
    if let Some(rest) = line.strip_prefix(br#"{"type":""#) {
        let ty = plain_str(rest)?;
        if ty != "system" {
            return Some((Some(Cow::Borrowed(ty)), None));
        }
        let rest = rest[ty.len() + 1..].strip_prefix(br#","subtype":""#)?;
        let sub = plain_str(rest)?;
        return Some((Some(Cow::Borrowed(ty)), Some(Cow::Borrowed(sub))));
    }
    scan_top_level(line)
}

/// The string up to the closing quote, if it has no escapes.
fn plain_str(rest: &[u8]) -> Option<&str> {
    let end = rest.iter().position(|&b| b == b'"' || b == b'\\')?;
    if rest[end] != b'"' {
        return None;
    }
    std::str::from_utf8(&rest[..end]).ok()
}

/// One pass over an object line, tracking nesting and strings, picking the top-level `"type"` and
/// `"subtype"` string values. None on anything unusual (escaped values, non-string values, not an object).
fn scan_top_level(line: &[u8]) -> Option<Kind<'_>> {
    if line.first() != Some(&b'{') {
        return None;
    }
    let (mut ty, mut sub) = (None, None);
    let mut depth = 0u32;
    let mut i = 0;
    let mut expect_key = false;
    while i < line.len() {
        match line[i] {
            b'"' => {
                let start = i + 1;
                let mut j = start;
                while j < line.len() && line[j] != b'"' {
                    j += if line[j] == b'\\' { 2 } else { 1 };
                }
                if j >= line.len() {
                    return None;
                }
                if depth == 1 && expect_key {
                    let key = &line[start..j];
                    if key == b"type" || key == b"subtype" {
                        let rest = line[j + 1..].strip_prefix(b":\"")?;
                        let value = plain_str(rest)?;
                        if key == b"type" {
                            ty = Some(Cow::Borrowed(value));
                        } else {
                            sub = Some(Cow::Borrowed(value));
                        }
                        j += 2 + value.len() + 1;
                    }
                }
                expect_key = false;
                i = j + 1;
                continue;
            }
            b'{' => {
                depth += 1;
                expect_key = depth == 1;
            }
            b'[' => depth += 1,
            b'}' | b']' => depth = depth.checked_sub(1)?,
            b',' => expect_key = depth == 1,
            _ => {}
        }
        i += 1;
    }
    (depth == 0).then_some((ty, sub))
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
