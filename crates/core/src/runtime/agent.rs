//! The Agent: a Driver plus defaults, the owner of every execution it admits and of the
//! provider processes its driver keeps.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::admission;
use super::broker::{Broker, DEFAULT_EVENT_BUFFER};
use super::error::Error;
use super::event::{Done, Payload};
use super::execution::{Execution, ExecutionHooks};
use super::messages::MessageQueue;
use super::options::{CallOptions, Shared, resolve, shared_options};
use super::services::{ServiceManager, ServicePlan};
use super::stream::{self, RunOutcome, Stream};
use super::structured::choose_mode;
use super::verdict::Verdict;
use super::workspace::WorkspacePlan;
use crate::driver::{Descriptor, Driver};
use crate::workspace::{Passthrough, ReleaseMode, WorkspaceManager};

/// Builds an [`Agent`]. Construction-only options live here and nowhere else.
pub struct AgentBuilder {
    driver: Arc<dyn Driver>,
    pub(crate) shared: Shared,
    event_buffer: usize,
    blocking: bool,
    store: Option<Arc<dyn crate::store::ThreadStore>>,
    tools: Vec<crate::tools::Tool>,
    skill_provider: Option<Arc<dyn crate::skills::SkillProvider>>,
    skill_materializer: Option<Arc<dyn crate::skills::SkillMaterializer>>,
    workspace_manager: Option<Arc<dyn WorkspaceManager>>,
    workspace_release: ReleaseMode,
    service_manager: Option<Arc<dyn ServiceManager>>,
    service_cleanup: Duration,
    profile: crate::profile::Selection,
    profile_resources: crate::profile::Resources,
    profile_home: Option<std::path::PathBuf>,
    name: String,
}

shared_options!(AgentBuilder);

impl AgentBuilder {
    /// Ordinary event capacity (default 1024); critical events enqueue independently.
    pub fn event_buffer(mut self, capacity: usize) -> Self {
        self.event_buffer = capacity.max(1);
        self
    }

    /// Ordinary producers wait for capacity instead of dropping; cancellation releases them.
    pub fn blocking_events(mut self) -> Self {
        self.blocking = true;
        self
    }

