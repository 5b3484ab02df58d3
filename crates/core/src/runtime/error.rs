//! Errors: the one verdict of an execution ([`RunError`] with its partial result) and the typed
//! refusals around it. Callers match on [`Error::kind`] instead of comparing strings.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::result::RunResult;
use crate::driver::{DecisionKind, DecisionMode, JsonMap};

/// Why an execution failed (wire strings in parentheses).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum FailureReason {
    /// A human or policy rejected a decision and the fallback aborted (`approval_denied`).
    ApprovalDenied,
    /// A decision timed out and the fallback aborted (`approval_timeout`).
    ApprovalTimeout,
    /// The provider failed (`agent_error`).
    AgentError,
    /// The execution was cancelled (`cancelled`).
    Cancelled,
    /// Output broke a policy, e.g. invalid structured output (`policy_violation`).
    PolicyViolation,
    /// Lease loss, store or transport failure (`infrastructure_error`).
    InfrastructureError,
    /// The execution deadline passed (`deadline_exceeded`).
    DeadlineExceeded,
    /// A composite limit aborted the work (`limit_exceeded`).
    LimitExceeded,
    /// An unknown driver code, verbatim.
    Other(String),
}

impl FailureReason {
    /// The wire string.
    pub fn as_str(&self) -> &str {
        match self {
            FailureReason::ApprovalDenied => "approval_denied",
            FailureReason::ApprovalTimeout => "approval_timeout",
            FailureReason::AgentError => "agent_error",
            FailureReason::Cancelled => "cancelled",
            FailureReason::PolicyViolation => "policy_violation",
            FailureReason::InfrastructureError => "infrastructure_error",
            FailureReason::DeadlineExceeded => "deadline_exceeded",
            FailureReason::LimitExceeded => "limit_exceeded",
            FailureReason::Other(s) => s,
        }
    }

    /// Parses a wire string.
    pub fn parse(s: &str) -> FailureReason {
        match s {
            "approval_denied" => FailureReason::ApprovalDenied,
            "approval_timeout" => FailureReason::ApprovalTimeout,
            "agent_error" => FailureReason::AgentError,
            "cancelled" => FailureReason::Cancelled,
            "policy_violation" => FailureReason::PolicyViolation,
            "infrastructure_error" => FailureReason::InfrastructureError,
            "deadline_exceeded" => FailureReason::DeadlineExceeded,
            "limit_exceeded" => FailureReason::LimitExceeded,
            other => FailureReason::Other(other.to_owned()),
        }
    }
}

impl fmt::Display for FailureReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for FailureReason {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for FailureReason {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(FailureReason::parse(&String::deserialize(d)?))
    }
}

/// A secondary cause attached to a [`RunError`].
pub type Cause = Arc<dyn std::error::Error + Send + Sync>;

/// A business failure after the driver was entered: the reason, and everything the execution
/// produced before it failed.
#[derive(Debug, Clone)]
pub struct RunError {
    /// The one verdict.
    pub reason: FailureReason,
    /// Human-readable message.
    pub message: String,
    /// Details (provider codes, retry hints…).
    pub details: JsonMap,
    /// The partial result: text, raw streams, transcript, usage, message outcomes.
    pub result: Arc<RunResult>,
    /// The original cause and later secondary causes.
    pub causes: Vec<Cause>,
    /// The thread sentinel this failure also is (a lease lost mid-run, a success without a valid
    /// checkpoint, a rejected resume): [`Error::kind`] reports it, the partial result stays here.
    pub thread: Option<ThreadErrorKind>,
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.message.is_empty() {
            write!(f, "run failed: {}", self.reason)
        } else {
            write!(f, "run failed ({}): {}", self.reason, self.message)
        }
    }
}

impl std::error::Error for RunError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.causes
            .first()
            .map(|c| c.as_ref() as &(dyn std::error::Error + 'static))
    }
}

/// Thread errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ThreadErrorKind {
    /// No record for the key (ResumeOnly).
    NotFound,
    /// Another execution or a live Standby holds the thread.
    Busy,
    /// The stored session is incompatible with the current configuration (ResumeOnly).
    Incompatible,
    /// The ownership lease was lost.
    LeaseLost,
    /// A successful run produced no valid checkpoint.
    CheckpointMissing,
    /// The fork target key is already in use.
    AlreadyExists,
    /// The provider rejected the resume (ResumeOnly).
    ResumeRejected,
    /// The thread store failed.
    Store,
}

