//! What the core hands a Driver for one invocation ([`Request`]) and what the Driver returns
//! ([`Response`]).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::payload::{JsonMap, TranscriptItem, Usage};
use super::policy::{Identity, Policy};
use super::session::{Checkpoint, SessionState};
use crate::vocab::McpServer;

/// How the provider session starts.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum SessionPlan {
    /// A fresh provider session.
    #[default]
    Fresh,
    /// Resume this state.
    Resume(SessionState),
    /// Fork this state into a new provider session (the parent is untouched).
    Fork(SessionState),
}

/// `s` as a file-name-safe label: ASCII letters, digits and `-` kept, anything else `_` (for per-run
/// file and directory names built from a run id).
pub fn file_label(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// A JSON Schema the provider must honour natively.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputSchema {
    /// The schema (self-contained: local references inlined where the provider needs it).
    pub schema: Value,
    /// Schema name.
    pub name: String,
}

/// The profile dir the core resolved for this invocation (`profile::Selection` other than the default,
/// or a default profile with resources): the driver runs its CLI with it as its config dir.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileTarget {
    /// The config dir (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`).
    pub dir: PathBuf,
    /// Whether the SDK may write into it; `false` for the user's native dir, which the driver must
    /// leave untouched (its own files go elsewhere).
    pub managed: bool,
}

/// One driver invocation.
#[derive(Debug, Clone)]
pub struct Request {
    /// SDK execution id.
    pub run_id: String,
    /// Host thread key; `None` for direct Agent sends.
    pub thread_key: Option<String>,
    /// The prompt (already carrying any instructions/recovery prefix the core added).
    pub prompt: String,
    /// Extra instructions for the system prompt (only set when the driver declares
    /// `system_prompt_append`; otherwise the core prefixes the prompt).
    pub instructions: Option<String>,
    /// Model override.
    pub model: Option<String>,
    /// Resolved working directory.
    pub cwd: PathBuf,
    /// Extra environment for the provider process (runtime services, tools).
    pub env: BTreeMap<String, String>,
    /// The policy as the caller set it; use its `effective_*` helpers for defaults.
    pub policy: Policy,
    /// Native output schema, when the core chose native structured output.
    pub output_schema: Option<OutputSchema>,
    /// MCP servers for this invocation, already checked against the descriptor's `mcp` capabilities
    /// (empty unless the driver declares MCP support).
    pub mcp: Vec<McpServer>,
    /// Skills the core materialized for this execution (each a directory holding `SKILL.md`); empty
    /// unless the driver declares skill support. The directories live until the execution ends.
    pub skills: Vec<crate::skills::MaterializedSkill>,
    /// The profile dir; `None`: the driver's own default.
    pub profile: Option<ProfileTarget>,
    /// Session plan.
    pub session: SessionPlan,
    /// Force a fresh process and do not register it for reuse.
    pub spawn: bool,
    /// Execution deadline, when one applies (the core enforces it too).
    pub timeout: Option<Duration>,
    /// Caller identity.
    pub identity: Identity,
    /// Caller metadata.
    pub metadata: BTreeMap<String, String>,
}

impl Request {
    /// A minimal fresh request (tests and simple hosts).
    pub fn new(run_id: impl Into<String>, prompt: impl Into<String>, cwd: impl Into<PathBuf>) -> Self {
        Request {
            run_id: run_id.into(),
            thread_key: None,
            prompt: prompt.into(),
            instructions: None,
            model: None,
            cwd: cwd.into(),
            env: BTreeMap::new(),
            policy: Policy::default(),
            output_schema: None,
            mcp: Vec::new(),
            skills: Vec::new(),
            profile: None,
            session: SessionPlan::Fresh,
            spawn: false,
            timeout: None,
            identity: Identity::default(),
            metadata: BTreeMap::new(),
        }
    }
}

/// The last recognized official terminal frame of the provider.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TerminalPayload {
    /// The provider-native event name (`result`, `turn.completed`, …).
    pub event: String,
    /// The exact JSON of the frame.
    pub json: Value,
}

/// Complete raw provider output across invocations.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RawStreams {
    /// Complete stdout bytes.
    #[serde(default, with = "lossy_bytes")]
    pub stdout: Vec<u8>,
    /// Complete stderr bytes.
    #[serde(default, with = "lossy_bytes")]
    pub stderr: Vec<u8>,
    /// The last terminal payload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminal: Option<TerminalPayload>,
}