    /// The Agent's name in its thread store (construction-only; default `""`). A thread is named by
    /// tenant, this name and its key, so Agents sharing one store keep apart threads that use the same
    /// key, each with its own checkpoint, leases, receipts, continuity and history. The service names
    /// each of its Agents after its configured agent (`/v1/agents/{agent}`).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// The thread store (default: a private in-memory store). A durable store enables recovery
    /// and exclusion across processes.
    pub fn thread_store(mut self, store: Arc<dyn crate::store::ThreadStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// Replaces the Agent's host tools (construction-only; an empty set clears them). They are served
    /// by an Agent-owned loopback MCP server, offered on every execution (a per-call MCP set, even an
    /// empty one, does not remove them) and stopped by [`Agent::close`].
    pub fn tools(mut self, tools: impl IntoIterator<Item = crate::tools::Tool>) -> Self {
        self.tools = tools.into_iter().collect();
        self
    }

    /// Resolves bare skill keys ([`crate::vocab::SkillRef::key`]); without one a bare key is
    /// `skill_not_found`.
    pub fn skill_provider(mut self, provider: Arc<dyn crate::skills::SkillProvider>) -> Self {
        self.skill_provider = Some(provider);
        self
    }

    /// Replaces the skill materializer (default: [`crate::skills::DefaultSkillMaterializer`] with its
    /// default limits).
    pub fn skill_materializer(mut self, materializer: Arc<dyn crate::skills::SkillMaterializer>) -> Self {
        self.skill_materializer = Some(materializer);
        self
    }

    /// The workspace lease backend (default: [`Passthrough`], which leases the base directory
    /// unchanged and creates nothing). Every execution leases its workspace from it according to the
    /// resolved [`WorkspaceSpec`](crate::workspace::WorkspaceSpec) before the driver starts, runs in the
    /// lease's directory, and releases the lease (with [`AgentBuilder::workspace_release`]'s mode)
    /// before `Done`; lease and release errors reach the run's result.
    pub fn workspace_manager(mut self, manager: Arc<dyn WorkspaceManager>) -> Self {
        self.workspace_manager = Some(manager);
        self
    }

    /// How executions release their workspace lease (default [`ReleaseMode::Stop`]: remove what the
    /// lease created, e.g. a git worktree and its branch; [`ReleaseMode::Keep`] leaves it for review).
    pub fn workspace_release(mut self, mode: ReleaseMode) -> Self {
        self.workspace_release = mode;
        self
    }

    /// The runtime service backend. Every execution whose resolved
    /// [`services`](AgentBuilder::services) are not empty asks it to `ensure` them after the workspace
    /// lease and before the driver starts (their environment and MCP servers reach the provider
    /// process), and releases them with `release_by_run` before `Done`. Without a manager, declared
    /// services refuse the send (`service_manager_missing`): no endpoint is invented.
    pub fn service_manager(mut self, manager: Arc<dyn ServiceManager>) -> Self {
        self.service_manager = Some(manager);
        self
    }

    /// The bound of each execution's service cleanup (default 30 s): event sources get it to flush
    /// and close, then every `release_by_run` and `detach_run` gets all of it, concurrently. What
    /// overruns is abandoned and reported in the outcome.
    pub fn service_cleanup_timeout(mut self, bound: Duration) -> Self {
        self.service_cleanup = bound;
        self
    }

    /// The provider profile strategy (construction-only; default
    /// [`Selection::Default`](crate::profile::Selection::Default), the driver's SDK-owned dir). Only the
    /// Claude and Codex drivers have profile families; any other selection (or profile resources) on
    /// another driver refuses every launch with `invalid_driver_config`.
    pub fn profile(mut self, selection: crate::profile::Selection) -> Self {
        self.profile = selection;
        self
    }

    /// The home directory the native profile dir (`~/.claude`, `~/.codex`) and default clone dirs
    /// resolve under (construction-only; default `$HOME`): a host serving another user's home, or a
    /// sandbox.
    pub fn profile_home(mut self, home: impl Into<std::path::PathBuf>) -> Self {
        self.profile_home = Some(home.into());
        self
    }

    /// Profile resources, merged over earlier ones by [`Resources::merge`](crate::profile::Resources::merge)
    /// (skills append; every other declared family replaces). They are materialized into the profile
    /// dir before a launch finds them out of date, or by [`Agent::sync_profile`].
    pub fn profile_resources(mut self, resources: crate::profile::Resources) -> Self {
        self.profile_resources = std::mem::take(&mut self.profile_resources).merge(resources);
        self
    }

    /// Adds one host tool (see [`AgentBuilder::tools`]).
    pub fn tool(mut self, tool: crate::tools::Tool) -> Self {
        self.tools.push(tool);
        self
    }

    /// Builds the Agent.
    pub fn build(self) -> Agent {
        let descriptor = self.driver.descriptor();
        let store = self.store.unwrap_or_else(crate::store::in_memory);
        let tools_fingerprint = crate::tools::fingerprint(&self.tools);
        let hosted = match self.tools.is_empty() {
            true => None,
            false => Some(
                crate::tools::HostedTools::bind(self.tools)
                    .map(Arc::new)
                    .map_err(|e| e.to_string()),
            ),
        };
        Agent {
            inner: Arc::new(AgentInner {
                name: self.name,
                driver: self.driver,
                descriptor,
                defaults: self.shared,
                store,
                event_buffer: self.event_buffer,
                blocking: self.blocking,
                closed: AtomicBool::new(false),
                cancel: CancellationToken::new(),
                tracker: TaskTracker::new(),
                standbys: Default::default(),
                hosted,
                tools_fingerprint,
                cli_version: Default::default(),
                skill_provider: self.skill_provider,
                skill_materializer: self
                    .skill_materializer
                    .unwrap_or_else(|| Arc::new(crate::skills::DefaultSkillMaterializer::default())),
                workspace_manager: self.workspace_manager.unwrap_or_else(|| Arc::new(Passthrough)),
                workspace_release: self.workspace_release,
                service_manager: self.service_manager,
                service_cleanup: self.service_cleanup,
                profile: super::profile::ProfileSettings {
                    selection: self.profile,
                    resources: self.profile_resources,
                    selected: Default::default(),
                    home: self.profile_home,
                    claims: Default::default(),
                },
            }),
        }
    }
}

/// The construction-only fields, for [`AgentSettings`](super::settings::AgentSettings)' setters.
pub(super) struct BuilderOnly<'a> {
    pub store: &'a mut Option<Arc<dyn crate::store::ThreadStore>>,
    pub event_buffer: &'a mut usize,
    pub blocking: &'a mut bool,
    pub profile: &'a mut crate::profile::Selection,
    pub skill_provider: &'a mut Option<Arc<dyn crate::skills::SkillProvider>>,
    pub skill_materializer: &'a mut Option<Arc<dyn crate::skills::SkillMaterializer>>,
    pub workspace_manager: &'a mut Option<Arc<dyn WorkspaceManager>>,
    pub service_manager: &'a mut Option<Arc<dyn ServiceManager>>,
}

