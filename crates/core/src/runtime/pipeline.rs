//! The core's implementation of the driver's event sink: maps driver events to payloads and does
//! the turn accounting (`TurnEnd`, the turn-limit notice).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use super::broker::{Broker, TryPublish};
use super::error::ErrorInfo;
use super::event::{Payload, TurnEnd};
use super::messages::MessageQueue;
use super::result::RunResult;
use crate::driver::{DriverEvent, JsonMap, SinkBackend, SourceMeta, TurnReport};

/// The sink of one execution.
pub(crate) struct Pipeline {
    pub broker: Arc<Broker>,
    pub queue: Arc<MessageQueue>,
    pub run_id: String,
    /// Turn-end continuation is available (from the resolved message capability).
    pub continuation: AtomicBool,
    /// TurnCompleted reports seen in the current driver invocation.
    pub turns_in_invocation: AtomicU32,
}

impl Pipeline {
    fn map(event: DriverEvent) -> Payload {
        match event {
            DriverEvent::TextDelta(t) => Payload::TextDelta(t),
            DriverEvent::Thinking(t) => Payload::Thinking(t),
            DriverEvent::ToolCall(t) => Payload::ToolCall(t),
            DriverEvent::ToolResult(t) => Payload::ToolResult(t),
            DriverEvent::ProcessInfo(p) => Payload::ProcessInfo(p),
            DriverEvent::Notice(n) => Payload::Notice(n),
            DriverEvent::SubagentUpdate(s) => Payload::SubagentUpdate(s),
            DriverEvent::TurnCompleted(_) => unreachable!("turns are handled before mapping"),
        }
    }

    /// Records the end of a provider turn and publishes `TurnEnd`.
    pub(crate) fn turn_end(&self, report: TurnReport) {
        self.turns_in_invocation.fetch_add(1, Ordering::SeqCst);
        let (turn, ids, notice) = self
            .queue
            .turn_completed(self.continuation.load(Ordering::SeqCst));
        let result = RunResult {
            turns: 1,
            run_id: self.run_id.clone(),
            text: report.text,
            usage: report.usage,
            ..Default::default()
        };
        let error = report.error.map(|message| ErrorInfo {
            code: "turn_failed".into(),
            reason: None,
            message,
            details: JsonMap::new(),
        });
        self.broker.publish_critical(
            Payload::TurnEnd(TurnEnd {
                turn,
                result: Some(Arc::new(result)),
                error,
                message_ids: ids,
            }),
            None,
        );
        if let Some(n) = notice {
            self.broker.publish_critical(Payload::Notice(n), None);
        }
        self.broker.set_turn(turn + 1);
    }
}

#[async_trait::async_trait]
impl SinkBackend for Pipeline {
    fn try_publish(
        &self,
        event: DriverEvent,
        source: Option<SourceMeta>,
    ) -> Result<(), Box<crate::driver::sink::Pending>> {
        if let DriverEvent::TurnCompleted(report) = event {
            self.turn_end(report);
            return Ok(());
        }
        match self.broker.try_publish(Self::map(event), source) {
            TryPublish::Done => Ok(()),
            TryPublish::MustWait(payload, source) => {
                // Hand the payload to the waiting path directly: no need to round-trip.
                Err(Box::new((back(payload), source)))
            }
        }
    }

    async fn publish(&self, event: DriverEvent, source: Option<SourceMeta>) {
        if let DriverEvent::TurnCompleted(report) = event {
            self.turn_end(report);
            return;
        }
        self.broker.publish(Self::map(event), source).await;
    }
}

/// Maps a droppable payload back to the driver event it came from (only droppable payloads can
/// ever have to wait).
fn back(payload: Payload) -> DriverEvent {
    match payload {
        Payload::TextDelta(t) => DriverEvent::TextDelta(t),
        Payload::Thinking(t) => DriverEvent::Thinking(t),
        Payload::ToolCall(t) => DriverEvent::ToolCall(t),
        Payload::ProcessInfo(p) => DriverEvent::ProcessInfo(p),
        Payload::SubagentUpdate(s) => DriverEvent::SubagentUpdate(s),
        Payload::ToolResult(t) => DriverEvent::ToolResult(t),
        Payload::Notice(n) => DriverEvent::Notice(n),
        other => DriverEvent::Notice(crate::driver::Notice::new("internal", other.kind_label())),
    }
}
