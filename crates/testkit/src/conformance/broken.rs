//! Negative controls: a driver with exactly one deliberate flaw per clause. The kit must report
//! each one (tested in `tests/it/conformance.rs`).

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use serde_json::json;

use crate::driver::{
    Ack, Boundary, Checkpoint, ContinueMode, DecisionKind, DecisionRequest, Descriptor, Driver, DriverEvent,
    Failure, FailureCode, InvalidConfig, JsonSessionCodec, Phase, RawStreams, Request, Response, Role, RunIo,
    SessionCodec, SessionState, TerminalPayload, TextDelta, Thinking, ToolCall, TranscriptItem,
    TranscriptKind,
};

/// The flaws, each breaking one clause.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flaw {
    /// DRV-01: empty type.
    EmptyType,
    /// DRV-02: a different descriptor on every call.
    UnstableDescriptor,
    /// CAP-01: resume declared without a codec.
    ResumeWithoutCodec,
    /// EVT-03: content before start.
    ContentBeforeStart,
    /// EVT-04: an empty content chunk.
    EmptyContent,
    /// EVT-05: tool arguments without a started call.
    ArgsWithoutStart,
    /// EVT-09: user-role text from a driver.
    UserRole,
    /// EVT-11: a text lifecycle left open.
    UnclosedText,
    /// EVT-12: reasoning without declaring it.
    UndeclaredReasoning,
    /// EVT-13: an event after `run` returned.
    EmitAfterReturn,
    /// RUN-04: a transcript item not mirrored by a notice.
    TranscriptMismatch,
    /// TRN-02: a tool-call item without a name.
    ToolItemWithoutName,
    /// RSP-01: a valid checkpoint on a failed run.
    ValidCheckpointOnFailure,
    /// RSP-03: the raw stdout returned as the text.
    RawDumpText,
    /// RSP-05: a terminal payload without an event name.
    BadTerminal,
    /// MSG-01: a claimed message dropped without an ack.
    UnackedMessage,
    /// MSG-02: a claim at an undeclared boundary.
    UndeclaredBoundary,
    /// APR-01: a decision of an undeclared kind.
    UndeclaredDecision,
}

impl Flaw {
    /// Every flaw with the clause it breaks.
    pub fn all() -> Vec<(Flaw, &'static str)> {
        vec![
            (Flaw::EmptyType, "DRV-01"),
            (Flaw::UnstableDescriptor, "DRV-02"),
            (Flaw::ResumeWithoutCodec, "CAP-01"),
            (Flaw::ContentBeforeStart, "EVT-03"),
            (Flaw::EmptyContent, "EVT-04"),
            (Flaw::ArgsWithoutStart, "EVT-05"),
            (Flaw::UserRole, "EVT-09"),
            (Flaw::UnclosedText, "EVT-11"),
            (Flaw::UndeclaredReasoning, "EVT-12"),
            (Flaw::EmitAfterReturn, "EVT-13"),
            (Flaw::TranscriptMismatch, "RUN-04"),
            (Flaw::ToolItemWithoutName, "TRN-02"),
            (Flaw::ValidCheckpointOnFailure, "RSP-01"),
            (Flaw::RawDumpText, "RSP-03"),
            (Flaw::BadTerminal, "RSP-05"),
            (Flaw::UnackedMessage, "MSG-01"),
            (Flaw::UndeclaredBoundary, "MSG-02"),
            (Flaw::UndeclaredDecision, "APR-01"),
        ]
    }
}

/// A minimal driver that behaves correctly except for its one flaw (or none).
pub struct BrokenDriver {
    flaw: Option<Flaw>,
    calls: AtomicU32,
}

impl BrokenDriver {
    /// A driver with `flaw`; `None` is the correct baseline.
    pub fn with_flaw(flaw: Option<Flaw>) -> Arc<dyn Driver> {
        Arc::new(BrokenDriver {
            flaw,
            calls: AtomicU32::new(0),
        })
    }

    fn has(&self, f: Flaw) -> bool {
        self.flaw == Some(f)
    }
}

#[async_trait::async_trait]
impl Driver for BrokenDriver {
    fn descriptor(&self) -> Descriptor {
        let n = self.calls.fetch_add(1, Ordering::SeqCst);
        let mut d = Descriptor {
            driver_type: if self.has(Flaw::EmptyType) {
                String::new()
            } else {
                "baseline".into()
            },
            display_name: if self.has(Flaw::UnstableDescriptor) {
                format!("baseline {n}")
            } else {
                "Baseline".into()
            },
            ..Default::default()
        };
        d.sessions.resume = true;
        d.stream.token_level = true;
        d.stream.tool_call_args = true;
        d.messages.boundaries = vec![Boundary::TurnEnd];
        d.messages.continue_mode = ContinueMode::InRun;
        d
    }

