//! The event sink: how a Driver publishes what happens during an invocation.
//!
//! Drivers never number or timestamp events; the core does, in receive order. Content deltas,
//! stdout/stderr chunks and subagent deltas may be dropped under backpressure (and the drop is
//! always reported); everything else is reliable.

use std::fmt;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::payload::{
    Notice, ProcessInfo, ProcessKind, SubagentKind, SubagentUpdate, TextDelta, Thinking, ToolCall,
    ToolResult, TranscriptItem, Usage,
};

/// Provider coordinates of an event, kept apart from the SDK's own sequence.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SourceMeta {
    /// Provider run id.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub run_id: String,
    /// Provider thread/session id.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub thread_id: String,
    /// Provider turn id.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub turn_id: String,
    /// Provider sequence number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequence: Option<u64>,
    /// Provider timestamp.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<DateTime<Utc>>,
}

/// The end of one provider turn, as the driver observed it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TurnReport {
    /// The turn's final assistant text.
    pub text: String,
    /// The turn's usage, when observed.
    pub usage: Option<Usage>,
    /// A turn-level error message, when the turn failed.
    pub error: Option<String>,
}

/// What a driver can publish.
#[derive(Debug, Clone, PartialEq)]
pub enum DriverEvent {
    /// Assistant text.
    TextDelta(TextDelta),
    /// Reasoning.
    Thinking(Thinking),
    /// A tool call lifecycle step.
    ToolCall(ToolCall),
    /// A tool result.
    ToolResult(ToolResult),
    /// Process spawn or output chunk.
    ProcessInfo(ProcessInfo),
    /// A notice (including `transcript.item`).
    Notice(Notice),
    /// Subagent progress.
    SubagentUpdate(SubagentUpdate),
    /// A provider turn ended (the core numbers it and emits `TurnEnd`).
    TurnCompleted(TurnReport),
}

impl DriverEvent {
    /// True for the events the core may drop under backpressure.
    pub fn is_droppable(&self) -> bool {
        match self {
            DriverEvent::TextDelta(t) => t.phase.is_content(),
            DriverEvent::Thinking(t) => t.phase.is_content(),
            DriverEvent::ToolCall(t) => t.phase.is_content(),
            DriverEvent::ProcessInfo(p) => matches!(p.kind, ProcessKind::Stdout | ProcessKind::Stderr),
            DriverEvent::SubagentUpdate(s) => s.kind == SubagentKind::Delta,
            _ => false,
        }
    }

    /// A transcript notice mirroring `item`.
    pub fn transcript(item: TranscriptItem) -> Self {
        DriverEvent::Notice(Notice {
            kind: super::payload::notice_kind::TRANSCRIPT_ITEM.into(),
            item: Some(Box::new(item)),
            ..Default::default()
        })
    }
}

/// An event that has to wait for capacity.
pub type Pending = (DriverEvent, Option<SourceMeta>);

/// What the core implements behind an [`EventSink`].
#[async_trait::async_trait]
pub trait SinkBackend: Send + Sync {
    /// Publishes without waiting when possible. Returns the event back (boxed: this is the slow
    /// path) when the caller must wait for capacity (blocking mode with a full buffer).
    fn try_publish(&self, event: DriverEvent, source: Option<SourceMeta>) -> Result<(), Box<Pending>>;

    /// Publishes, waiting for capacity when the mode requires it.
    async fn publish(&self, event: DriverEvent, source: Option<SourceMeta>);
}

/// The Driver's handle for publishing events. Cheap to clone.
#[derive(Clone)]
pub struct EventSink {
    backend: Arc<dyn SinkBackend>,
}

impl fmt::Debug for EventSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("EventSink")
    }
}

impl EventSink {
    /// Wraps a backend.
    pub fn new(backend: Arc<dyn SinkBackend>) -> Self {
        EventSink { backend }
    }

    /// Publishes an event.
    pub async fn emit(&self, event: DriverEvent) {
        if let Err(pending) = self.backend.try_publish(event, None) {
            let (event, source) = *pending;
            self.backend.publish(event, source).await;
        }
    }

    /// Publishes an event with provider coordinates.
    pub async fn emit_sourced(&self, event: DriverEvent, source: SourceMeta) {
        if let Err(pending) = self.backend.try_publish(event, Some(source)) {
            let (event, source) = *pending;
            self.backend.publish(event, source).await;
        }
    }

    /// Publishes a notice.
    pub async fn notice(&self, notice: Notice) {
        self.emit(DriverEvent::Notice(notice)).await;
    }

    /// Reports the end of a provider turn.
    pub async fn turn_completed(&self, report: TurnReport) {
        self.emit(DriverEvent::TurnCompleted(report)).await;
    }
}