impl AgentBuilder {
    /// The builder's shared options, its profile resources and its construction-only fields, borrowed
    /// apart (the ecosystem setters, `runtime::settings`).
    pub(super) fn settings_parts(
        &mut self,
    ) -> (&mut Shared, &mut crate::profile::Resources, BuilderOnly<'_>) {
        (
            &mut self.shared,
            &mut self.profile_resources,
            BuilderOnly {
                store: &mut self.store,
                event_buffer: &mut self.event_buffer,
                blocking: &mut self.blocking,
                profile: &mut self.profile,
                skill_provider: &mut self.skill_provider,
                skill_materializer: &mut self.skill_materializer,
                workspace_manager: &mut self.workspace_manager,
                service_manager: &mut self.service_manager,
            },
        )
    }
}

pub(crate) struct AgentInner {
    /// The Agent's name in the thread store ([`AgentBuilder::name`]).
    pub name: String,
    pub driver: Arc<dyn Driver>,
    pub descriptor: Descriptor,
    pub defaults: Shared,
    pub store: Arc<dyn crate::store::ThreadStore>,
    pub event_buffer: usize,
    pub blocking: bool,
    pub closed: AtomicBool,
    pub cancel: CancellationToken,
    pub tracker: TaskTracker,
    pub standbys: Arc<super::standby::StandbyRegistry>,
    /// The hosted tools server, or why it could not be set up (refused at launch).
    pub hosted: Option<Result<Arc<crate::tools::HostedTools>, String>>,
    /// The semantic fingerprint of the tool set (part of thread compatibility).
    pub tools_fingerprint: String,
    /// The CLI version the driver's environment probe reported, probed once (at the first launch
    /// whose message capability declares a MinVersion); `None` inside when unknown.
    pub cli_version: Arc<tokio::sync::OnceCell<Option<String>>>,
    /// Bare-key skill resolution.
    pub skill_provider: Option<Arc<dyn crate::skills::SkillProvider>>,
    /// Skill materialization.
    pub skill_materializer: Arc<dyn crate::skills::SkillMaterializer>,
    /// The workspace lease backend.
    pub workspace_manager: Arc<dyn WorkspaceManager>,
    /// How executions release their workspace lease.
    pub workspace_release: ReleaseMode,
    /// The runtime service backend.
    pub service_manager: Option<Arc<dyn ServiceManager>>,
    /// The bound of each execution's service cleanup.
    pub service_cleanup: Duration,
    /// The profile selection, its resources and the skill selection.
    pub profile: super::profile::ProfileSettings,
}

