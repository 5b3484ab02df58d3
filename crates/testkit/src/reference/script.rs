//! Scripts for the reference driver: the steps of one provider turn.

use std::time::Duration;

use serde_json::Value;

use crate::driver::{DecisionChoice, DecisionKind, FailureCode, Notice, SubagentUpdate, Usage};

/// One step of a scripted turn.
#[derive(Debug, Clone)]
pub enum Step {
    /// Stream assistant text word by word.
    Text {
        /// The text.
        text: String,
        /// Delay between words (overrides the driver default).
        chunk_delay: Option<Duration>,
    },
    /// Emit a reasoning block.
    Thinking(String),
    /// A tool call with streamed arguments and its result.
    Tool {
        /// Tool name.
        name: String,
        /// Arguments.
        args: Value,
        /// Result.
        result: Value,
    },
    /// Ask for a decision.
    Approval {
        /// Kind.
        kind: DecisionKind,
        /// Title.
        title: String,
        /// Choices (questions).
        choices: Vec<DecisionChoice>,
    },
    /// Raw stdout chunk.
    Stdout(String),
    /// Raw stderr chunk.
    Stderr(String),
    /// A notice.
    Notice(Notice),
    /// Subagent progress.
    Subagent(SubagentUpdate),
    /// Wait (cancellable).
    Sleep(Duration),
    /// Fail the invocation.
    Fail {
        /// Failure code.
        code: FailureCode,
        /// Message.
        message: String,
    },
    /// Produce native structured output (and stream it as text).
    Structured(Value),
    /// Emit `count` content deltas as fast as possible (throughput tests).
    Bulk {
        /// How many.
        count: usize,
    },
}

impl Step {
    /// Plain text with no delay.
    pub fn text(t: impl Into<String>) -> Step {
        Step::Text {
            text: t.into(),
            chunk_delay: None,
        }
    }
}

/// The steps of one turn plus the usage it reports.
#[derive(Debug, Clone, Default)]
pub struct Script {
    /// Steps.
    pub steps: Vec<Step>,
    /// Usage per turn.
    pub usage: Option<Usage>,
    /// The `details` every approval of the turn carries (empty by default).
    pub approval_details: crate::driver::JsonMap,
}

impl Script {
    /// A script of `steps` without usage.
    pub fn new(steps: Vec<Step>) -> Self {
        Script {
            steps,
            usage: None,
            approval_details: Default::default(),
        }
    }

    /// Sets the per-turn usage.
    pub fn with_usage(mut self, input: u64, output: u64) -> Self {
        self.usage = Some(Usage {
            input_tokens: input,
            output_tokens: output,
            ..Default::default()
        });
        self
    }
}