    fn validate_config(&self) -> Result<(), InvalidConfig> {
        Ok(())
    }

    fn session_codec(&self) -> Option<Arc<dyn SessionCodec>> {
        (!self.has(Flaw::ResumeWithoutCodec)).then(|| Arc::new(JsonSessionCodec) as Arc<dyn SessionCodec>)
    }

    fn session_fingerprint(&self) -> Option<String> {
        Some("baseline-v1".into())
    }

    async fn run(&self, _req: Request, io: RunIo) -> Response {
        let text = |t: &str, phase| {
            DriverEvent::TextDelta(TextDelta {
                message_id: "m1".into(),
                text: t.into(),
                phase,
                role: if self.has(Flaw::UserRole) {
                    Role::User
                } else {
                    Role::Assistant
                },
            })
        };
        if !self.has(Flaw::ContentBeforeStart) {
            io.events.emit(text("", Phase::Start)).await;
        }
        io.events
            .emit(text(
                if self.has(Flaw::EmptyContent) { "" } else { "hello" },
                Phase::Content,
            ))
            .await;
        if !self.has(Flaw::UnclosedText) {
            io.events.emit(text("", Phase::End)).await;
        }
        if self.has(Flaw::UndeclaredReasoning) {
            io.events
                .emit(DriverEvent::Thinking(Thinking {
                    message_id: "t".into(),
                    text: String::new(),
                    phase: Phase::Start,
                }))
                .await;
            io.events
                .emit(DriverEvent::Thinking(Thinking {
                    message_id: "t".into(),
                    text: String::new(),
                    phase: Phase::End,
                }))
                .await;
        }
        if self.has(Flaw::ArgsWithoutStart) {
            io.events
                .emit(DriverEvent::ToolCall(ToolCall {
                    id: "c1".into(),
                    args_delta: "{}".into(),
                    ..Default::default()
                }))
                .await;
        }
        if self.has(Flaw::UndeclaredDecision) {
            io.decisions
                .request(DecisionRequest {
                    kind: Some(DecisionKind::Permission),
                    title: "t".into(),
                    source: "s".into(),
                    ..Default::default()
                })
                .await;
        }
        if let Some(port) = &io.messages {
            let boundary = if self.has(Flaw::UndeclaredBoundary) {
                Boundary::InTurn
            } else {
                Boundary::TurnEnd
            };
            for claim in port.claim(boundary) {
                if self.has(Flaw::UnackedMessage) {
                    drop(claim);
                } else {
                    claim.ack(Ack::Delivered {
                        mechanism: "test".into(),
                    });
                }
            }
        }
        let mut transcript = vec![TranscriptItem::new(TranscriptKind::Assistant, "hello")];
        let mut tool_item = TranscriptItem::new(TranscriptKind::ToolCall, String::new());
        tool_item.tool_use_id = "c9".into();
        tool_item.tool_name = if self.has(Flaw::ToolItemWithoutName) {
            String::new()
        } else {
            "echo".into()
        };
        transcript.push(tool_item);
        for item in &transcript {
            io.events.emit(DriverEvent::transcript(item.clone())).await;
        }
        if self.has(Flaw::TranscriptMismatch) {
            transcript.push(TranscriptItem::new(TranscriptKind::Assistant, "unmirrored"));
        }
        if self.has(Flaw::EmitAfterReturn) {
            let events = io.events.clone();
            // Keeps emitting for a while after returning: a single emission after a fixed sleep raced the
            // harness closing the sink on a loaded machine (it landed before the close, unnoticed).
            tokio::spawn(async move {
                for _ in 0..250 {
                    tokio::time::sleep(std::time::Duration::from_millis(2)).await;
                    let late = TextDelta {
                        message_id: "m1".into(),
                        text: "late".into(),
                        ..Default::default()
                    };
                    events.emit(DriverEvent::TextDelta(late)).await;
                }
            });
        }
        let stdout = b"{\"type\":\"result\"}\n".to_vec();
        Response {
            text: if self.has(Flaw::RawDumpText) {
                String::from_utf8_lossy(&stdout).into_owned()
            } else {
                "hello".into()
            },
            raw: RawStreams {
                stdout,
                stderr: Vec::new(),
                terminal: Some(TerminalPayload {
                    event: if self.has(Flaw::BadTerminal) {
                        String::new()
                    } else {
                        "result".into()
                    },
                    json: json!({"subtype": "success"}),
                }),
            },
            transcript,
            checkpoint: Some(Checkpoint {
                state: SessionState {
                    resume_id: "s1".into(),
                    ..Default::default()
                },
                valid: true,
            }),
            failure: self
                .has(Flaw::ValidCheckpointOnFailure)
                .then(|| Failure::new(FailureCode::AgentError, "failed")),
            ..Default::default()
        }
    }
}
