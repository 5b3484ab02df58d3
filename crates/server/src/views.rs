//! The response bodies of the service: every handler builds its JSON from one of these `Serialize +
//! ToSchema` types, so the OpenAPI document (`super::openapi`) describes exactly what is sent. Objects are
//! closed (`additionalProperties: false`): a field added to a response without a schema change fails the
//! live validation test (`tests/it/server/schemas.rs`).
//!
//! Values the service passes through from the driver or the runtime (descriptors, inspection reports,
//! run results, approval details) stay JSON objects here; their own types live below the service layer.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use crate::store::RunState;

/// The one error body of the service.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ErrorBody {
    /// The error.
    pub error: ErrorDetail,
}

/// The error inside [`ErrorBody`].
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ErrorDetail {
    /// The stable machine code; each code has exactly one HTTP status (`ErrorCode::status`). From the
    /// listener, before any route: `too_many_connections` (503), `malformed_request` (400),
    /// `uri_too_long` (414), `headers_too_large` (431). A 5xx message is generic and names an error id
    /// under which the service logged the cause.
    pub code: super::error::ErrorCode,
    /// A human-readable message.
    pub message: String,
    /// The offending request field, when one is known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
}

/// `GET /healthz` and `GET /readyz`.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Health {
    /// `ok` or `ready`.
    pub status: String,
    /// The store backend (`/readyz` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub store: Option<String>,
}

/// An agent.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentView {
    /// The agent's name.
    pub name: String,
    /// The provider driving it (`claude`, `codex`, `codebuddy`, ...).
    pub provider: String,
    /// The driver descriptor (capabilities; `docs/capabilities.md`).
    #[schema(value_type = Object)]
    pub descriptor: Value,
    /// What the agent is configured with and what a run request may add.
    pub resources: ResourcesView,
}

/// An agent's resources as a client may see them: names and keys, never URLs, headers or paths.
#[derive(Debug, Clone, Default, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ResourcesView {
    /// Whether the agent adds instructions of its own to every run.
    pub instructions: bool,
    /// The MCP servers every run gets, as `name:transport`.
    pub mcp: Vec<String>,
    /// The skills every run gets, by key.
    pub skills: Vec<String>,
    /// The skills a run request may add (`"skills": [key]`).
    pub skill_library: Vec<String>,
    /// The workspace provisioning (`shared`, `git_worktree`, `driver_managed`).
    pub workspace: String,
    /// A run request may add HTTP/SSE MCP servers.
    pub request_mcp: bool,
    /// A run request may choose its workspace spec.
    pub request_workspace: bool,
    /// The agent has host tools (served over its loopback MCP server).
    pub host_tools: bool,
    /// The runtime services every run gets, by name.
    pub services: Vec<String>,
    /// The services a run request may name (`"services": [name]`, with `request_services`).
    pub service_catalog: Vec<String>,
    /// A run request may name services from the catalog.
    pub request_services: bool,
}

/// `GET /v1/agents`.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentList {
    /// The agents.
    pub agents: Vec<AgentView>,
    /// The default agent (used by `POST /v1/agui`).
    pub default: Option<String>,
}

/// One probe of an inspection that did not answer.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ProbeError {
    /// `environment`, `models`, `quota`, `config_schema`, `skills` or `profile`.
    pub probe: String,
    /// `unavailable` (the driver does not offer it), `failed` (it ran and failed) or `timeout`.
    pub code: String,
    /// A human-readable message (server paths replaced by placeholders such as `<path>`).
    pub message: String,
}