/// An agent: one Driver with defaults. Cheap to clone; clones share everything.
#[derive(Clone)]
pub struct Agent {
    pub(crate) inner: Arc<AgentInner>,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("driver", &self.inner.descriptor.driver_type)
            .finish()
    }
}

/// Anything that starts executions: an [`Agent`] or a thread.
pub trait Runner: Send + Sync {
    /// Starts one execution and returns its handle at once.
    fn send(&self, prompt: &str, opts: CallOptions) -> Stream;
}

impl Runner for Agent {
    fn send(&self, prompt: &str, opts: CallOptions) -> Stream {
        Agent::send(self, prompt, opts)
    }
}

/// A stream refused before admission: no RunStarted, no run id, only `Done` with the error.
pub(crate) fn refused(err: Error) -> Stream {
    let broker = Arc::new(Broker::new("", "", 4, false));
    let outcome: RunOutcome = Err(err);
    broker.finish(
        vec![Payload::Done(Done {
            outcome: outcome.clone(),
        })],
        false,
    );
    let (_tx, rx) = watch::channel(Some(outcome));
    Stream {
        shared: Arc::new(stream::Shared {
            run_id: String::new(),
            broker,
            queue: None,
            outcome: rx,
            cancel: CancellationToken::new(),
            verdict: Verdict::default(),
            cpu: Default::default(),
        }),
    }
}

/// What a launch decided that a thread's hooks fingerprint besides the resolved settings.
pub(crate) struct LaunchFacts {
    /// The run's base working directory (options, else `CommonConfig.directory`, else the process's).
    pub cwd: PathBuf,
    /// The content fingerprint of the materialized skills (empty without skills).
    pub skills_fingerprint: String,
}

/// Builds a thread's execution hooks from the resolved settings.
pub(crate) type HooksFactory =
    Box<dyn FnOnce(&super::options::Resolved, &LaunchFacts) -> Arc<dyn ExecutionHooks> + Send>;

/// Per-execution thread wiring handed to [`Agent::launch`].
pub(crate) struct ThreadLaunch {
    pub key: String,
    pub hooks: HooksFactory,
}

/// The tenant a thread's rows (and receipts) belong to, from the resolved identity.
fn receipt_tenant(identity: &crate::driver::Identity) -> String {
    super::thread::tenant_of(identity)
}

impl Agent {
    /// Starts building an Agent around `driver`.
    pub fn builder(driver: impl Driver) -> AgentBuilder {
        Self::builder_arc(Arc::new(driver))
    }

    /// Like [`Agent::builder`], for a shared driver.
    pub fn builder_arc(driver: Arc<dyn Driver>) -> AgentBuilder {
        AgentBuilder {
            driver,
            shared: Shared::default(),
            event_buffer: DEFAULT_EVENT_BUFFER,
            blocking: false,
            store: None,
            tools: Vec::new(),
            skill_provider: None,
            skill_materializer: None,
            workspace_manager: None,
            workspace_release: ReleaseMode::Stop,
            service_manager: None,
            service_cleanup: super::services::CLEANUP_BOUND,
            profile: Default::default(),
            profile_resources: Default::default(),
            profile_home: None,
            name: String::new(),
        }
    }

    /// An Agent with default options.
    ///
    /// There is no nil Driver to pass (the Go reference panics on one): `new` takes a driver by
    /// value, so a missing driver is a compile error, not a runtime panic. A driver builds:
    ///
    /// ```
    /// use agent_adaptor::runtime::Agent;
    /// use agent_adaptor::testkit::reference::{ReferenceConfig, ReferenceDriver};
    /// let _agent = Agent::new(ReferenceDriver::new(ReferenceConfig::default()));
    /// ```
    ///
    /// and nothing in the place of one does:
    ///
    /// ```compile_fail
    /// use agent_adaptor::runtime::Agent;
    /// use agent_adaptor::testkit::reference::ReferenceDriver;
    /// let _agent = Agent::new(None::<ReferenceDriver>);
    /// ```
    ///
    /// ```compile_fail
    /// use agent_adaptor::runtime::Agent;
    /// let _agent = Agent::builder_arc(std::ptr::null());
    /// ```
    pub fn new(driver: impl Driver) -> Agent {
        Self::builder(driver).build()
    }

