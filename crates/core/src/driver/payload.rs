//! The event payloads a Driver may emit, and the transcript and usage vocabulary it reports.
//!
//! These are plain data. The runtime wraps them in an `Event` with an envelope (`EventMeta`) that
//! the core — never the driver — numbers and timestamps.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A JSON object, as carried by tool arguments, results and notice data.
pub type JsonMap = serde_json::Map<String, Value>;

/// Who authored a text message. Drivers only ever emit [`Role::Assistant`]; hosts and bridges
/// synthesize [`Role::User`] when they replay a user turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The assistant (the zero value).
    #[default]
    Assistant,
    /// A user turn synthesized by a host or bridge.
    User,
}

impl Role {
    /// True for the zero value; used to skip the field when serializing.
    pub fn is_assistant(&self) -> bool {
        matches!(self, Role::Assistant)
    }
}

/// The lifecycle phase of a streamed text, thinking or tool-call item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// A content chunk (the zero value). Only content chunks may ever be dropped under backpressure.
    #[default]
    Content,
    /// The item opens; content fields are empty.
    Start,
    /// The item closes; content fields are empty.
    End,
}

impl Phase {
    /// True for [`Phase::Content`].
    pub fn is_content(&self) -> bool {
        matches!(self, Phase::Content)
    }
}

/// Assistant (or synthesized user) text.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TextDelta {
    /// Groups the chunks of one message.
    pub message_id: String,
    /// The chunk; empty on start/end.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub text: String,
    /// Author of the message.
    #[serde(default, skip_serializing_if = "Role::is_assistant")]
    pub role: Role,
    /// Lifecycle phase.
    #[serde(default, skip_serializing_if = "Phase::is_content")]
    pub phase: Phase,
}

/// Model reasoning ("thinking") text.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Thinking {
    /// Groups the chunks of one reasoning block.
    pub message_id: String,
    /// The chunk; empty on start/end.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub text: String,
    /// Lifecycle phase.
    #[serde(default, skip_serializing_if = "Phase::is_content")]
    pub phase: Phase,
}

/// A tool call made by the model: start (name, maybe args), argument deltas, end (maybe result).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ToolCall {
    /// The tool call id.
    pub id: String,
    /// Tool name (set on start).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Complete arguments, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<JsonMap>,
    /// A streamed argument fragment (content phase).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub args_delta: String,
    /// A result carried on the end marker, when the provider reports it there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<JsonMap>,
    /// Lifecycle phase.
    #[serde(default, skip_serializing_if = "Phase::is_content")]
    pub phase: Phase,
}

/// The result of a tool call.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ToolResult {
    /// The tool call id this result belongs to.
    pub id: String,
    /// The result object (`text`, `is_error`, provider fields…).
    pub result: JsonMap,
}

/// Kinds of [`ProcessInfo`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProcessKind {
    /// A provider process was started (metadata: pid, argv with secrets redacted).
    Spawn,
    /// A chunk of raw stdout. May be dropped under backpressure.
    Stdout,
    /// A chunk of raw stderr. May be dropped under backpressure.
    Stderr,
}

/// Provider process information: spawn notices and raw output chunks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcessInfo {
    /// What happened.
    pub kind: ProcessKind,
    /// Human-readable text (for chunks: the chunk as lossy UTF-8).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub text: String,
    /// Raw bytes, when the chunk is not valid UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<Vec<u8>>,
    /// String metadata (pid, command…).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metadata: BTreeMap<String, String>,
    /// Structured data.
    #[serde(default, skip_serializing_if = "JsonMap::is_empty")]
    pub data: JsonMap,
}