/// `GET /v1/agents/{agent}/inspect`: the driver's inspection report. Each probe runs with the service's
/// inspect timeout; a probe that did not answer is `null` and listed in `errors`.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct InspectView {
    /// The agent.
    pub agent: String,
    /// The provider.
    pub provider: String,
    /// Environment health: checks, detected version, effective message capability.
    #[schema(value_type = Option<Object>)]
    pub environment: Option<Value>,
    /// The models the provider offers.
    #[schema(value_type = Option<Vec<Object>>)]
    pub models: Option<Value>,
    /// Quota windows.
    #[schema(value_type = Option<Object>)]
    pub quota: Option<Value>,
    /// The driver's configuration schema.
    #[schema(value_type = Option<Object>)]
    pub config_schema: Option<Value>,
    /// The skills report: driver support, the agent's skills (key, source kind, `SKILL.md` name and
    /// description, or an error code per skill), the selection, the profile's skills, the catalogue.
    #[schema(value_type = Option<Object>)]
    pub skills: Option<Value>,
    /// The profile state (observe only; no server path: the dir and source fields are left out, also from
    /// the selection, and warnings name paths only by placeholders such as `<profile dir>`).
    #[schema(value_type = Option<Object>)]
    pub profile: Option<Value>,
    /// The probes that did not answer.
    pub errors: Vec<ProbeError>,
}

/// Links of a live run.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RunLinks {
    /// The run.
    #[serde(rename = "self")]
    pub self_: String,
    /// Its SSE events.
    pub events: String,
    /// Its approvals.
    pub approvals: String,
}

impl RunLinks {
    /// The links of run `run_id`.
    pub fn of(run_id: &str) -> Self {
        RunLinks {
            self_: format!("/v1/runs/{run_id}"),
            events: format!("/v1/runs/{run_id}/events"),
            approvals: format!("/v1/runs/{run_id}/approvals"),
        }
    }
}

/// A run.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RunView {
    /// The run id.
    pub run_id: String,
    /// The agent.
    pub agent: String,
    /// The thread key, for a run on a thread.
    pub thread_key: Option<String>,
    /// The lifecycle state.
    #[schema(value_type = String, example = "running")]
    pub state: RunState,
    /// The result of a finished run (`text`, `turns`, `summary`, and `usage`: the metered input, output
    /// and cached tokens, `cost_usd`, `cost_source`, `wall_seconds`, `cpu_seconds`, whatever the agent's
    /// exposure policy); a failed run's is its partial result.
    #[schema(value_type = Option<Object>)]
    pub result: Option<Value>,
    /// The error of a failed or cancelled run (`code`, `reason`, `message`, `details`).
    #[schema(value_type = Option<Object>)]
    pub error: Option<Value>,
    /// When the run started.
    pub created_at: DateTime<Utc>,
    /// Links (runs of this process only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub links: Option<RunLinks>,
}

/// A choice offered by an approval request.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ChoiceView {
    /// The key to answer with.
    pub key: String,
    /// The label.
    pub label: String,
    /// A longer description.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
}

/// An approval request (permission, plan review or question), with whether it is still pending.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ApprovalView {
    /// The approval id.
    pub id: String,
    /// The run that asked.
    pub run_id: String,
    /// `permission`, `plan_review` or `question`.
    pub kind: String,
    /// What is asked.
    pub title: String,
    /// Who asks (the tool or the agent).
    pub source: String,
    /// The tool call it gates, when any.
    pub tool_call_id: String,
    /// The choices.
    pub choices: Vec<ChoiceView>,
    /// Redacted details.
    #[schema(value_type = Object)]
    pub details: Value,
    /// When it was asked.
    pub created_at: DateTime<Utc>,
    /// When it expires.
    pub deadline: Option<DateTime<Utc>>,
    /// The delivery attempt.
    pub attempt: u32,
    /// Still waiting for an answer.
    pub pending: bool,
    /// How it ended, once it did: `approved`, `denied`, `answered`, `expired` (its deadline passed or the
    /// provider withdrew it) or `cancelled` (its run ended without an answer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
}

/// `GET /v1/runs/{run_id}/approvals`.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ApprovalList {
    /// The approval requests.
    pub approvals: Vec<ApprovalView>,
}