impl ThreadErrorKind {
    /// The stable machine code (`thread_lease_lost`, …).
    pub fn code(&self) -> &'static str {
        match self {
            ThreadErrorKind::NotFound => "thread_not_found",
            ThreadErrorKind::Busy => "thread_busy",
            ThreadErrorKind::Incompatible => "thread_incompatible",
            ThreadErrorKind::LeaseLost => "thread_lease_lost",
            ThreadErrorKind::CheckpointMissing => "thread_checkpoint_missing",
            ThreadErrorKind::AlreadyExists => "thread_already_exists",
            ThreadErrorKind::ResumeRejected => "resume_rejected",
            ThreadErrorKind::Store => "thread_store_error",
        }
    }
}

/// Configuration, policy, schema and resource refusals (all before launch).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// The driver refused its configuration.
    #[error("invalid driver configuration: {0}")]
    InvalidDriverConfig(String),
    /// A malformed policy field.
    #[error("invalid policy: {0}")]
    InvalidPolicy(String),
    /// A valid explicit policy value the driver cannot honour.
    #[error("the {driver} driver does not support {dimension} = {value}")]
    PolicyCapabilityUnsupported {
        /// Driver type.
        driver: String,
        /// Policy dimension (`sandbox`, `web_search`, `browser`).
        dimension: String,
        /// The requested value.
        value: String,
    },
    /// An explicit decision mode the driver cannot honour.
    #[error("the {driver} driver does not support {mode:?} for {kind:?} requests")]
    HumanDecisionModeUnsupported {
        /// Driver type.
        driver: String,
        /// Decision kind.
        kind: DecisionKind,
        /// Requested mode.
        mode: DecisionMode,
    },
    /// The output schema is not valid JSON Schema.
    #[error("invalid output schema: {0}")]
    InvalidOutputSchema(String),
    /// No structured-output mechanism fits this driver and policy.
    #[error("structured output unsupported: {0}")]
    StructuredOutputUnsupported(String),
    /// A skill key is missing from the provider.
    #[error("skill not found: {0}")]
    SkillNotFound(String),
    /// Two skills share a key with different content.
    #[error("conflicting skills for key {0:?}")]
    SkillKeyConflict(String),
    /// Skill materialization failed.
    #[error("skill materialization failed: {0}")]
    SkillMaterializationFailed(String),
    /// A skill source does not exist.
    #[error("skill source missing: {0}")]
    SkillSourceMissing(String),
    /// A skill has no key.
    #[error("skill key missing: {0}")]
    SkillKeyMissing(String),
    /// An invalid MCP declaration.
    #[error("invalid MCP configuration: {0}")]
    InvalidMcpConfig(String),
    /// The driver has no MCP support.
    #[error("MCP unsupported by the {0} driver")]
    McpUnsupported(String),
    /// The driver does not support an MCP transport.
    #[error("MCP transport {transport} unsupported by the {driver} driver")]
    McpTransportUnsupported {
        /// Driver type.
        driver: String,
        /// Transport.
        transport: String,
    },
    /// Declarative services were requested but the Agent has no service manager (no endpoint is
    /// invented).
    #[error("services {0:?} declared but the Agent has no service manager")]
    ServiceManagerMissing(Vec<String>),
    /// Per-call profile resources this Agent's profile cannot take (a native profile, which is never
    /// written; a driver without profiles; a family the provider does not support).
    #[error("profile resources refused: {0}")]
    ProfileResourcesUnsupported(String),
    /// The profile dir is in use by a running execution with other profile resources: syncing it now
    /// would change files under that run.
    #[error("profile in use: {0}")]
    ProfileInUse(String),
}

/// A serializable summary of an error (HTTP bodies, event logs, replay).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorInfo {
    /// Stable machine code (`thread_busy`, `run_failed`, …).
    pub code: String,
    /// The failure reason, for run failures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Human-readable message.
    pub message: String,
    /// Details.
    #[serde(default, skip_serializing_if = "JsonMap::is_empty")]
    pub details: JsonMap,
}

/// Flat kinds for matching (the spec's sentinels).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// A business failure; see [`RunError::reason`].
    Run,
    /// `ErrAgentClosed`.
    AgentClosed,
    /// A thread error.
    Thread(ThreadErrorKind),
    /// `ErrInvalidDriverConfig`.
    InvalidDriverConfig,
    /// `ErrInvalidPolicy`.
    InvalidPolicy,
    /// `ErrPolicyCapabilityUnsupported`.
    PolicyCapabilityUnsupported,
    /// `ErrHumanDecisionModeUnsupported`.
    HumanDecisionModeUnsupported,
    /// `ErrInvalidOutputSchema`.
    InvalidOutputSchema,
    /// `ErrStructuredOutputUnsupported`.
    StructuredOutputUnsupported,
    /// A skill error.
    Skill,
    /// An MCP error.
    Mcp,
    /// A runtime service error before admission.
    Service,
    /// A profile refusal (per-call profile resources, a profile in use).
    Profile,
    /// An infrastructure failure before the driver was entered.
    Infrastructure,
    /// An error read back from a log (identity only).
    Replayed,
}