/// Well-known notice kinds (spec §6.3). Unknown kinds pass through verbatim.
pub mod notice_kind {
    /// Resolved invocation information.
    pub const INVOCATION: &str = "invocation";
    /// Lifecycle and diagnostics; see `metadata["code"]` and `data["warning"]`.
    pub const LIFECYCLE: &str = "lifecycle";
    /// Runtime service preparation and cleanup.
    pub const RUNTIME: &str = "runtime";
    /// A provider work step; `data["phase"]` is `started` or `finished`.
    pub const STEP: &str = "step";
    /// A progressive normalized transcript item in `item`.
    pub const TRANSCRIPT_ITEM: &str = "transcript.item";
    /// An approval was requested (audit).
    pub const APPROVAL_REQUESTED: &str = "approval.requested";
    /// An approval was resolved, by a human, a policy or a timeout (audit).
    pub const APPROVAL_RESOLVED: &str = "approval.resolved";
    /// The turn limit is near: wrap-up requested.
    pub const LIMIT_APPROACHING: &str = "limit.approaching";
    /// Configuration drift or a resume rejection started a fresh session.
    pub const THREAD_CONTINUITY: &str = "thread.continuity";
    /// A store failure; the newest checkpoint is retained in process for retry.
    pub const THREAD_PERSISTENCE: &str = "thread.persistence";
    /// A Standby ownership-release failure.
    pub const THREAD_OWNERSHIP: &str = "thread.ownership";
    /// A provider frame the parser did not recognize (passed through, never fatal).
    pub const PROVIDER_UNKNOWN: &str = "provider.unknown";
    /// A provider line that could not be parsed (reported, reading continues).
    pub const PROVIDER_INVALID: &str = "provider.invalid";
    /// A provider-side retry (e.g. an API retry after an overload).
    pub const PROVIDER_RETRY: &str = "provider.retry";
    /// The usage of the turn in progress so far (`data`: `input_tokens`, `output_tokens`,
    /// `cached_input_tokens`), from drivers whose CLI streams it before the turn ends; the turn's
    /// `TurnEnd` usage supersedes it. Metering and budgets read it to stop a run mid-turn.
    pub const USAGE: &str = "usage";
}

impl Usage {
    /// The `usage` notice of a turn's usage so far ([`notice_kind::USAGE`]).
    pub fn progress_notice(&self) -> Notice {
        Notice::new(notice_kind::USAGE, "")
            .with_data("input_tokens", self.input_tokens)
            .with_data("output_tokens", self.output_tokens)
            .with_data("cached_input_tokens", self.cached_input_tokens)
    }

    /// The usage a [`notice_kind::USAGE`] notice reports (`None` for any other notice).
    pub fn from_progress_notice(n: &Notice) -> Option<Usage> {
        if n.kind != notice_kind::USAGE {
            return None;
        }
        let count = |k: &str| n.data.get(k).and_then(Value::as_u64).unwrap_or(0);
        Some(Usage {
            input_tokens: count("input_tokens"),
            output_tokens: count("output_tokens"),
            cached_input_tokens: count("cached_input_tokens"),
            estimated_cost_milli: 0,
        })
    }
}

/// An informational or diagnostic event. Kinds are open-ended strings (see [`notice_kind`]).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Notice {
    /// The notice kind.
    pub kind: String,
    /// Human-readable text.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub text: String,
    /// A normalized transcript item (for `transcript.item`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item: Option<Box<TranscriptItem>>,
    /// String metadata; `code` carries a machine code where one exists.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metadata: BTreeMap<String, String>,
    /// Structured data.
    #[serde(default, skip_serializing_if = "JsonMap::is_empty")]
    pub data: JsonMap,
}

impl Notice {
    /// A notice of `kind` with `text`.
    pub fn new(kind: impl Into<String>, text: impl Into<String>) -> Self {
        Notice {
            kind: kind.into(),
            text: text.into(),
            ..Default::default()
        }
    }

    /// Adds a data field.
    pub fn with_data(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.data.insert(key.to_owned(), value.into());
        self
    }

    /// Adds a metadata field.
    pub fn with_meta(mut self, key: &str, value: impl Into<String>) -> Self {
        self.metadata.insert(key.to_owned(), value.into());
        self
    }
}

/// Kinds of [`SubagentUpdate`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SubagentKind {
    /// A subagent/task started.
    #[default]
    Started,
    /// A streamed fragment. May be dropped under backpressure.
    Delta,
    /// A complete message from the subagent.
    Message,
    /// A state change.
    State,
    /// The subagent finished.
    Finished,
}

/// Progress of a subagent or delegated task.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SubagentUpdate {
    /// Task identifier.
    pub task: String,
    /// Member (agent) name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub member: String,
    /// State label.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub state: String,
    /// Short summary.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub summary: String,
    /// What kind of update this is.
    pub kind: SubagentKind,
    /// A streamed fragment (for [`SubagentKind::Delta`]).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub delta: String,
    /// Structured data.
    #[serde(default, skip_serializing_if = "JsonMap::is_empty")]
    pub data: JsonMap,
}

/// Token usage. `None` at the use site means "not observed"; a zero value means "observed zero".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Usage {
    /// Input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Input tokens served from cache.
    #[serde(default)]
    pub cached_input_tokens: u64,
    /// Estimated cost in thousandths of a currency unit (USD millis), when reported.
    #[serde(default)]
    pub estimated_cost_milli: i64,
}