    /// The driver's descriptor.
    pub fn descriptor(&self) -> &Descriptor {
        &self.inner.descriptor
    }

    /// The driver.
    pub fn driver(&self) -> &Arc<dyn Driver> {
        &self.inner.driver
    }

    /// The Agent's name in its thread store ([`AgentBuilder::name`]).
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The thread store.
    pub fn store(&self) -> &Arc<dyn crate::store::ThreadStore> {
        &self.inner.store
    }

    /// True once [`Agent::close`] began.
    pub fn is_closed(&self) -> bool {
        self.inner.closed.load(Ordering::SeqCst)
    }

    /// Starts one execution (a fresh anonymous conversation) and returns its handle at once.
    /// Startup errors arrive through `result()` and the terminal `Done`.
    pub fn send(&self, prompt: &str, opts: impl Into<CallOptions>) -> Stream {
        self.launch(prompt, opts.into(), None)
    }

    pub(crate) fn launch(&self, prompt: &str, opts: CallOptions, thread: Option<ThreadLaunch>) -> Stream {
        let inner = &self.inner;
        if self.is_closed() {
            return refused(Error::AgentClosed);
        }
        let mut resolved = match resolve(&inner.defaults, &opts.shared) {
            Ok(r) => r,
            Err(e) => return refused(e.into()),
        };
        // The driver's CommonConfig fills what the options leave unset: the working directory, and
        // the deadline (an explicit zero at any scope means "none" and is not overridden).
        if let Some(common) = inner.driver.common_config() {
            if resolved.workspace.is_none() {
                resolved.workspace.clone_from(&common.directory);
            }
            if opts.shared.timeout.or(inner.defaults.timeout).is_none() {
                resolved.timeout = common.timeout.filter(|t| !t.is_zero());
            }
        }
        // Host hooks called at launch (profile skills, the skill provider and materializer) see the
        // run's identity, like every hook of the execution (`runtime::identity`).
        let identity = resolved.identity.clone();
        let profile = match super::identity::sync_scope(identity.clone(), || {
            inner.profile_launch(&resolved.identity.profile, &opts.shared.profile_resources)
        }) {
            Ok(p) => p,
            Err(e) => return refused(e),
        };
        if let Some(p) = &profile {
            // The profile's MCP servers join every run; the call's own declaration of a name wins.
            let own: Vec<String> = resolved.mcp.iter().map(|s| s.name.clone()).collect();
            resolved
                .mcp
                .extend(p.mcp.iter().filter(|s| !own.contains(&s.name)).cloned());
            resolved.profile_fingerprint.clone_from(&p.fingerprint);
        }
        if let Err(e) = admission::check(&inner.descriptor, &resolved) {
            return refused(e.into());
        }
        if !resolved.services.is_empty() && inner.service_manager.is_none() {
            let names = resolved.services.iter().map(|s| s.name.clone()).collect();
            return refused(super::error::ConfigError::ServiceManagerMissing(names).into());
        }
        if let Err(e) = inner.driver.validate_config() {
            return refused(super::error::ConfigError::InvalidDriverConfig(e.reason).into());
        }
        let hosted = match self.hosted_for(&resolved.mcp, thread.is_some()) {
            Ok(h) => h,
            Err(e) => return refused(e),
        };
        let output = match opts.schema.clone() {
            None => None,
            Some(Err(e)) => return refused(e.into()),
            Some(Ok(spec)) => match choose_mode(&inner.descriptor, &resolved.policy) {
                Ok(mode) => Some((spec, mode)),
                Err(e) => return refused(e.into()),
            },
        };
        let cwd = match resolved.workspace.clone() {
            Some(w) => w,
            None => std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
        };

        let run_id = format!("run-{}", uuid::Uuid::now_v7());
        let skills = match super::identity::sync_scope(identity.clone(), || {
            super::skills::materialize(
                &resolved.skills,
                inner.skill_provider.as_deref(),
                inner.skill_materializer.as_ref(),
                &run_id,
            )
        }) {
            Ok(s) => s,
            Err(e) => return refused(e.into()),
        };
        let key = thread.as_ref().map(|t| t.key.clone());
        let broker = Arc::new(Broker::new(
            &run_id,
            key.as_deref().unwrap_or(""),
            inner.event_buffer,
            inner.blocking,
        ));
        let cancel = inner.cancel.child_token();
        let caps = inner.descriptor.messages.clone();
        let receipts = key.as_ref().map(|k| super::messages::ReceiptScope {
            store: inner.store.clone(),
            tenant: receipt_tenant(&resolved.identity),
            agent: inner.name.clone(),
            key: k.clone(),
        });
        let queue = MessageQueue::with_receipts(
            broker.clone(),
            resolved.policy.messages.clone(),
            caps.clone(),
            cancel.clone(),
            receipts,
        );
        if let Some(id) = &opts.message.id {
            queue.remember(id);
        }
        let verdict = Verdict::default();
        let (outcome_tx, outcome_rx) = watch::channel(None);
        let facts = LaunchFacts {
            cwd: cwd.clone(),
            skills_fingerprint: skills
                .as_ref()
                .map(|s| crate::skills::overlay::fingerprint(&s.skills))
                .unwrap_or_default(),
        };
        let hooks = thread.map(|t| (t.hooks)(&resolved, &facts));
        let workspace = WorkspacePlan {
            manager: inner.workspace_manager.clone(),
            spec: resolved.workspace_spec.clone(),
            release: inner.workspace_release,
        };
        let services = ServicePlan {
            manager: inner.service_manager.clone(),
            providers: resolved.run_services.0.clone(),
            desired: resolved.services.clone(),
            bound: inner.service_cleanup,
        };
        let exec = Execution {
            run_id: run_id.clone(),
            thread_key: key,
            driver: inner.driver.clone(),
            prompt: prompt.to_owned(),
            cwd,
            output,
            broker: broker.clone(),
            queue: queue.clone(),
            caps,
            cancel: cancel.clone(),
            verdict: verdict.clone(),
            retry_supported: inner.descriptor.run_policy.retry,
            system_prompt_append: inner.descriptor.system_prompt_append,
            hooks,
            outcome_tx,
            resolved,
            hosted,
            skills,
            profile: profile.map(|p| (p.target, p.lease)),
            workspace,
            services,
            cli_version: inner.cli_version.clone(),
        };
        // In the caller's span (a host's run span), so the execution's logs carry it.
        // Every child process the execution spawns or leases is charged to its CPU meter.
        let cpu = crate::driver::process::CpuMeter::new();
        inner
            .tracker
            .spawn(tracing::Instrument::in_current_span(cpu.clone().scope(
                super::identity::scope(identity, super::rescue::guarded(exec)),
            )));
        Stream {
            shared: Arc::new(stream::Shared {
                run_id,
                broker,
                queue: Some(queue),
                outcome: outcome_rx,
                cancel,
                verdict,
                cpu,
            }),
        }
    }

