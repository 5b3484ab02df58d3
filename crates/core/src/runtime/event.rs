//! The Event family: an envelope ([`EventMeta`]) numbered by the core, around a [`Payload`].
//!
//! Invariants: every admitted execution emits exactly one `RunStarted` first and one `Done` last;
//! `sequence` strictly increases within an execution in receive order; only content deltas,
//! stdout/stderr chunks and subagent deltas may be dropped, and every drop is reported by a
//! `Dropped` event.

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::approval::ApprovalRequest;
use super::error::{Error, ErrorInfo};
use super::result::{MessageState, RunResult};
use crate::driver::{
    JsonMap, MessageFailure, Notice, ProcessInfo, ProcessKind, SourceMeta, SubagentKind, SubagentUpdate,
    TextDelta, Thinking, ToolCall, ToolResult, Usage,
};

/// The envelope of every event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventMeta {
    /// SDK execution id.
    pub run_id: String,
    /// Host thread key; empty for direct Agent sends.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub thread_key: String,
    /// Strictly increasing within one execution, in receive order.
    pub sequence: u64,
    /// When the core received the event.
    pub time: DateTime<Utc>,
    /// The one-based provider turn the event belongs to (empty before the first turn).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub turn_id: String,
    /// Provider coordinates, kept apart from `sequence`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<SourceMeta>,
}

/// The execution started (core-owned; always first).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RunStarted {
    /// Execution id.
    pub run_id: String,
    /// Lifecycle thread identifier: the thread key, or the run id for direct sends.
    pub thread_id: String,
}

/// Informational end of the execution (core-owned; `Done` is authoritative).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RunFinished {
    /// Execution id.
    pub run_id: String,
    /// Lifecycle thread identifier.
    pub thread_id: String,
    /// Total usage, when observed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// True on failure.
    pub failed: bool,
    /// Failure reason (wire string), when failed.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// Failure message, when failed.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
}

/// A supplemental message changed state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageUpdate {
    /// Message id.
    pub id: String,
    /// New state.
    pub state: MessageState,
    /// The one-based turn it was delivered into; 0 when unassigned.
    #[serde(default)]
    pub turn: u32,
    /// Boundary (attempted or actual).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub boundary: String,
    /// Mechanism (attempted or actual).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub mechanism: String,
    /// Why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<MessageFailure>,
    /// The original text, on failure.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub text: String,
}

/// One provider turn ended. It does not prove persistence or cleanup succeeded.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TurnEnd {
    /// One-based turn number.
    pub turn: u32,
    /// The turn's partial result (text, usage).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Arc<RunResult>>,
    /// The turn's error, when it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorInfo>,
    /// Delivered messages associated with this turn, in admission order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub message_ids: Vec<String>,
}

/// The authoritative final event: exactly what `Stream::result` returns.
#[derive(Debug, Clone)]
pub struct Done {
    /// The outcome.
    pub outcome: Result<Arc<RunResult>, Error>,
}

/// Ordinary events were dropped under backpressure (or discarded on cancellation).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Dropped {
    /// How many events.
    pub count: u64,
    /// Counts by kind (`text.content`, `process.stdout`, …).
    pub by_kind: BTreeMap<String, u64>,
    /// First dropped sequence.
    pub first_sequence: u64,
    /// Last dropped sequence.
    pub last_sequence: u64,
    /// Why (`backpressure`, `cancelled`, `result_only`).
    pub reason: String,
    /// Which producer, when known.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub source: String,
    /// Extra details.
    #[serde(default, skip_serializing_if = "JsonMap::is_empty")]
    pub details: JsonMap,
}

/// Every event payload.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Payload {
    /// Assistant or synthesized user text.
    TextDelta(TextDelta),
    /// Reasoning.
    Thinking(Thinking),
    /// Tool call lifecycle.
    ToolCall(ToolCall),
    /// Tool result.
    ToolResult(ToolResult),
    /// Execution started.
    RunStarted(RunStarted),
    /// Execution finished (informational).
    RunFinished(RunFinished),
    /// Supplemental message state.
    MessageUpdate(MessageUpdate),
    /// Provider turn ended.
    TurnEnd(TurnEnd),
    /// Authoritative final event.
    Done(Done),
    /// Process spawn or output chunk.
    ProcessInfo(ProcessInfo),
    /// Notice.
    Notice(Notice),
    /// Drop report.
    Dropped(Dropped),
    /// A live approval request (replayed ones have no responder).
    ApprovalRequest(ApprovalRequest),
    /// Subagent progress.
    SubagentUpdate(SubagentUpdate),
}