/// Every error the runtime returns.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A business failure after driver entry, with the partial result.
    #[error(transparent)]
    Run(Arc<RunError>),
    /// The Agent is closed.
    #[error("agent is closed")]
    AgentClosed,
    /// A thread error.
    #[error("thread error ({kind:?}): {message}")]
    Thread {
        /// Which.
        kind: ThreadErrorKind,
        /// Details.
        message: String,
    },
    /// A configuration/policy/schema/resource refusal.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// An infrastructure failure outside a run verdict.
    #[error("infrastructure error: {0}")]
    Infrastructure(String),
    /// An error read back from a log or another replica: identity only.
    #[error("{}: {}", .0.code, .0.message)]
    Replayed(ErrorInfo),
}

impl Error {
    /// The flat kind: the spec's sentinel. A run failure that is also a thread sentinel (lease lost
    /// mid-run, checkpoint missing, resume rejected) reports that sentinel; its partial result is
    /// still in [`Error::as_run`].
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Run(r) => r.thread.map_or(ErrorKind::Run, ErrorKind::Thread),
            Error::AgentClosed => ErrorKind::AgentClosed,
            Error::Thread { kind, .. } => ErrorKind::Thread(*kind),
            Error::Config(c) => match c {
                ConfigError::InvalidDriverConfig(_) => ErrorKind::InvalidDriverConfig,
                ConfigError::InvalidPolicy(_) => ErrorKind::InvalidPolicy,
                ConfigError::PolicyCapabilityUnsupported { .. } => ErrorKind::PolicyCapabilityUnsupported,
                ConfigError::HumanDecisionModeUnsupported { .. } => ErrorKind::HumanDecisionModeUnsupported,
                ConfigError::InvalidOutputSchema(_) => ErrorKind::InvalidOutputSchema,
                ConfigError::StructuredOutputUnsupported(_) => ErrorKind::StructuredOutputUnsupported,
                ConfigError::SkillNotFound(_)
                | ConfigError::SkillKeyConflict(_)
                | ConfigError::SkillMaterializationFailed(_)
                | ConfigError::SkillSourceMissing(_)
                | ConfigError::SkillKeyMissing(_) => ErrorKind::Skill,
                ConfigError::InvalidMcpConfig(_)
                | ConfigError::McpUnsupported(_)
                | ConfigError::McpTransportUnsupported { .. } => ErrorKind::Mcp,
                ConfigError::ServiceManagerMissing(_) => ErrorKind::Service,
                ConfigError::ProfileResourcesUnsupported(_) | ConfigError::ProfileInUse(_) => {
                    ErrorKind::Profile
                }
            },
            Error::Infrastructure(_) => ErrorKind::Infrastructure,
            Error::Replayed(_) => ErrorKind::Replayed,
        }
    }

    /// True when this error matches `kind` (the way `errors.Is` matches a sentinel): its flat kind,
    /// or [`ErrorKind::Run`] for any run failure, including one that is also a thread sentinel.
    pub fn is(&self, kind: ErrorKind) -> bool {
        self.kind() == kind || (kind == ErrorKind::Run && matches!(self, Error::Run(_)))
    }

    /// The thread sentinel, for a thread error or a run failure that is one.
    pub fn thread_kind(&self) -> Option<ThreadErrorKind> {
        match self.kind() {
            ErrorKind::Thread(k) => Some(k),
            _ => None,
        }
    }

    /// The run failure, when this is one.
    pub fn as_run(&self) -> Option<&RunError> {
        match self {
            Error::Run(r) => Some(r),
            _ => None,
        }
    }

    /// The failure reason of a run failure (also for replayed ones).
    pub fn reason(&self) -> Option<FailureReason> {
        match self {
            Error::Run(r) => Some(r.reason.clone()),
            Error::Replayed(i) => i.reason.as_deref().map(FailureReason::parse),
            _ => None,
        }
    }

    /// A thread error of `kind`.
    pub fn thread(kind: ThreadErrorKind, message: impl Into<String>) -> Self {
        Error::Thread {
            kind,
            message: message.into(),
        }
    }

    /// The stable machine code.
    pub fn code(&self) -> String {
        match self {
            Error::Run(_) => "run_failed".into(),
            Error::AgentClosed => "agent_closed".into(),
            Error::Thread { kind, .. } => kind.code().into(),
            Error::Config(c) => match c {
                ConfigError::InvalidDriverConfig(_) => "invalid_driver_config",
                ConfigError::InvalidPolicy(_) => "invalid_policy",
                ConfigError::PolicyCapabilityUnsupported { .. } => "policy_capability_unsupported",
                ConfigError::HumanDecisionModeUnsupported { .. } => "human_decision_mode_unsupported",
                ConfigError::InvalidOutputSchema(_) => "invalid_output_schema",
                ConfigError::StructuredOutputUnsupported(_) => "structured_output_unsupported",
                ConfigError::SkillNotFound(_) => "skill_not_found",
                ConfigError::SkillKeyConflict(_) => "skill_key_conflict",
                ConfigError::SkillMaterializationFailed(_) => "skill_materialization_failed",
                ConfigError::SkillSourceMissing(_) => "skill_source_missing",
                ConfigError::SkillKeyMissing(_) => "skill_key_missing",
                ConfigError::InvalidMcpConfig(_) => "invalid_mcp_config",
                ConfigError::McpUnsupported(_) => "mcp_unsupported",
                ConfigError::McpTransportUnsupported { .. } => "mcp_transport_unsupported",
                ConfigError::ServiceManagerMissing(_) => "service_manager_missing",
                ConfigError::ProfileResourcesUnsupported(_) => "profile_resources_unsupported",
                ConfigError::ProfileInUse(_) => "profile_in_use",
            }
            .into(),
            Error::Infrastructure(_) => "infrastructure_error".into(),
            Error::Replayed(i) => i.code.clone(),
        }
    }

    /// A serializable summary.
    pub fn info(&self) -> ErrorInfo {
        match self {
            Error::Run(r) => ErrorInfo {
                code: self.code(),
                reason: Some(r.reason.as_str().to_owned()),
                message: r.message.clone(),
                details: r.details.clone(),
            },
            Error::Replayed(i) => i.clone(),
            other => ErrorInfo {
                code: other.code(),
                reason: None,
                message: other.to_string(),
                details: JsonMap::new(),
            },
        }
    }
}