    /// The hosted tools server, when the Agent has tools.
    pub fn hosted_tools(&self) -> Option<&Arc<crate::tools::HostedTools>> {
        self.inner.hosted.as_ref().and_then(|h| h.as_ref().ok())
    }

    /// Checks the hosted tools against one launch and returns what the execution adds: the hosted MCP
    /// declaration and its token environment.
    #[allow(clippy::type_complexity)]
    fn hosted_for(
        &self,
        mcp: &[crate::vocab::McpServer],
        on_thread: bool,
    ) -> Result<
        Option<(
            crate::vocab::McpServer,
            std::collections::BTreeMap<String, String>,
        )>,
        Error,
    > {
        use super::error::ConfigError;
        let Some(hosted) = &self.inner.hosted else {
            return Ok(None);
        };
        let hosted = hosted
            .as_ref()
            .map_err(|e| ConfigError::InvalidDriverConfig(format!("host tools: {e}")))?;
        hosted
            .check_aliasing(mcp)
            .map_err(ConfigError::InvalidMcpConfig)?;
        let desc = &self.inner.descriptor;
        if !desc.mcp.http {
            return Err(ConfigError::McpTransportUnsupported {
                driver: desc.driver_type.clone(),
                transport: "http (host tools)".into(),
            }
            .into());
        }
        if on_thread && let Some(t) = hosted.tools().iter().find(|t| t.revision_id().is_none()) {
            return Err(ConfigError::InvalidDriverConfig(
                crate::tools::ToolDefinitionError::MissingRevision(t.name().to_owned()).to_string(),
            )
            .into());
        }
        hosted
            .ensure_serving()
            .map_err(|e| Error::Infrastructure(format!("host tools: {e}")))?;
        Ok(Some((hosted.declaration(), hosted.env())))
    }

