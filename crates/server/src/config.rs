//! The service configuration: bind address, store, agents, tenants and their API keys, limits, retention,
//! CORS, keep-alive and shutdown timing, connection limits. [`super::file`] reads it from a TOML file.

use std::net::SocketAddr;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::auth::TenantSpec;
use super::connections::Connections;
use super::ip_limits::IpLimits;
use super::limits::Limits;
use super::proxies::TrustedProxies;
use super::resources::RequestGrants;
use super::retention::RetentionSettings;
use super::telemetry::LogFormat;
use crate::profile::{Resources, Selection};
use crate::recorder::ExposurePolicy;
use crate::vocab::{McpServer, ServiceSpec, SkillRef};
use crate::workspace::WorkspaceSpec;

/// One agent the service offers: a name in the URL, the provider that drives it and its configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentSpec {
    /// The name in `/v1/agents/{agent}`.
    pub name: String,
    /// The provider (`reference`, `codebuddy`, `cursor`, ...; see [`crate::providers::registry::PROVIDERS`]).
    pub provider: String,
    /// The provider's driver configuration (its config type as JSON; `{}` for defaults).
    #[serde(default)]
    pub config: Value,
    /// What the agent's recorded events keep (per-agent default of the exposure policy).
    #[serde(default)]
    pub exposure: ExposurePolicy,
    /// Instructions added to every run (the system prompt where the provider allows, else a prompt
    /// prefix); a request's `instructions` come after them.
    #[serde(default)]
    pub instructions: Option<String>,
    /// MCP servers every run of the agent gets (written into the provider's native configuration).
    #[serde(default)]
    pub mcp: Vec<McpServer>,
    /// Skills every run of the agent gets.
    #[serde(default)]
    pub skills: Vec<SkillRef>,
    /// Skills a run request may add by key (`"skills": ["key"]`); unknown keys are refused.
    #[serde(default)]
    pub skill_library: Vec<SkillRef>,
    /// How each run's workspace is provisioned (`{type = "git_worktree", ...}`: a fresh worktree of the
    /// agent's `directory` per run, removed after it); the directory itself when unset.
    #[serde(default)]
    pub workspace: Option<WorkspaceSpec>,
    /// Keep each run's provisioned workspace (a git worktree and its branch) after the run, for review;
    /// by default it is removed.
    #[serde(default)]
    pub keep_workspaces: bool,
    /// Runtime services every run of the agent gets, ensured by the agent's service manager (given in
    /// code: `HostResources::service_manager`; declaring services without one refuses to start).
    #[serde(default)]
    pub services: Vec<ServiceSpec>,
    /// Services a run request may name (`"services": ["name"]`, only where `allow_request.services` is
    /// set): the operator's specs, picked by name; unknown names are refused.
    #[serde(default)]
    pub service_catalog: Vec<ServiceSpec>,
    /// The agent's provider profile (`{kind = "native"}`, `{kind = "dedicated", dir = "..."}`,
    /// `{kind = "clone_native", options = {...}}`, ...; the driver's own dir by default). Operator-only:
    /// a request never chooses a profile.
    #[serde(default)]
    pub profile: Selection,
    /// What the profile holds (skills, instructions, subagents, config patches, MCP servers),
    /// materialized into a managed profile dir before a launch finds it out of date.
    #[serde(default)]
    pub profile_resources: Resources,
    /// What a run request may add beyond skills from the library (off by default).
    #[serde(default)]
    pub allow_request: RequestGrants,
    /// Each run's event buffer (spec §6.3): its capacity and whether a full buffer makes the driver
    /// wait instead of dropping content deltas (counted in `dropped` events).
    #[serde(default)]
    pub events: EventsSpec,
}

/// An agent's run event buffer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventsSpec {
    /// Ordinary events a run buffers before backpressure applies (default 1024; 1 to 1,000,000).
    #[serde(default)]
    pub buffer: Option<usize>,
    /// Wait for room instead of dropping content deltas (the whole run is recorded, at the speed of its
    /// slowest stage: the pump, or the store behind it; never a client).
    #[serde(default)]
    pub blocking: bool,
}

impl AgentSpec {
    /// An agent `name` driven by `provider` with a default configuration.
    pub fn new(name: impl Into<String>, provider: impl Into<String>) -> Self {
        AgentSpec {
            name: name.into(),
            provider: provider.into(),
            config: Value::Object(Default::default()),
            exposure: ExposurePolicy::default(),
            instructions: None,
            mcp: Vec::new(),
            skills: Vec::new(),
            skill_library: Vec::new(),
            workspace: None,
            keep_workspaces: false,
            services: Vec::new(),
            service_catalog: Vec::new(),
            profile: Selection::Default,
            profile_resources: Resources::default(),
            allow_request: RequestGrants::default(),
            events: EventsSpec::default(),
        }
    }

    /// Replaces the driver configuration.
    pub fn with_config(mut self, config: Value) -> Self {
        self.config = config;
        self
    }
}

/// What the AG-UI route does with a user message that arrives while a run is active on the thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BusyPolicy {
    /// Refuse the second run with `409 thread_busy` before streaming.
    #[default]
    Refuse,
    /// Deliver the message to the active run as a supplemental message, and stream nothing new.
    Supplement,
}

