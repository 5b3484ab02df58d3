//! Runtime services (spec §12): the Agent's [`ServiceManager`] ensures declarative
//! [`ServiceSpec`]s per execution; run-scoped [`RunServiceProvider`]s attach to every execution and
//! hand back a [`RunAttachment`] (services, a prompt preamble, an event source folded into the run's
//! stream, subagent results). `run` holds the per-execution orchestration; the order is documented
//! on `runtime::execution`.

mod run;

use std::collections::BTreeMap;
use std::sync::Arc;

use futures::stream::BoxStream;
use tokio_util::sync::CancellationToken;

use super::event::Payload;
use super::result::SubagentResult;
use crate::driver::Identity;
use crate::vocab::{ServiceRef, ServiceSpec};
use crate::workspace::WorkspaceLease;

pub(crate) use run::{CLEANUP_BOUND, Published, RunServices, ServicePlan};

/// Why a service could not be ensured, attached, released or detached.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ServiceError {
    /// A desired service cannot be provided.
    #[error("service {name:?} unavailable: {reason}")]
    Unavailable {
        /// The service.
        name: String,
        /// Why.
        reason: String,
    },
    /// The backend failed.
    #[error("service backend failed: {0}")]
    Backend(String),
}

/// What a [`ServiceManager`] is asked to ensure for one execution.
///
/// The spec's `Config` (the driver's configuration) is not part of it: drivers do not expose their
/// configuration generically; the driver type and identity are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceRequest {
    /// The execution id (`ReleaseByRun` gets the same one).
    pub run_id: String,
    /// The driver type (`claude`, `codex`, …).
    pub driver_type: String,
    /// The caller identity.
    pub identity: Identity,
    /// The execution's workspace lease.
    pub workspace: WorkspaceLease,
    /// The resolved declarative services (never empty: without services the manager is not asked).
    pub desired: Vec<ServiceSpec>,
    /// The caller's metadata.
    pub metadata: BTreeMap<String, String>,
}

/// The runtime service backend (construction-only: `AgentBuilder::service_manager`).
#[async_trait::async_trait]
pub trait ServiceManager: Send + Sync {
    /// Makes the desired services available to one execution and says how to reach them.
    async fn ensure(&self, req: ServiceRequest) -> Result<Vec<ServiceRef>, ServiceError>;
    /// Releases what was ensured for `run_id` (called once per execution that called `ensure`,
    /// also when `ensure` failed, bounded by the Agent's service cleanup timeout).
    async fn release_by_run(&self, run_id: &str) -> Result<(), ServiceError>;
    /// Releases everything carrying all of `labels` (host-driven housekeeping; the runtime never
    /// calls it).
    async fn release_by_labels(&self, labels: &BTreeMap<String, String>) -> Result<(), ServiceError>;
}

/// A source of events folded into one execution's stream. It is called once with a token that is
/// cancelled when the execution's driver part ends (or the run is cancelled): the source must then
/// flush what it has and end. The core drops the source's `RunStarted`, `RunFinished`, `TurnEnd`,
/// `MessageUpdate`, `Dropped` and `Done` (the execution's own lifecycle is core-owned).
pub type RunEventSource = Box<dyn FnOnce(CancellationToken, String) -> BoxStream<'static, Payload> + Send>;

/// Subagent results an attachment reports; called once, after the driver part and before detach.
pub type RunResults = Box<dyn FnOnce() -> Vec<SubagentResult> + Send>;

/// What a [`RunServiceProvider`] contributes to one execution.
#[derive(Default)]
pub struct RunAttachment {
    /// Text prepended to the execution's prompt. It is not part of thread compatibility: a thread
    /// continues when it changes.
    pub preamble: String,
    /// Subagent results, collected before `detach_run` into `RunResult::subagents`.
    pub results: Option<RunResults>,
    /// Services published to the execution (environment, secret environment, MCP).
    pub services: Vec<ServiceRef>,
    /// Events folded into the execution's one stream.
    pub events: Option<RunEventSource>,
}

impl std::fmt::Debug for RunAttachment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunAttachment")
            .field("preamble", &self.preamble)
            .field("results", &self.results.is_some())
            .field("services", &self.services)
            .field("events", &self.events.is_some())
            .finish()
    }
}

/// A run-scoped service provider (shared option: `run_service_provider` on the builder and per call,
/// appended, the same provider deduplicated).
#[async_trait::async_trait]
pub trait RunServiceProvider: Send + Sync {
    /// Attaches to execution `run_id` before the driver is entered.
    async fn attach_run(&self, run_id: &str) -> Result<RunAttachment, ServiceError>;
    /// Detaches from `run_id`: called once for every `attach_run` call (also a failed one), after the
    /// result is formed and before `Done`, bounded by the Agent's service cleanup timeout.
    async fn detach_run(&self, run_id: &str) -> Result<(), ServiceError>;
    /// A name for error messages.
    fn name(&self) -> String {
        let full = std::any::type_name::<Self>();
        full.rsplit("::").next().unwrap_or(full).to_owned()
    }
}

/// The run service providers of a scope (deduplicated by identity).
#[derive(Clone, Default)]
pub(crate) struct RunProviders(pub Vec<Arc<dyn RunServiceProvider>>);

impl RunProviders {
    /// Appends `p` unless this very provider is already there.
    pub(crate) fn add(&mut self, p: Arc<dyn RunServiceProvider>) {
        if !self.0.iter().any(|q| Arc::ptr_eq(q, &p)) {
            self.0.push(p);
        }
    }
}

impl std::fmt::Debug for RunProviders {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.0.iter().map(|p| p.name())).finish()
    }
}