impl Payload {
    /// True for the payloads that may be dropped under backpressure.
    pub fn is_droppable(&self) -> bool {
        match self {
            Payload::TextDelta(t) => t.phase.is_content(),
            Payload::Thinking(t) => t.phase.is_content(),
            Payload::ToolCall(t) => t.phase.is_content(),
            Payload::ProcessInfo(p) => matches!(p.kind, ProcessKind::Stdout | ProcessKind::Stderr),
            Payload::SubagentUpdate(s) => s.kind == SubagentKind::Delta,
            _ => false,
        }
    }

    /// The kind label used in drop reports and metrics.
    pub fn kind_label(&self) -> &'static str {
        match self {
            Payload::TextDelta(t) if t.phase.is_content() => "text.content",
            Payload::TextDelta(_) => "text.boundary",
            Payload::Thinking(t) if t.phase.is_content() => "thinking.content",
            Payload::Thinking(_) => "thinking.boundary",
            Payload::ToolCall(t) if t.phase.is_content() => "tool_call.args",
            Payload::ToolCall(_) => "tool_call.boundary",
            Payload::ToolResult(_) => "tool_call.result",
            Payload::RunStarted(_) => "run.started",
            Payload::RunFinished(_) => "run.finished",
            Payload::MessageUpdate(_) => "message.update",
            Payload::TurnEnd(_) => "turn.end",
            Payload::Done(_) => "done",
            Payload::ProcessInfo(p) => match p.kind {
                ProcessKind::Spawn => "process.spawn",
                ProcessKind::Stdout => "process.stdout",
                ProcessKind::Stderr => "process.stderr",
            },
            Payload::Notice(_) => "notice",
            Payload::Dropped(_) => "dropped",
            Payload::ApprovalRequest(_) => "approval.request",
            Payload::SubagentUpdate(s) if s.kind == SubagentKind::Delta => "subagent.delta",
            Payload::SubagentUpdate(_) => "subagent.update",
        }
    }

    /// The serde tag of the payload (`text_delta`, `done`, …).
    pub fn type_name(&self) -> &'static str {
        match self {
            Payload::TextDelta(_) => "text_delta",
            Payload::Thinking(_) => "thinking",
            Payload::ToolCall(_) => "tool_call",
            Payload::ToolResult(_) => "tool_result",
            Payload::RunStarted(_) => "run_started",
            Payload::RunFinished(_) => "run_finished",
            Payload::MessageUpdate(_) => "message_update",
            Payload::TurnEnd(_) => "turn_end",
            Payload::Done(_) => "done",
            Payload::ProcessInfo(_) => "process_info",
            Payload::Notice(_) => "notice",
            Payload::Dropped(_) => "dropped",
            Payload::ApprovalRequest(_) => "approval_request",
            Payload::SubagentUpdate(_) => "subagent_update",
        }
    }
}

/// One event: envelope plus payload.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Event {
    /// The envelope.
    pub meta: EventMeta,
    /// The payload.
    #[serde(flatten)]
    pub payload: Payload,
}

impl Event {
    /// The envelope.
    pub fn meta(&self) -> &EventMeta {
        &self.meta
    }

    /// The payload.
    pub fn payload(&self) -> &Payload {
        &self.payload
    }

    /// Restores replayed coordinates (live sinks overwrite them).
    pub fn with_meta(mut self, meta: EventMeta) -> Self {
        self.meta = meta;
        self
    }

    /// True for the terminal `Done`.
    pub fn is_done(&self) -> bool {
        matches!(self.payload, Payload::Done(_))
    }
}

#[derive(Serialize, Deserialize)]
struct DoneWire {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    result: Option<Arc<RunResult>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<ErrorInfo>,
}

impl Serialize for Done {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let wire = match &self.outcome {
            Ok(r) => DoneWire {
                result: Some(r.clone()),
                error: None,
            },
            Err(e) => DoneWire {
                result: None,
                error: Some(e.info()),
            },
        };
        wire.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Done {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let wire = DoneWire::deserialize(d)?;
        let outcome = match (wire.result, wire.error) {
            (_, Some(info)) => Err(Error::Replayed(info)),
            (Some(r), None) => Ok(r),
            (None, None) => return Err(serde::de::Error::custom("done carries neither result nor error")),
        };
        Ok(Done { outcome })
    }
}
