//! The Driver SPI: what a provider implements, and what the core hands it for each invocation.
//!
//! The core owns option resolution, the message queue and its accounting, thread coordination,
//! approvals policy and the final result. A Driver owns its provider's official protocol: it
//! parses it in one pass, publishes events through the [`EventSink`], claims supplemental input
//! at the boundaries it declared through the [`MessagePort`], asks decisions through the
//! [`DecisionSink`], and returns one [`Response`] with a healthy checkpoint only after a clean,
//! official success.
//!
//! This layer knows nothing about HTTP, AG-UI or stores, and never imports the runtime.

pub mod config;
pub mod decisions;
pub mod descriptor;
pub mod inspect;
pub mod messages;
pub mod payload;
pub mod policy;
pub mod process;
pub mod request;
pub mod session;
pub mod sink;

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

pub use config::CommonConfig;
pub use decisions::{
    DecisionBackend, DecisionChoice, DecisionKind, DecisionOutcome, DecisionRequest, DecisionSink,
};
pub use descriptor::{
    ContinueMode, Descriptor, McpCaps, MessageCaps, ProcessCaps, RunPolicyCaps, SessionCaps, SkillCaps,
    StreamCaps, StructuredCaps,
};
pub use inspect::{
    CheckStatus, ConfigField, ConfigSchema, EnvironmentCheck, EnvironmentReport, InspectError, ModelInfo,
    QuotaReport, QuotaWindow,
};
pub use messages::{
    Ack, Author, AuthorKind, Boundary, ClaimFields, ClaimedMessage, MessageBackend, MessageFailure,
    MessagePort, Pending, Timing,
};
pub use payload::{
    JsonMap, Notice, Phase, ProcessInfo, ProcessKind, Role, SubagentKind, SubagentUpdate, TextDelta,
    Thinking, ToolCall, ToolResult, TranscriptItem, TranscriptKind, TranscriptMessage, Usage, notice_kind,
};
pub use policy::{
    ApprovalMode, ApprovalPolicy, DecisionMode, FallbackAction, FeatureLevel, Identity, MessageContext,
    MessagePolicy, Policy, QuestionMode, SandboxLevel,
};
pub use request::{
    ExitInfo, Failure, FailureCode, OutputSchema, ProfileTarget, RawStreams, Request, Response, SessionPlan,
    TerminalPayload, file_label,
};
pub use session::{Checkpoint, JsonSessionCodec, SessionCodec, SessionState};
pub use sink::{DriverEvent, EventSink, SinkBackend, SourceMeta, TurnReport};

/// A configuration the driver refuses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {driver} driver configuration: {reason}")]
pub struct InvalidConfig {
    /// Driver type.
    pub driver: String,
    /// Why.
    pub reason: String,
}

/// Everything the core hands a Driver for one invocation besides the [`Request`].
#[derive(Debug, Clone)]
pub struct RunIo {
    /// Publish events here.
    pub events: EventSink,
    /// Supplemental input; `None` when messaging is disabled by policy.
    pub messages: Option<MessagePort>,
    /// Ask decisions here.
    pub decisions: DecisionSink,
    /// Cancelled when the execution is cancelled, times out, loses its lease or the Agent closes.
    /// The driver stops its provider (escalating) and returns promptly with what it has.
    pub cancel: CancellationToken,
}

/// A provider driver.
///
/// Implementations capture their configuration at construction; `descriptor` must be
/// deterministic. Optional capabilities have default implementations that declare absence.
#[async_trait::async_trait]
pub trait Driver: Send + Sync + 'static {
    /// The static capability declaration.
    fn descriptor(&self) -> Descriptor;

    /// Checks the captured configuration.
    fn validate_config(&self) -> Result<(), InvalidConfig>;

    /// The driver's [`CommonConfig`], when it has one. The core honours its `directory` (the working
    /// directory of a run that names no workspace) and its `timeout` (the execution deadline of a run
    /// whose options set none) for every driver, uniformly.
    fn common_config(&self) -> Option<&CommonConfig> {
        None
    }

    /// Runs one invocation to completion. Never panics on provider input; every failure is in
    /// the returned [`Response`].
    async fn run(&self, request: Request, io: RunIo) -> Response;

    /// The session codec; required when `descriptor().sessions.resume` is true.
    fn session_codec(&self) -> Option<Arc<dyn SessionCodec>> {
        None
    }

    /// A stable fingerprint of everything in the construction config that the provider session
    /// depends on; required for resume.
    fn session_fingerprint(&self) -> Option<String> {
        None
    }

    /// The config dir this driver uses by default for the identity profile `profile` (the profile
    /// dir of `profile::Selection::Default`); `None` when it has none.
    fn profile_dir(&self, _profile: &str) -> Option<std::path::PathBuf> {
        None
    }

    /// The message capability for `request` (narrowing the descriptor, e.g. below a minimum CLI
    /// version or on a transport without in-run delivery).
    fn resolve_messages(&self, _request: &Request) -> MessageCaps {
        self.descriptor().messages
    }

    /// Environment health and detected version.
    async fn environment(&self) -> Result<EnvironmentReport, InspectError> {
        Err(InspectError::Unavailable { what: "environment" })
    }

    /// Models the provider offers.
    async fn models(&self) -> Result<Vec<ModelInfo>, InspectError> {
        Err(InspectError::Unavailable { what: "models" })
    }

    /// Quota windows.
    async fn quota(&self) -> Result<QuotaReport, InspectError> {
        Err(InspectError::Unavailable { what: "quota" })
    }

    /// The configuration schema.
    fn config_schema(&self) -> Option<ConfigSchema> {
        None
    }

    /// Stops every persistent provider process this driver keeps (called by `Agent::close`).
    /// Required when `descriptor().process.persistent` is true.
    async fn close_processes(&self) -> Result<(), String> {
        Ok(())
    }
}