/// The whole configuration of one service instance.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Where to listen (`127.0.0.1:0` picks a free port).
    pub bind: SocketAddr,
    /// The store URL (`memory:`, `sqlite://path`, `postgres://...`).
    pub store_url: String,
    /// The agents, in order; the first is the default agent of `POST /v1/agui`.
    pub agents: Vec<AgentSpec>,
    /// Add one agent per supported CLI found on `PATH` (or named by `AGENT_ADAPTOR_<P>_BIN`).
    pub discover_clis: bool,
    /// Allowed CORS origins; `*` allows any; empty disables CORS headers.
    pub cors_origins: Vec<String>,
    /// The SSE keep-alive comment interval.
    pub keep_alive: Duration,
    /// How long an ACP-over-HTTP connection lives with no stream receiver and no request (`None`:
    /// [`super::acp_http::IDLE`]).
    pub acp_idle: Option<Duration>,
    /// How long graceful shutdown waits for runs to finish after cancelling them.
    pub shutdown_grace: Duration,
    /// How long an unanswered approval request waits.
    pub approval_timeout: Duration,
    /// The largest accepted request body.
    pub body_limit: usize,
    /// What the AG-UI route does when a run is already active on the thread.
    pub busy_policy: BusyPolicy,
    /// Delay between streamed chunks of the built-in `reference` agent (so streaming is visible).
    pub reference_chunk_delay: Duration,
    /// The replica id that owns the runs this process starts.
    pub owner: String,
    /// Serve on a non-loopback address although the service has no API keys yet (dev mode). Off by
    /// default: without it, [`Server::start`](super::Server::start) refuses such an address.
    pub allow_remote_without_auth: bool,
    /// The tenants and their API keys. With no key at all the service is in dev mode: every request is
    /// tenant `default` and only loopback binds are allowed (unless `allow_remote_without_auth`).
    pub tenants: Vec<TenantSpec>,
    /// The default per-tenant limits (each tenant may override them).
    pub limits: Limits,
    /// The retention of the run event log, enforced by a background task.
    pub retention: RetentionSettings,
    /// The per-client-IP limit of unauthenticated requests (off by default).
    pub ip_limits: IpLimits,
    /// The listener's connection limits: header, body and idle timeouts, global and per-IP bounds.
    pub connections: Connections,
    /// The peers whose `X-Forwarded-For` names the client (none by default).
    pub trusted_proxies: TrustedProxies,
    /// How `serve` writes its logs (the library never installs a subscriber itself).
    pub log_format: LogFormat,
    /// How many of a run's events may be published live before the store committed them; beyond this
    /// the run's pump waits for the store (backpressure, counted in `/metrics`).
    pub record_backlog: usize,
    /// How many committed events of each run stay in memory for live subscribers; a subscriber further
    /// behind reads them from the store (memory per run is bounded by this plus `record_backlog`).
    pub live_window: usize,
    /// The price table that turns tokens into an estimated cost (`[[prices]]`; first match wins).
    pub prices: Vec<super::metering::Price>,
    /// Budgets that refuse and stop runs (`[[budgets]]`).
    pub budgets: Vec<super::budget::BudgetSpec>,
    /// The caps on kept CLI processes and admitted runs (`[processes]`; unset: from `MemAvailable`).
    pub processes: super::capacity::Processes,
    /// How long a drain (SIGTERM) lets active runs finish before it interrupts them.
    pub drain_grace: Duration,
    /// Webhook delivery: attempts, backoff, timeout, the private-target policy (`[webhooks]`).
    pub webhooks: super::webhooks::WebhookSettings,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            bind: SocketAddr::from(([127, 0, 0, 1], 8080)),
            store_url: "memory:".into(),
            agents: vec![AgentSpec::new("reference", "reference")],
            discover_clis: true,
            cors_origins: Vec::new(),
            keep_alive: Duration::from_secs(15),
            acp_idle: None,
            shutdown_grace: Duration::from_secs(10),
            approval_timeout: Duration::from_secs(300),
            body_limit: 1024 * 1024,
            busy_policy: BusyPolicy::Refuse,
            reference_chunk_delay: Duration::from_millis(20),
            owner: format!("replica-{}", uuid::Uuid::now_v7()),
            allow_remote_without_auth: false,
            tenants: Vec::new(),
            limits: Limits::default(),
            retention: RetentionSettings::default(),
            ip_limits: IpLimits::default(),
            connections: Connections::default(),
            trusted_proxies: TrustedProxies::default(),
            log_format: LogFormat::Text,
            record_backlog: crate::record::MAX_UNRECORDED,
            live_window: crate::runlog::LIVE_WINDOW,
            prices: Vec::new(),
            budgets: Vec::new(),
            processes: super::capacity::Processes::default(),
            drain_grace: Duration::from_secs(30),
            webhooks: super::webhooks::WebhookSettings::default(),
        }
    }
}

impl ServerConfig {
    /// An in-process test configuration: port 0, memory store, only the `reference` agent (no chunk delay),
    /// no CLI discovery, CORS open.
    pub fn for_tests() -> Self {
        ServerConfig {
            bind: SocketAddr::from(([127, 0, 0, 1], 0)),
            discover_clis: false,
            cors_origins: vec!["*".into()],
            reference_chunk_delay: Duration::ZERO,
            ..Default::default()
        }
    }
}