impl Usage {
    /// Field-wise sum, saturating (the counts come from a CLI and may be anything).
    pub fn add(&self, other: &Usage) -> Usage {
        Usage {
            input_tokens: self.input_tokens.saturating_add(other.input_tokens),
            output_tokens: self.output_tokens.saturating_add(other.output_tokens),
            cached_input_tokens: self.cached_input_tokens.saturating_add(other.cached_input_tokens),
            estimated_cost_milli: self
                .estimated_cost_milli
                .saturating_add(other.estimated_cost_milli),
        }
    }

    /// Input plus output tokens, saturating (the counts come from a CLI and may be anything).
    pub fn tokens(&self) -> u64 {
        self.input_tokens.saturating_add(self.output_tokens)
    }

    /// Sums two optional usages: `None` only when both are unobserved.
    pub fn sum(a: Option<Usage>, b: Option<Usage>) -> Option<Usage> {
        match (a, b) {
            (None, None) => None,
            (Some(x), None) | (None, Some(x)) => Some(x),
            (Some(x), Some(y)) => Some(x.add(&y)),
        }
    }
}

/// Kinds of transcript items.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TranscriptKind {
    /// Session initialization.
    Init,
    /// User input as the provider recorded it.
    User,
    /// Assistant text.
    Assistant,
    /// Reasoning text.
    Thinking,
    /// A tool call.
    ToolCall,
    /// A tool result.
    ToolResult,
    /// A system/provider message.
    System,
    /// The provider's terminal result.
    Result,
    /// An error reported by the provider.
    Error,
    /// A supplemental message delivered by the core.
    Message,
    /// Anything else, by provider name.
    Other(String),
}

/// A supplemental message as delivered (core-appended transcript entries of kind `message`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TranscriptMessage {
    /// Message id.
    pub id: String,
    /// Author.
    pub from: crate::driver::messages::Author,
    /// How it was delivered (e.g. `stdin`, `steer`, `resume`).
    pub mechanism: String,
    /// The boundary it was delivered at.
    pub boundary: String,
    /// The original text.
    pub text: String,
}

/// A normalized entry of the provider transcript. Driver-emitted transcript notices mirror
/// `Response::transcript` exactly (same items, same order).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TranscriptItem {
    /// What the item is.
    pub kind: TranscriptKind,
    /// Text content.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub text: String,
    /// True for a streamed fragment (assistant/thinking only).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub delta: bool,
    /// Tool use id (tool calls and results).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub tool_use_id: String,
    /// Tool name (tool calls).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub tool_name: String,
    /// Tool input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Value>,
    /// True when a tool result or the terminal is an error.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    /// Model identity.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub model: String,
    /// Provider session id.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub session_id: String,
    /// Usage reported with the item.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Cost in USD reported with the item.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// Provider subtype.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub subtype: String,
    /// Error messages.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
    /// String metadata.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metadata: BTreeMap<String, String>,
    /// Structured data.
    #[serde(default, skip_serializing_if = "JsonMap::is_empty")]
    pub data: JsonMap,
    /// For core-appended supplemental deliveries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<TranscriptMessage>,
}

impl TranscriptItem {
    /// An item of `kind` with `text` and everything else empty.
    pub fn new(kind: TranscriptKind, text: impl Into<String>) -> Self {
        TranscriptItem {
            kind,
            text: text.into(),
            delta: false,
            tool_use_id: String::new(),
            tool_name: String::new(),
            input: None,
            is_error: false,
            model: String::new(),
            session_id: String::new(),
            usage: None,
            cost_usd: None,
            subtype: String::new(),
            errors: Vec::new(),
            metadata: BTreeMap::new(),
            data: JsonMap::new(),
            message: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Usage;

    /// A CLI controls the counts it reports: sums saturate instead of overflowing (the fuzzer found a
    /// Claude stream whose streamed usage summed past `u64::MAX` and panicked the translator).
    #[test]
    fn usage_sums_saturate_instead_of_overflowing() {
        let huge = Usage {
            input_tokens: u64::MAX,
            output_tokens: u64::MAX - 1,
            cached_input_tokens: u64::MAX,
            estimated_cost_milli: i64::MAX,
        };
        let one = Usage {
            input_tokens: 1,
            output_tokens: 5,
            cached_input_tokens: 1,
            estimated_cost_milli: 1,
        };
        let sum = huge.add(&one);
        assert_eq!(sum.input_tokens, u64::MAX);
        assert_eq!(sum.output_tokens, u64::MAX);
        assert_eq!(sum.cached_input_tokens, u64::MAX);
        assert_eq!(sum.estimated_cost_milli, i64::MAX);
        assert_eq!(huge.tokens(), u64::MAX);
        assert_eq!(one.tokens(), 6);
    }
}