    /// Shuts the Agent down: refuses new executions, cancels and drains admitted ones (Standby
    /// workers included), stops the driver's persistent processes and the hosted tools server, and
    /// releases the profile claims its executions hold. Idempotent and bounded by
    /// `deadline` as a whole (draining, process and tools shutdown run concurrently against one
    /// deadline); when something did not finish, or failed, it returns an error naming each part,
    /// and can be called again.
    pub async fn close(&self, deadline: Duration) -> Result<(), Error> {
        let inner = &self.inner;
        let until = tokio::time::Instant::now() + deadline;
        inner.closed.store(true, Ordering::SeqCst);
        inner.cancel.cancel();
        inner.tracker.close();
        let drain = tokio::time::timeout_at(until, inner.tracker.wait());
        let processes = tokio::time::timeout_at(until, inner.driver.close_processes());
        let tools = async {
            match &inner.hosted {
                Some(Ok(hosted)) => Some(tokio::time::timeout_at(until, hosted.shutdown()).await),
                _ => None,
            }
        };
        let (drained, stopped, tools) = tokio::join!(drain, processes, tools);
        // Profile claims of executions that did not drain end with the Agent (idempotent).
        inner.profile.release_claims();
        let mut problems = Vec::new();
        if drained.is_err() {
            problems.push("executions did not drain before the close deadline".to_owned());
        }
        match stopped {
            Ok(Ok(())) => {}
            Ok(Err(e)) => problems.push(format!("stopping provider processes failed: {e}")),
            Err(_) => problems.push("provider processes did not stop before the close deadline".into()),
        }
        match tools {
            None | Some(Ok(Ok(()))) => {}
            Some(Ok(Err(e))) => problems.push(format!("stopping the host tools server failed: {e}")),
            Some(Err(_)) => {
                problems.push("the host tools server did not stop before the close deadline".into())
            }
        }
        match problems.is_empty() {
            true => Ok(()),
            false => Err(Error::Infrastructure(problems.join("; "))),
        }
    }

    /// Live executions (admitted and not yet finished).
    pub fn active_executions(&self) -> usize {
        self.inner.tracker.len()
    }
}

/// Structured output in one call: derives the schema of `T`, runs, validates and decodes.
pub async fn run_as<T>(
    runner: &dyn Runner,
    prompt: &str,
    opts: CallOptions,
) -> Result<(T, Arc<super::result::RunResult>), Error>
where
    T: schemars::JsonSchema + serde::de::DeserializeOwned,
{
    let opts = if opts.schema.is_some() {
        opts
    } else {
        opts.schema::<T>(Default::default())
    };
    let result = runner.send(prompt, opts).result().await?;
    let value = result.decode::<T>().map_err(|e| {
        Error::Run(Arc::new(super::error::RunError {
            reason: super::error::FailureReason::PolicyViolation,
            message: e.to_string(),
            details: Default::default(),
            result: result.clone(),
            causes: Vec::new(),
            thread: None,
        }))
    })?;
    Ok((value, result))
}