impl RawStreams {
    /// Appends another invocation's streams (the later terminal wins).
    pub fn append(&mut self, other: &RawStreams) {
        self.stdout.extend_from_slice(&other.stdout);
        self.stderr.extend_from_slice(&other.stderr);
        if other.terminal.is_some() {
            self.terminal.clone_from(&other.terminal);
        }
    }
}

mod lossy_bytes {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&String::from_utf8_lossy(v))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        Ok(String::deserialize(d)?.into_bytes())
    }
}

/// A provider-classified failure code.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureCode {
    /// The provider reported an error, or exited abnormally.
    AgentError,
    /// A decision was rejected and the fallback aborted.
    DecisionRejected,
    /// A decision timed out and the fallback aborted.
    DecisionTimeout,
    /// The invocation was cancelled.
    Cancelled,
    /// The provider broke its protocol (missing terminal, frames after the terminal…).
    Protocol,
    /// The provider refused to resume the session (safe to retry fresh once).
    ResumeRejected,
    /// Rate limited (retryable).
    RateLimited,
    /// Network failure reaching the model (retryable).
    Network,
    /// The model server failed (5xx, overloaded; retryable).
    ProviderServer,
    /// Anything else, verbatim.
    Other(String),
}

impl FailureCode {
    /// True for rate-limit, network and provider-server failures (Standby may retry once).
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            FailureCode::RateLimited | FailureCode::Network | FailureCode::ProviderServer
        )
    }

    /// The wire name.
    pub fn as_str(&self) -> &str {
        match self {
            FailureCode::AgentError => "agent_error",
            FailureCode::DecisionRejected => "decision_rejected",
            FailureCode::DecisionTimeout => "decision_timeout",
            FailureCode::Cancelled => "cancelled",
            FailureCode::Protocol => "protocol_error",
            FailureCode::ResumeRejected => "resume_rejected",
            FailureCode::RateLimited => "rate_limited",
            FailureCode::Network => "network_error",
            FailureCode::ProviderServer => "provider_server_error",
            FailureCode::Other(s) => s,
        }
    }
}

/// A failure the driver confirmed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    /// Classification.
    pub code: FailureCode,
    /// Human-readable message.
    pub message: String,
    /// Provider details.
    #[serde(default, skip_serializing_if = "JsonMap::is_empty")]
    pub details: JsonMap,
    /// A structured retry-after hint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after: Option<Duration>,
}

impl Failure {
    /// A failure with a code and a message.
    pub fn new(code: FailureCode, message: impl Into<String>) -> Self {
        Failure {
            code,
            message: message.into(),
            details: JsonMap::new(),
            retry_after: None,
        }
    }
}

/// How the provider process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ExitInfo {
    /// Exit code, when it exited.
    pub code: Option<i32>,
    /// Signal, when it was killed.
    pub signal: Option<i32>,
}

impl ExitInfo {
    /// True for exit code 0 without a signal.
    pub fn success(&self) -> bool {
        self.code == Some(0) && self.signal.is_none()
    }
}

/// What a driver returns for one invocation.
#[derive(Debug, Clone, Default)]
pub struct Response {
    /// The final provider turn's assistant-facing answer (never a raw stdout dump).
    pub text: String,
    /// Optional short host-facing label.
    pub summary: String,
    /// Effective model.
    pub model: String,
    /// Effective provider.
    pub provider: String,
    /// Observed usage; `None` when unobserved.
    pub usage: Option<Usage>,
    /// Driver metadata.
    pub metadata: BTreeMap<String, String>,
    /// Raw output.
    pub raw: RawStreams,
    /// Normalized transcript; driver-emitted transcript notices mirror it exactly.
    pub transcript: Vec<TranscriptItem>,
    /// Checkpoint, when the provider reported a session.
    pub checkpoint: Option<Checkpoint>,
    /// A confirmed failure.
    pub failure: Option<Failure>,
    /// Process exit, for process-backed drivers.
    pub exit: Option<ExitInfo>,
    /// Native structured output, when requested.
    pub structured: Option<Value>,
}

impl Response {
    /// A failed response with a code and message.
    pub fn failed(code: FailureCode, message: impl Into<String>) -> Self {
        Response {
            failure: Some(Failure::new(code, message)),
            ..Default::default()
        }
    }
}
