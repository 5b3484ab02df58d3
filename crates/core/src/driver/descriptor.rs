//! The Descriptor: a Driver's static, deterministic declaration of what it can do.
//!
//! Capabilities are promises: the core refuses explicit options the descriptor does not declare
//! before any process starts, and the conformance kit checks that a driver never does what it did
//! not declare. Declare only what tests prove.

use serde::{Deserialize, Serialize};

use super::decisions::DecisionKind;
use super::messages::Boundary;
use super::policy::DecisionMode;

/// Session (thread) capabilities.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SessionCaps {
    /// Resume a provider session from a checkpoint (needs a codec and a session fingerprint).
    pub resume: bool,
    /// Fork a provider session into a new one.
    pub fork: bool,
}

/// Run-policy capabilities: which explicit policy values the driver can honour.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct RunPolicyCaps {
    /// Explicit sandbox levels.
    pub sandbox: bool,
    /// Explicit web-search allow/deny.
    pub web_search: bool,
    /// Explicit browser allow/deny.
    pub browser: bool,
    /// Supported modes for permission requests.
    pub permission: Vec<DecisionMode>,
    /// Supported modes for plan reviews.
    pub plan_review: Vec<DecisionMode>,
    /// Supported modes for questions.
    pub question: Vec<DecisionMode>,
    /// The provider keeps a request open so the host can be asked again (Retry fallback).
    pub retry: bool,
}

impl RunPolicyCaps {
    /// The supported modes for `kind`.
    pub fn modes(&self, kind: DecisionKind) -> &[DecisionMode] {
        match kind {
            DecisionKind::Permission => &self.permission,
            DecisionKind::PlanReview => &self.plan_review,
            DecisionKind::Question => &self.question,
        }
    }

    /// True when the driver can ask the host about some kind.
    pub fn any_ask(&self) -> bool {
        [
            DecisionKind::Permission,
            DecisionKind::PlanReview,
            DecisionKind::Question,
        ]
        .iter()
        .any(|k| self.modes(*k).contains(&DecisionMode::Ask))
    }
}

/// How a driver continues an execution with queued input after a turn ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ContinueMode {
    /// No continuation: input can only be delivered in-run at declared boundaries.
    #[default]
    None,
    /// The driver drives further provider turns itself (a live process).
    InRun,
    /// The core continues through a new driver invocation resuming the healthy checkpoint.
    Resume,
}

/// Supplemental-message capabilities.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct MessageCaps {
    /// Boundaries at which the driver claims input, earliest first.
    pub boundaries: Vec<Boundary>,
    /// The driver can abort a turn and continue with input (`When(Interrupt)`).
    pub interrupt: bool,
    /// How turn-end continuation happens.
    pub continue_mode: ContinueMode,
    /// Maximum framed size per message (0 = unlimited), in `unit`.
    pub max_units: u64,
    /// Unit of `max_units` (`bytes`).
    pub unit: String,
    /// The provider confirms delivery (otherwise the driver acknowledges on write).
    pub confirmed_delivery: bool,
    /// The provider session persists delivered input (so a resumed session has it).
    pub persists_delivered: bool,
    /// Minimum CLI version for in-run delivery; below it delivery falls back to resume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_version: Option<String>,
}

impl MessageCaps {
    /// Input of any timing is delivered between provider turns only, the session continuing in a new
    /// process within the run (one-shot transports: Claude's `-p`, Codex's `exec`); no interrupt, no
    /// provider confirmation.
    pub fn turn_end_only() -> MessageCaps {
        MessageCaps {
            boundaries: vec![Boundary::TurnEnd],
            interrupt: false,
            continue_mode: ContinueMode::InRun,
            max_units: 0,
            unit: "bytes".into(),
            confirmed_delivery: false,
            persists_delivered: true,
            min_version: None,
        }
    }
}

impl MessageCaps {
    /// True when input can reach the provider inside an execution's process: an in-turn or interrupt
    /// boundary, interrupts, or driver-driven turn-end continuation (what a MinVersion guards).
    pub fn delivers_in_run(&self) -> bool {
        self.interrupt
            || self.continue_mode == ContinueMode::InRun
            || self
                .boundaries
                .iter()
                .any(|b| matches!(b, Boundary::InTurn | Boundary::Interrupt))
    }

    /// This capability with in-run delivery removed (below a known MinVersion): no boundary, no
    /// interrupt, and turn-end continuation through a checkpoint resume driven by the core when the
    /// driver can resume (`resumable`), else none.
    pub fn without_in_run(&self, resumable: bool) -> MessageCaps {
        MessageCaps {
            boundaries: Vec::new(),
            interrupt: false,
            continue_mode: if resumable {
                ContinueMode::Resume
            } else {
                ContinueMode::None
            },
            ..self.clone()
        }
    }

    /// True when any supplemental input can be accepted at all.
    pub fn accepts_any(&self) -> bool {
        !self.boundaries.is_empty() || self.continue_mode != ContinueMode::None
    }

    /// True when AfterTurn input can be delivered.
    pub fn accepts_after_turn(&self) -> bool {
        self.boundaries.contains(&Boundary::TurnEnd) || self.continue_mode != ContinueMode::None
    }
}

/// Structured-output capabilities.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct StructuredCaps {
    /// The provider accepts a JSON Schema natively.
    pub native: bool,
    /// The core may use exact-JSON prompting plus local validation.
    pub prompt_validate: bool,
    /// Native schema works together with interactive approvals (Ask).
    pub native_with_hitl: bool,
}

/// Streaming capabilities: what the event stream carries.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct StreamCaps {
    /// Token-level text deltas.
    pub token_level: bool,
    /// Reasoning/thinking events.
    pub reasoning: bool,
    /// Tool-call argument deltas.
    pub tool_call_args: bool,
    /// Interactive decisions (approval requests).
    pub hitl: bool,
}

/// Process capabilities.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ProcessCaps {
    /// Keeps a persistent provider process per thread (implements `close_processes`).
    pub persistent: bool,
}

/// MCP transports the driver can materialize.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct McpCaps {
    /// stdio servers.
    pub stdio: bool,
    /// Streamable HTTP servers.
    pub http: bool,
    /// SSE servers.
    pub sse: bool,
}

/// Skill capabilities.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SkillCaps {
    /// Skills can be materialized.
    pub supported: bool,
}

/// The static declaration of a Driver.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Descriptor {
    /// Stable type name (`claude`, `codex`, `cursor`, `codebuddy`, `reference`).
    pub driver_type: String,
    /// Human-readable name.
    pub display_name: String,
    /// Sessions.
    pub sessions: SessionCaps,
    /// Run policy.
    pub run_policy: RunPolicyCaps,
    /// Supplemental messages.
    pub messages: MessageCaps,
    /// Structured output.
    pub structured: StructuredCaps,
    /// Streaming.
    pub stream: StreamCaps,
    /// Processes.
    pub process: ProcessCaps,
    /// MCP.
    pub mcp: McpCaps,
    /// Skills.
    pub skills: SkillCaps,
    /// Extra instructions can be appended to the system prompt.
    pub system_prompt_append: bool,
}