/// Why a supplemental send was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MessageErrorKind {
    /// The execution already finished (`ErrRunFinished`).
    RunFinished,
    /// The driver or transport cannot deliver this timing (`ErrMessageUnsupported`).
    Unsupported(String),
    /// Messaging is disabled by policy (`ErrMessageUnsupported`).
    Disabled,
    /// The framed text exceeds the driver's limit.
    TooLarge {
        /// Framed size.
        size: u64,
        /// Limit.
        max: u64,
    },
    /// The send was cancelled (or the execution was) before admission.
    Cancelled,
}

/// A send-admission error. `text` preserves the rejected original.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("message {id:?} not admitted: {}", describe(.kind))]
pub struct MessageError {
    /// Message id (empty when none was set or generated yet).
    pub id: String,
    /// The original text.
    pub text: String,
    /// Why.
    pub kind: MessageErrorKind,
}

fn describe(kind: &MessageErrorKind) -> String {
    match kind {
        MessageErrorKind::RunFinished => "the run has finished".into(),
        MessageErrorKind::Unsupported(why) => format!("unsupported: {why}"),
        MessageErrorKind::Disabled => "messages are disabled by policy".into(),
        MessageErrorKind::TooLarge { size, max } => format!("too large ({size} > {max} bytes)"),
        MessageErrorKind::Cancelled => "cancelled".into(),
    }
}

impl MessageError {
    /// The stable machine code.
    pub fn code(&self) -> &'static str {
        match self.kind {
            MessageErrorKind::RunFinished => "run_finished",
            MessageErrorKind::Unsupported(_) => "message_unsupported",
            MessageErrorKind::Disabled => "messages_disabled",
            MessageErrorKind::TooLarge { .. } => "message_too_large",
            MessageErrorKind::Cancelled => "message_cancelled",
        }
    }
}

/// Why an approval response was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApprovalError {
    /// Already answered (`ErrApprovalResolved`).
    #[error("approval already resolved")]
    Resolved,
    /// Expired or withdrawn (`ErrApprovalExpired`; also counts as resolved).
    #[error("approval expired")]
    Expired,
    /// The response does not fit the request kind (`ErrApprovalKindMismatch`).
    #[error("{response} is not valid for a {kind:?} request")]
    KindMismatch {
        /// The request kind.
        kind: DecisionKind,
        /// The attempted response.
        response: &'static str,
    },
    /// The request has no live responder (replayed, or unbound) (`ErrApprovalUnavailable`).
    #[error("approval has no live responder")]
    Unavailable,
}

impl ApprovalError {
    /// True for Resolved and Expired (Expired also matches Resolved).
    pub fn is_resolved(&self) -> bool {
        matches!(self, ApprovalError::Resolved | ApprovalError::Expired)
    }

    /// The stable machine code.
    pub fn code(&self) -> &'static str {
        match self {
            ApprovalError::Resolved => "approval_resolved",
            ApprovalError::Expired => "approval_expired",
            ApprovalError::KindMismatch { .. } => "approval_kind_mismatch",
            ApprovalError::Unavailable => "approval_unavailable",
        }
    }
}
