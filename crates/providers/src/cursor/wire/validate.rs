//! The strict protocol rules (as the Go original's parser enforces them) and their typed violations:
//!
//! 1. every frame carries a `session_id`, and it is the same one throughout;
//! 2. every `tool_call` has a `call_id`, a `started|completed` subtype and exactly one variant key; a
//!    completed call has a `result` envelope with exactly one of `success|failure|error`;
//! 3. the stream ends with a `result` carrying `is_error` (bool), `result` (string) and `session_id`, and
//!    nothing follows it.
//!
//! Whether the run *succeeded* (`subtype == "success"`, `is_error == false`) is not a protocol question: see
//! [`Report::terminal`].

use super::tool::ToolOutcome;
use super::{Frame, ResultFrame, parse_line};

/// One broken rule; `line` is 1-based.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Violation {
    /// A line that is not a frame.
    #[error("line {line}: not a frame: {error}")]
    Unparseable {
        /// Where.
        line: usize,
        /// The parse error.
        error: String,
    },
    /// A frame without `session_id`.
    #[error("line {line}: `{kind}` has no session_id")]
    MissingSessionId {
        /// Where.
        line: usize,
        /// The frame kind.
        kind: String,
    },
    /// A frame whose `session_id` differs from the first one seen.
    #[error("line {line}: session_id {found:?} differs from {expected:?}")]
    SessionMismatch {
        /// Where.
        line: usize,
        /// The first session id.
        expected: String,
        /// This frame's.
        found: String,
    },
    /// A `tool_call` without `call_id`.
    #[error("line {line}: tool_call without call_id")]
    ToolCallMissingId {
        /// Where.
        line: usize,
    },
    /// A `tool_call` whose subtype is neither `started` nor `completed`.
    #[error("line {line}: tool_call subtype {subtype:?}")]
    ToolCallSubtype {
        /// Where.
        line: usize,
        /// The subtype.
        subtype: String,
    },
    /// A `tool_call` with zero or several variant keys.
    #[error("line {line}: tool_call must have exactly one variant key, has {keys:?}")]
    ToolCallVariants {
        /// Where.
        line: usize,
        /// The keys found.
        keys: Vec<String>,
    },
    /// A completed call without a well-formed `result` envelope.
    #[error("line {line}: completed tool_call without a success|failure|error result")]
    ToolResultEnvelope {
        /// Where.
        line: usize,
    },
    /// The terminal `result` lacks a required field.
    #[error("line {line}: result lacks `{field}`")]
    TerminalMissingField {
        /// Where.
        line: usize,
        /// `is_error`, `result` or `session_id`.
        field: &'static str,
    },
    /// A frame after the terminal `result`.
    #[error("line {line}: `{kind}` after the terminal result")]
    AfterTerminal {
        /// Where.
        line: usize,
        /// The frame kind.
        kind: String,
    },
    /// The stream ended without a `result`.
    #[error("no terminal result")]
    NoTerminal,
}

/// The outcome of validating a whole stream.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    /// Every broken rule, in order.
    pub violations: Vec<Violation>,
    /// The session id of the first frame that had one.
    pub session_id: Option<String>,
    /// The terminal frame, if one came.
    pub terminal: Option<ResultFrame>,
    /// Frames parsed.
    pub frames: usize,
}

impl Report {
    /// No violations.
    pub fn is_valid(&self) -> bool {
        self.violations.is_empty()
    }

    /// Valid, and the terminal says success.
    pub fn is_success(&self) -> bool {
        self.is_valid() && self.terminal.as_ref().is_some_and(ResultFrame::is_success)
    }
}

/// Checks frames one at a time (for a live stream); [`Validator::finish`] adds the end-of-stream rules.
#[derive(Debug, Default)]
pub struct Validator {
    report: Report,
    line: usize,
}

impl Validator {
    /// A fresh validator.
    pub fn new() -> Validator {
        Validator::default()
    }

    /// Parses and checks one stdout line; returns the frame when it parsed.
    pub fn push_line(&mut self, text: &str) -> Option<Frame> {
        match parse_line(text) {
            Ok(f) => {
                self.push(&f);
                Some(f)
            }
            Err(e) => {
                self.line += 1;
                self.report.violations.push(Violation::Unparseable {
                    line: self.line,
                    error: e.to_string(),
                });
                None
            }
        }
    }

    /// Checks one parsed frame.
    pub fn push(&mut self, frame: &Frame) {
        self.line += 1;
        let line = self.line;
        self.report.frames += 1;
        let v = &mut self.report.violations;
        if self.report.terminal.is_some() {
            v.push(Violation::AfterTerminal {
                line,
                kind: frame.kind(),
            });
        }
        match (frame.session_id(), &self.report.session_id) {
            // Unknown frame types are tolerated without a session id; every documented frame needs one.
            (None, _) if !matches!(frame, Frame::Unknown(_)) => v.push(Violation::MissingSessionId {
                line,
                kind: frame.kind(),
            }),
            (None, _) => {}
            (Some(s), None) => self.report.session_id = Some(s.to_owned()),
            (Some(s), Some(expected)) if s != expected => v.push(Violation::SessionMismatch {
                line,
                expected: expected.clone(),
                found: s.to_owned(),
            }),
            _ => {}
        }
        match frame {
            Frame::ToolCall(t) => {
                if t.call_id.as_deref().is_none_or(str::is_empty) {
                    v.push(Violation::ToolCallMissingId { line });
                }
                if t.subtype != "started" && t.subtype != "completed" {
                    v.push(Violation::ToolCallSubtype {
                        line,
                        subtype: t.subtype.clone(),
                    });
                }
                match t.tool_call.variant() {
                    None => v.push(Violation::ToolCallVariants {
                        line,
                        keys: t.tool_call.keys(),
                    }),
                    Some(var) => {
                        let ok = var.result.as_ref().and_then(ToolOutcome::from_value).is_some();
                        if t.subtype == "completed" && !ok {
                            v.push(Violation::ToolResultEnvelope { line });
                        }
                    }
                }
            }
            Frame::Result(r) => {
                for (field, missing) in [
                    ("is_error", r.is_error.is_none()),
                    ("result", r.result.is_none()),
                    ("session_id", r.session_id.is_none()),
                ] {
                    if missing {
                        v.push(Violation::TerminalMissingField { line, field });
                    }
                }
                if self.report.terminal.is_none() {
                    self.report.terminal = Some(r.clone());
                }
            }
            _ => {}
        }
    }

    /// Ends the stream and returns the report.
    pub fn finish(mut self) -> Report {
        if self.report.terminal.is_none() {
            self.report.violations.push(Violation::NoTerminal);
        }
        self.report
    }
}

/// Validates parsed frames.
pub fn validate(frames: &[Frame]) -> Report {
    let mut v = Validator::new();
    for f in frames {
        v.push(f);
    }
    v.finish()
}

/// Validates stdout lines (unparseable lines become [`Violation::Unparseable`]; blank lines are skipped).
pub fn validate_lines<'a>(lines: impl IntoIterator<Item = &'a str>) -> Report {
    let mut v = Validator::new();
    for l in lines {
        if !l.trim().is_empty() {
            v.push_line(l);
        }
    }
    v.finish()
}