/// The answer to `POST /v1/runs/{run_id}/approvals/{id}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DecisionAccepted {
    /// The approval id.
    pub id: String,
    /// The run.
    pub run_id: String,
    /// The decision as recorded.
    pub decision: super::rest::DecisionBody,
}

/// The answer to `POST /v1/runs/{run_id}/messages` and `POST …/standby/messages`.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MessageAccepted {
    /// The message id.
    pub message_id: String,
    /// The run (absent for a Standby, whose input may start a new execution).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
}

/// A thread in a listing.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ThreadSummary {
    /// The thread key.
    pub key: String,
    /// `active` or `archived`.
    pub status: String,
    /// The driver type that owns the thread's checkpoint.
    pub driver_type: String,
    /// Created.
    pub created_at: DateTime<Utc>,
    /// Updated.
    pub updated_at: DateTime<Utc>,
}

/// `GET /v1/agents/{agent}/threads`.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ThreadList {
    /// The page.
    pub threads: Vec<ThreadSummary>,
    /// The `after` of the next page, when there may be one.
    pub next_after: Option<String>,
}

/// A thread's checkpoint audit.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckpointView {
    /// The internal session record id.
    pub record_id: String,
    /// The provider's resume id.
    pub resume_id: String,
    /// The session codec.
    pub codec: String,
    /// The compatibility fingerprint.
    pub fingerprint: String,
    /// When it was persisted.
    pub updated_at: DateTime<Utc>,
    /// True while the newest checkpoint is held in process because the store failed.
    pub pending_persistence: bool,
}

/// The defaults a created thread applies to its runs (a run's own fields win).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ThreadDefaults {
    /// Model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Caller metadata (merged under each run's).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metadata: BTreeMap<String, String>,
    /// The approval policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<super::ranges::ApprovalsBody>)]
    pub approvals: Option<crate::driver::ApprovalPolicy>,
}

/// `GET /v1/agents/{agent}/threads/{key}`, and the answer to create and fork.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ThreadView {
    /// The thread key.
    pub key: String,
    /// The run active on the thread.
    pub active_run: Option<String>,
    /// The checkpoint audit (none before the first successful run).
    pub checkpoint: Option<CheckpointView>,
    /// The defaults given at creation (threads created through the service).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub defaults: Option<ThreadDefaults>,
    /// The thread this one was forked from; the first run starts from its checkpoint.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forked_from: Option<String>,
    /// True while a Standby owns the thread.
    pub standby: bool,
}

/// `POST /v1/agents/{agent}/threads/{key}/archive`.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ArchivedThread {
    /// The thread key.
    pub key: String,
    /// `archived`.
    pub status: String,
}

/// One recorded event of a thread's history.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct HistoryEvent {
    /// The cursor (pass as `after`).
    pub cursor: u64,
    /// The run that recorded it.
    pub run_id: String,
    /// Its sequence within the run.
    pub sequence: u64,
    /// The event kind.
    pub kind: String,
    /// The event, under the agent's exposure policy.
    #[schema(value_type = Object)]
    pub event: Value,
}

/// `GET /v1/agents/{agent}/threads/{key}/events`.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct HistoryPage {
    /// The page.
    pub events: Vec<HistoryEvent>,
    /// The cursor of the last event.
    pub next_after: Option<u64>,
}

/// A Standby: a server-lifetime conversation handle on a thread.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StandbyView {
    /// The agent.
    pub agent: String,
    /// The thread key.
    pub key: String,
    /// True until it is released (or the service stops).
    pub live: bool,
    /// When it was opened.
    pub opened_at: DateTime<Utc>,
    /// Executions it started so far (each a run: `GET /v1/runs/{run_id}`).
    pub executions: u64,
    /// The run id of its latest execution, if any.
    pub last_run_id: Option<String>,
    /// Its SSE events (every execution, each `run_started` … `done`; `id:` = `<execution>:<seq>`).
    pub events_url: String,
}
