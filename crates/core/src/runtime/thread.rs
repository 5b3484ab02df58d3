//! Threads: named, resumable conversations over a [`ThreadStore`].
//!
//! One writer per thread: each execution takes an ownership lease (TTL 5 min, renewed every
//! 2 min; a failed renewal stops the run and nothing is persisted). A compatibility fingerprint
//! over everything provider-visible is checked before any lease is taken. Continue-or-start falls
//! back once to a fresh session (with a `thread.continuity` notice and bounded recovery context)
//! on drift or a resume rejection; `resume_only` fails instead. Only a clean, official success with
//! a round-trippable resume id replaces the healthy checkpoint, in one atomic `finalize` that
//! re-validates every held lease. Store failures keep the newest checkpoint in process, retry under
//! validated ownership and emit `thread.persistence` notices.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::Utc;
use tokio_util::sync::CancellationToken;

use super::agent::{Agent, LaunchFacts, Runner, ThreadLaunch};
use super::broker::Broker;
use super::error::{Error, FailureReason, ThreadErrorKind};
use super::event::Payload;
use super::execution::{ExecutionHooks, FinalizeError, Prepared};
use super::options::{CallOptions, Resolved};
use super::result::RunResult;
use super::stream::Stream;
use super::verdict::Verdict;
use crate::driver::{
    Checkpoint, JsonMap, Notice, SessionCodec, SessionPlan, SessionState, notice_kind, session,
};
use crate::store::{
    AgentIdentity, ContinuityEntry, ContinuityKind, FinalizeRequest, Lease, Query, Record, StoreError,
    ThreadStatus, ThreadStore,
};

/// Lease time-to-live.
pub const LEASE_TTL: Duration = Duration::from_secs(300);
/// Lease renewal interval.
pub const LEASE_RENEW: Duration = Duration::from_secs(120);
const PERSIST_RETRIES: u32 = 3;

/// How a thread treats its stored record.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Mode {
    ContinueOrStart,
    ResumeOnly,
    Fork { parent: String },
}

/// A named conversation. Cheap to clone; clones share the in-process recovery state.
#[derive(Clone)]
pub struct Thread {
    agent: Agent,
    key: String,
    mode: Arc<Mutex<Mode>>,
    pending: Arc<Mutex<Option<Record>>>,
    lease_timing: (Duration, Duration),
    /// Set on the thread of a Standby's worker: its executions run under the Standby's ownership
    /// lease (held and renewed by the Standby, idle or not) and bypass the Standby ownership check.
    standby: Option<Arc<super::standby::OwnedLease>>,
}

impl std::fmt::Debug for Thread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Thread")
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

/// A checkpoint audit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointInfo {
    /// Internal session record id.
    pub record_id: String,
    /// Provider resume id.
    pub resume_id: String,
    /// Codec name.
    pub codec: String,
    /// Compatibility fingerprint.
    pub fingerprint: String,
    /// When it was persisted.
    pub updated_at: chrono::DateTime<Utc>,
    /// True when the newest checkpoint is held in process because the store failed.
    pub pending_persistence: bool,
}

impl Agent {
    /// A thread: continue the active compatible record for `key`, otherwise start one.
    ///
    /// # Panics
    /// When `key` is empty (a programming error).
    pub fn thread(&self, key: &str) -> Thread {
        assert!(!key.is_empty(), "thread keys must not be empty");
        Thread {
            agent: self.clone(),
            key: key.to_owned(),
            mode: Arc::new(Mutex::new(Mode::ContinueOrStart)),
            pending: Arc::new(Mutex::new(None)),
            lease_timing: (LEASE_TTL, LEASE_RENEW),
            standby: None,
        }
    }

    /// A thread that fails when there is no compatible record to resume.
    ///
    /// # Panics
    /// When `key` is empty.
    pub fn thread_resume_only(&self, key: &str) -> Thread {
        let t = self.thread(key);
        *t.mode.lock().unwrap_or_else(|p| p.into_inner()) = Mode::ResumeOnly;
        t
    }
}

impl Thread {
    /// The host's key.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// Overrides the lease TTL and renewal interval (tests; the interval is clamped to TTL/2).
    pub fn with_lease_timing(mut self, ttl: Duration, renew: Duration) -> Self {
        let renew = if renew >= ttl { ttl / 2 } else { renew };
        self.lease_timing = (ttl, renew);
        self
    }

    /// A new thread under `new_key` that starts from this thread's checkpoint at its first
    /// execution. The parent is never modified; an occupied target fails.
    ///
    /// # Panics
    /// When `new_key` is empty.
    pub fn fork(&self, new_key: &str) -> Thread {
        let t = self.agent.thread(new_key);
        *t.mode.lock().unwrap_or_else(|p| p.into_inner()) = Mode::Fork {
            parent: self.key.clone(),
        };
        t
    }

    pub(crate) fn agent_ref(&self) -> &Agent {
        &self.agent
    }

    pub(crate) fn standby_owned(mut self, lease: Arc<super::standby::OwnedLease>) -> Thread {
        self.standby = Some(lease);
        self
    }

    /// The lease TTL and renewal interval.
    pub(crate) fn lease_timing(&self) -> (Duration, Duration) {
        self.lease_timing
    }

    /// The tenant `opts` act for on this thread: the call's identity, else the Agent's default one,
    /// else [`DEFAULT_TENANT`]. Thread rows, receipts, leases and Standby ownership all use it.
    pub(crate) fn tenant_for(&self, opts: &CallOptions) -> String {
        opts.shared
            .identity
            .as_ref()
            .or(self.agent.inner.defaults.identity.as_ref())
            .map(tenant_of)
            .unwrap_or_else(|| DEFAULT_TENANT.to_owned())
    }

    /// Starts one execution on the thread. While a live Standby owns the thread, a task send
    /// fails with the busy error through `result()`/`Done`. A driver that declares resume without a
    /// session codec or a non-empty session fingerprint is refused (incompatible) before any lease.
    pub fn send(&self, prompt: &str, opts: impl Into<CallOptions>) -> Stream {
        let opts = opts.into();
        let inner = &self.agent.inner;
        if inner.descriptor.sessions.resume {
            let why = match (inner.driver.session_codec(), inner.driver.session_fingerprint()) {
                (None, _) => Some("the driver declares resume but has no session codec"),
                (_, fp) if fp.as_deref().is_none_or(str::is_empty) => {
                    Some("the driver declares resume but has no session fingerprint")
                }
                _ => None,
            };
            if let Some(why) = why {
                return super::agent::refused(Error::thread(ThreadErrorKind::Incompatible, why));
            }
        }
        if self.standby.is_none() && inner.standbys.is_live(&self.tenant_for(&opts), &self.key) {
            return super::agent::refused(Error::thread(
                ThreadErrorKind::Busy,
                "a live Standby owns this thread",
            ));
        }
        let thread = self.clone();
        let start_id = opts.message.id.clone().filter(|id| !id.is_empty());
        let launch = ThreadLaunch {
            key: self.key.clone(),
            hooks: Box::new(
                move |resolved: &Resolved, facts: &LaunchFacts| -> Arc<dyn ExecutionHooks> {
                    Arc::new(ThreadHooks::new(thread, resolved, facts, start_id))
                },
            ),
        };
        self.agent.launch(prompt, opts, Some(launch))
    }

    /// The latest healthy resume state for `tenant`; pending in-process recovery wins over stale
    /// durable state.
    pub async fn checkpoint(&self, tenant: &str) -> Result<Option<CheckpointInfo>, Error> {
        let tenant = if tenant.is_empty() { DEFAULT_TENANT } else { tenant };
        if let Some(rec) = self.pending.lock().unwrap_or_else(|p| p.into_inner()).clone() {
            return Ok(info(&rec, true));
        }
        let rec = self
            .agent
            .inner
            .store
            .resolve(&Query::key(tenant, &self.agent.inner.name, &self.key))
            .await
            .map_err(|e| Error::thread(ThreadErrorKind::Store, e.to_string()))?;
        Ok(rec.as_ref().and_then(|r| info(r, false)))
    }
}

/// The tenant a thread's rows belong to: the identity's tenant, or [`DEFAULT_TENANT`] when unset
/// (the store requires one).
pub(crate) fn tenant_of(identity: &crate::driver::Identity) -> String {
    if identity.tenant.is_empty() {
        DEFAULT_TENANT.to_owned()
    } else {
        identity.tenant.clone()
    }
}

/// The store lease target of thread `key` of `agent` of `tenant`.
pub fn lease_target(tenant: &str, agent: &str, key: &str) -> String {
    crate::store::thread_lease_target(tenant, agent, key)
}

/// The tenant of threads whose caller set none.
pub const DEFAULT_TENANT: &str = "default";

fn info(rec: &Record, pending: bool) -> Option<CheckpointInfo> {
    rec.state.as_ref().map(|s| CheckpointInfo {
        record_id: rec.id.clone(),
        resume_id: s.resume_id.clone(),
        codec: rec.codec.clone(),
        fingerprint: rec.compatibility_fingerprint.clone(),
        updated_at: rec.updated_at,
        pending_persistence: pending,
    })
}

impl Runner for Thread {
    fn send(&self, prompt: &str, opts: CallOptions) -> Stream {
        Thread::send(self, prompt, opts)
    }
}

fn to_store(s: &SessionState) -> crate::store::SessionState {
    crate::store::SessionState {
        resume_id: s.resume_id.clone(),
        display_id: s.display_id.clone(),
        data: s.data.clone(),
    }
}

fn from_store(s: &crate::store::SessionState) -> SessionState {
    SessionState {
        resume_id: s.resume_id.clone(),
        display_id: s.display_id.clone(),
        data: s.data.clone(),
    }
}

/// The compatibility fingerprint of what is known at launch: the driver and its session
/// configuration, model, identity, base working directory, instructions, skill *content* (not where
/// it was read from), MCP servers, declared services, the workspace spec and the host tools.
fn compatibility(
    driver_type: &str,
    session_fp: &str,
    r: &Resolved,
    facts: &LaunchFacts,
    tools_fp: &str,
) -> String {
    let enc = |v: &dyn erased::Enc| v.enc();
    // Without skills the slot keeps its old encoding ("[]"), so earlier fingerprints hold.
    let skills = if facts.skills_fingerprint.is_empty() {
        enc(&r.skills)
    } else {
        format!("skills={}", facts.skills_fingerprint)
    };
    let mcp = enc(&r.mcp);
    let services = enc(&r.services);
    let cwd = facts.cwd.display().to_string();
    let mut parts = vec![
        driver_type,
        session_fp,
        r.model.as_deref().unwrap_or(""),
        &r.identity.id,
        &r.identity.tenant,
        &r.identity.profile,
        &cwd,
        r.instructions.as_deref().unwrap_or(""),
        &skills,
        &mcp,
        &services,
    ];
    // Host tools (their semantic revisions); absent for tool-less Agents so older fingerprints hold.
    if !tools_fp.is_empty() {
        parts.push(tools_fp);
    }
    // The provisioning strategy; the default (shared) adds nothing, so older fingerprints hold.
    let spec = match r.workspace_spec {
        crate::workspace::WorkspaceSpec::Shared => String::new(),
        ref other => format!("workspace_spec={}", enc(other)),
    };
    if !spec.is_empty() {
        parts.push(&spec);
    }
    session::fingerprint(&parts)
}

/// Folds what runtime services published into the launch fingerprint: the names of the environment
/// variables and the MCP servers (name and transport) they publish. Values and URLs are not part of
/// it: a service's ephemeral port must not break resume, another variable or server does.
fn with_services(launch: &str, published: &str) -> String {
    if published.is_empty() {
        launch.to_owned()
    } else {
        session::fingerprint(&[launch, published])
    }
}

/// A fingerprint shortened for a message (`none` when empty).
fn short(fp: &str) -> &str {
    if fp.is_empty() {
        "none"
    } else {
        &fp[..fp.len().min(12)]
    }
}

mod erased {
    /// Serializes a value canonically for fingerprinting.
    pub trait Enc {
        fn enc(&self) -> String;
    }

    impl<T: serde::Serialize> Enc for T {
        fn enc(&self) -> String {
            serde_json::to_string(self).unwrap_or_default()
        }
    }
}

struct Held {
    leases: Vec<Lease>,
    previous: Option<Record>,
    /// The record of the key, and the fork parent's, as `prepare` resolved them.
    current: Option<Record>,
    parent: Option<Record>,
    /// The full compatibility fingerprint, decided at `plan`.
    fingerprint: String,
    fresh_over: bool,
    renewal: Option<tokio::task::JoinHandle<()>>,
    lost: Arc<std::sync::atomic::AtomicBool>,
    /// The first lease is the Standby's: it is neither renewed nor released by the execution.
    borrowed: bool,
}

/// The per-execution thread logic.
struct ThreadHooks {
    thread: Thread,
    store: Arc<dyn ThreadStore>,
    tenant: String,
    /// The Agent's name: with `tenant` and a key it names a thread in the store.
    agent: String,
    identity: AgentIdentity,
    driver_type: String,
    codec: Option<Arc<dyn SessionCodec>>,
    resume_capable: bool,
    /// The launch part of the compatibility fingerprint (services fold in at [`ExecutionHooks::plan`]).
    launch_fingerprint: String,
    /// The Agent's profile fingerprint (`PARAM_PROFILE` in the stored state); empty without a profile.
    profile_fingerprint: String,
    start_id: Option<String>,
    owner: String,
    held: tokio::sync::Mutex<Held>,
}

impl ThreadHooks {
    fn new(thread: Thread, r: &Resolved, facts: &LaunchFacts, start_id: Option<String>) -> Self {
        let inner = &thread.agent.inner;
        let session_fp = inner.driver.session_fingerprint().unwrap_or_default();
        let launch_fingerprint = compatibility(
            &inner.descriptor.driver_type,
            &session_fp,
            r,
            facts,
            &inner.tools_fingerprint,
        );
        ThreadHooks {
            store: inner.store.clone(),
            tenant: tenant_of(&r.identity),
            agent: inner.name.clone(),
            identity: AgentIdentity {
                id: r.identity.id.clone(),
                tenant: r.identity.tenant.clone(),
                profile: r.identity.profile.clone(),
                name: r.identity.name.clone(),
            },
            driver_type: inner.descriptor.driver_type.clone(),
            codec: inner.driver.session_codec(),
            resume_capable: inner.descriptor.sessions.resume,
            launch_fingerprint,
            profile_fingerprint: r.profile_fingerprint.clone(),
            start_id,
            owner: format!("owner-{}", uuid::Uuid::new_v4()),
            held: tokio::sync::Mutex::new(Held {
                leases: Vec::new(),
                previous: None,
                current: None,
                parent: None,
                fingerprint: String::new(),
                fresh_over: false,
                renewal: None,
                lost: Arc::new(std::sync::atomic::AtomicBool::new(false)),
                borrowed: false,
            }),
            thread,
        }
    }

    fn mode(&self) -> Mode {
        self.thread.mode.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn target(&self, key: &str) -> String {
        lease_target(&self.tenant, &self.agent, key)
    }

    fn store_err(e: StoreError) -> Error {
        match e {
            StoreError::Busy { .. } => {
                Error::thread(ThreadErrorKind::Busy, "another execution owns this thread")
            }
            StoreError::LeaseLost { .. } => Error::thread(ThreadErrorKind::LeaseLost, e.to_string()),
            StoreError::AlreadyExists { .. } => Error::thread(ThreadErrorKind::AlreadyExists, e.to_string()),
            other => Error::thread(ThreadErrorKind::Store, other.to_string()),
        }
    }

    async fn recovery_prefix(&self, key: &str) -> String {
        let entries = self
            .store
            .continuity(&self.tenant, &self.agent, key)
            .await
            .unwrap_or_default();
        if entries.is_empty() {
            return String::new();
        }
        let mut out = String::from(
            "[Context from an earlier session of this conversation that could not be resumed. It is limited recovery \
             context, not the full history.]\n",
        );
        for e in &entries {
            let label = match e.kind {
                ContinuityKind::Guidance => "Earlier guidance from the user",
                ContinuityKind::AssistantTurn => "An earlier reply of yours",
            };
            out.push_str(&format!("- {label}: {}\n", e.text));
        }
        out.push_str("[End of earlier context]\n\n");
        out
    }

    fn continuity_notice(broker: &Broker, reason: &str) {
        broker.publish_critical(
            Payload::Notice(
                Notice::new(
                    notice_kind::THREAD_CONTINUITY,
                    format!("starting a fresh provider session: {reason}"),
                )
                .with_data("reason", reason),
            ),
            None,
        );
    }

    /// The guard reason when the stored session was made under other profile resources.
    fn profile_changed(&self, rec: &Record) -> Option<String> {
        // Only a resumable state carries the guard.
        let state = rec.state.as_ref().filter(|s| !s.resume_id.is_empty())?;
        let stored = state
            .data
            .get(session::PARAM_PROFILE)
            .map(String::as_str)
            .unwrap_or("");
        (stored != self.profile_fingerprint).then(|| {
            format!(
                "profile resources changed ({} -> {})",
                short(stored),
                short(&self.profile_fingerprint)
            )
        })
    }

    fn decode(&self, rec: &Record) -> Option<SessionState> {
        let (codec, state) = (self.codec.as_ref()?, rec.state.as_ref()?);
        let s = from_store(state);
        codec.decode(&codec.encode(&s)).ok()
    }

    /// Records `ids` as delivered on thread `key` (best effort: a failure is a `thread.persistence`
    /// notice, never fatal).
    async fn record_receipts(&self, broker: &Broker, key: &str, ids: &[String], now: chrono::DateTime<Utc>) {
        if ids.is_empty() {
            return;
        }
        if let Err(e) = self
            .store
            .record_receipts(&self.tenant, &self.agent, key, ids, now)
            .await
        {
            broker.publish_critical(
                Payload::Notice(Notice::new(
                    notice_kind::THREAD_PERSISTENCE,
                    format!("receipts: {e}"),
                )),
                None,
            );
        }
    }

    fn start_renewal(&self, held: &mut Held, verdict: Verdict, cancel: CancellationToken) {
        if let Some(owned) = &self.thread.standby {
            // The Standby renews its lease; the execution stops when the Standby loses it.
            let lost = held.lost.clone();
            let gone = owned.lost_token();
            held.renewal = Some(tokio::spawn(async move {
                gone.cancelled().await;
                lost.store(true, std::sync::atomic::Ordering::SeqCst);
                verdict.confirm_thread(
                    FailureReason::InfrastructureError,
                    ThreadErrorKind::LeaseLost,
                    "thread ownership lease lost (the Standby's renewal failed)",
                    JsonMap::new(),
                );
                cancel.cancel();
            }));
            return;
        }
        let store = self.store.clone();
        let leases = held.leases.clone();
        let lost = held.lost.clone();
        let (ttl, every) = self.thread.lease_timing;
        held.renewal = Some(tokio::spawn(async move {
            let mut leases = leases;
            loop {
                tokio::time::sleep(every).await;
                for l in leases.iter_mut() {
                    match store.renew_lease(l, ttl).await {
                        Ok(renewed) => *l = renewed,
                        Err(e) => {
                            lost.store(true, std::sync::atomic::Ordering::SeqCst);
                            verdict.confirm_thread(
                                FailureReason::InfrastructureError,
                                ThreadErrorKind::LeaseLost,
                                format!("thread ownership lease lost: {e}"),
                                JsonMap::new(),
                            );
                            cancel.cancel();
                            return;
                        }
                    }
                }
            }
        }));
    }
}

#[async_trait::async_trait]
impl ExecutionHooks for ThreadHooks {
    async fn prepare(&self, verdict: &Verdict, cancel: &CancellationToken) -> Result<bool, Error> {
        let mode = self.mode();
        if matches!(mode, Mode::Fork { .. }) && !self.thread.agent.descriptor().sessions.fork {
            return Err(Error::thread(
                ThreadErrorKind::Incompatible,
                format!("the {} driver cannot fork sessions", self.driver_type),
            ));
        }
        let key = self.thread.key.clone();
        let (ttl, _) = self.thread.lease_timing;
        let mut held = self.held.lock().await;
        match &self.thread.standby {
            // A Standby's execution runs under the Standby's lease.
            Some(owned) => {
                let lease = owned.current().ok_or_else(|| {
                    Error::thread(ThreadErrorKind::LeaseLost, "the Standby lost the thread's lease")
                })?;
                held.leases.push(lease);
                held.borrowed = true;
            }
            None => {
                // A lease this process failed to release at an earlier run's end is its own and idle.
                super::release::settle(&self.store, &self.target(&key)).await;
                let lease = self
                    .store
                    .acquire_lease(&self.target(&key), &self.owner, ttl)
                    .await
                    .map_err(Self::store_err)?;
                held.leases.push(lease);
            }
        }
        let pending = self
            .thread
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let current = match pending {
            Some(p) => Some(p),
            None => self
                .store
                .resolve(&Query::key(&self.tenant, &self.agent, &key))
                .await
                .map_err(Self::store_err)?,
        };
        match &mode {
            Mode::Fork { parent } => {
                if current.is_some() {
                    return Err(Error::thread(
                        ThreadErrorKind::AlreadyExists,
                        format!("thread {key:?} already exists"),
                    ));
                }
                let parent_rec = self
                    .store
                    .resolve(&Query::key(&self.tenant, &self.agent, parent))
                    .await
                    .map_err(Self::store_err)?
                    .ok_or_else(|| {
                        Error::thread(
                            ThreadErrorKind::NotFound,
                            format!("parent thread {parent:?} not found"),
                        )
                    })?;
                held.parent = Some(parent_rec);
            }
            Mode::ResumeOnly if current.is_none() => {
                return Err(Error::thread(
                    ThreadErrorKind::NotFound,
                    format!("thread {key:?} not found"),
                ));
            }
            _ => {}
        }
        held.current = current;
        let duplicate = match &self.start_id {
            Some(id) => self
                .store
                .has_receipt(&self.tenant, &self.agent, &key, id)
                .await
                .map_err(Self::store_err)?,
            None => false,
        };
        self.start_renewal(&mut held, verdict.clone(), cancel.clone());
        Ok(duplicate)
    }

    async fn plan(&self, broker: &Broker, published: &str) -> Result<Prepared, Error> {
        let mode = self.mode();
        let key = self.thread.key.clone();
        let fingerprint = with_services(&self.launch_fingerprint, published);
        let mut held = self.held.lock().await;
        held.fingerprint.clone_from(&fingerprint);
        let mut prepared = Prepared {
            session: SessionPlan::Fresh,
            prefix: String::new(),
        };
        match &mode {
            Mode::Fork { .. } => {
                let Some(parent_rec) = held.parent.clone() else {
                    return Err(Error::thread(
                        ThreadErrorKind::NotFound,
                        "parent thread not found",
                    ));
                };
                if parent_rec.compatibility_fingerprint != fingerprint {
                    return Err(Error::thread(
                        ThreadErrorKind::Incompatible,
                        "the parent thread's configuration differs",
                    ));
                }
                let state = self.decode(&parent_rec).ok_or_else(|| {
                    Error::thread(
                        ThreadErrorKind::CheckpointMissing,
                        "the parent thread has no healthy checkpoint",
                    )
                })?;
                prepared.session = SessionPlan::Fork(state);
            }
            Mode::ResumeOnly => {
                let rec = held.current.clone().ok_or_else(|| {
                    Error::thread(ThreadErrorKind::NotFound, format!("thread {key:?} not found"))
                })?;
                if let Some(why) = self.profile_changed(&rec) {
                    return Err(Error::thread(ThreadErrorKind::Incompatible, why));
                }
                if rec.compatibility_fingerprint != fingerprint {
                    return Err(Error::thread(
                        ThreadErrorKind::Incompatible,
                        "the stored session's configuration differs",
                    ));
                }
                let state = self.decode(&rec).ok_or_else(|| {
                    Error::thread(
                        ThreadErrorKind::CheckpointMissing,
                        "no healthy checkpoint to resume",
                    )
                })?;
                prepared.session = SessionPlan::Resume(state);
                held.previous = Some(rec);
            }
            Mode::ContinueOrStart => {
                if let Some(rec) = held.current.clone() {
                    let state = self.decode(&rec);
                    if let Some(why) = self.profile_changed(&rec) {
                        Self::continuity_notice(broker, &why);
                        prepared.prefix = self.recovery_prefix(&key).await;
                        held.fresh_over = true;
                    } else if rec.compatibility_fingerprint != fingerprint {
                        Self::continuity_notice(broker, "configuration changed");
                        prepared.prefix = self.recovery_prefix(&key).await;
                        held.fresh_over = true;
                    } else if let Some(state) = state {
                        prepared.session = SessionPlan::Resume(state);
                    } else {
                        Self::continuity_notice(broker, "no healthy checkpoint");
                        held.fresh_over = true;
                    }
                    held.previous = Some(rec);
                }
            }
        }
        Ok(prepared)
    }

    async fn on_resume_rejected(&self, broker: &Broker, reason: &str) -> Option<(SessionPlan, String)> {
        if self.mode() != Mode::ContinueOrStart {
            return None;
        }
        Self::continuity_notice(broker, &format!("the provider rejected the resume: {reason}"));
        self.held.lock().await.fresh_over = true;
        Some((SessionPlan::Fresh, self.recovery_prefix(&self.thread.key).await))
    }

    async fn finalize(
        &self,
        broker: &Broker,
        success: bool,
        checkpoint: Option<&Checkpoint>,
        result: &RunResult,
        delivered: &[String],
    ) -> Result<(), FinalizeError> {
        let mut held = self.held.lock().await;
        if let Some(r) = held.renewal.take() {
            r.abort();
        }
        if held.lost.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(FinalizeError::thread(
                ThreadErrorKind::LeaseLost,
                "thread ownership lease lost; nothing was persisted",
            ));
        }
        let key = self.thread.key.clone();
        let now = Utc::now();
        // Delivered input is receipted whatever the outcome (an id is an idempotency key: what reached
        // the provider is not delivered again); the starting prompt once a provider turn completed.
        let mut receipts: Vec<String> = delivered.to_vec();
        if result.turns > 0 {
            receipts.extend(self.start_id.clone());
        }
        if !success {
            self.record_receipts(broker, &key, &receipts, now).await;
            return Ok(());
        }
        if result.turns == 0 {
            // A deduplicated starting prompt: nothing new to persist.
            return Ok(());
        }
        let state = match (checkpoint, &self.codec) {
            (Some(cp), Some(codec))
                if cp.valid && codec.decode(&codec.encode(&cp.state)).as_ref() == Ok(&cp.state) =>
            {
                cp.state.clone()
            }
            _ if !self.resume_capable => SessionState {
                resume_id: String::new(),
                ..Default::default()
            },
            _ => {
                return Err(FinalizeError::thread(
                    ThreadErrorKind::CheckpointMissing,
                    "the run succeeded without a valid, round-trippable checkpoint",
                ));
            }
        };
        let mut state = state;
        if !self.profile_fingerprint.is_empty() && !state.resume_id.is_empty() {
            state
                .data
                .insert(session::PARAM_PROFILE.into(), self.profile_fingerprint.clone());
        }
        let previous = held.previous.clone();
        let record = Record {
            id: match (&previous, held.fresh_over) {
                (Some(p), false) => p.id.clone(),
                _ => format!("ses-{}", uuid::Uuid::now_v7()),
            },
            key: key.clone(),
            tenant: self.tenant.clone(),
            host_agent: self.agent.clone(),
            status: ThreadStatus::Active,
            driver_type: self.driver_type.clone(),
            agent: self.identity.clone(),
            fingerprint: session::fingerprint(&[&self.driver_type, &state.resume_id]),
            compatibility_fingerprint: held.fingerprint.clone(),
            codec: self
                .codec
                .as_ref()
                .map(|c| c.name().to_owned())
                .unwrap_or_default(),
            state: (!state.resume_id.is_empty()).then(|| to_store(&state)),
            created_at: previous
                .as_ref()
                .filter(|_| !held.fresh_over)
                .map(|p| p.created_at)
                .unwrap_or(now),
            updated_at: now,
        };
        let is_fork = matches!(self.mode(), Mode::Fork { .. });
        let request = FinalizeRequest {
            record: record.clone(),
            previous_id: previous
                .as_ref()
                .filter(|p| p.id != record.id)
                .map(|p| p.id.clone()),
            held_leases: held.leases.clone(),
            archive_old: held.fresh_over && previous.is_some(),
            rebind_active: true,
            require_key_absent: is_fork,
        };
        let mut attempt = 0;
        loop {
            match self.store.finalize(request.clone()).await {
                Ok(_) => break,
                Err(StoreError::LeaseLost { .. }) => {
                    return Err(FinalizeError::thread(
                        ThreadErrorKind::LeaseLost,
                        "thread ownership lease lost before persisting",
                    ));
                }
                Err(StoreError::AlreadyExists { .. }) => {
                    return Err(FinalizeError::thread(
                        ThreadErrorKind::AlreadyExists,
                        format!("thread {key:?} already exists (fork target taken)"),
                    ));
                }
                Err(e) => {
                    attempt += 1;
                    broker.publish_critical(
                        Payload::Notice(
                            Notice::new(
                                notice_kind::THREAD_PERSISTENCE,
                                format!("persisting the checkpoint failed (attempt {attempt}): {e}; retained in process"),
                            )
                            .with_data("attempt", attempt),
                        ),
                        None,
                    );
                    if attempt >= PERSIST_RETRIES {
                        *self.thread.pending.lock().unwrap_or_else(|p| p.into_inner()) = Some(record);
                        self.record_receipts(broker, &key, &receipts, now).await;
                        return Ok(());
                    }
                    tokio::time::sleep(Duration::from_millis(50 * u64::from(attempt))).await;
                }
            }
        }
        *self.thread.pending.lock().unwrap_or_else(|p| p.into_inner()) = None;
        if is_fork {
            *self.thread.mode.lock().unwrap_or_else(|p| p.into_inner()) = Mode::ContinueOrStart;
        }
        // Receipts and continuity are best effort: a failure is reported, never fatal.
        self.record_receipts(broker, &key, &receipts, now).await;
        let mut notes = Vec::new();
        for m in result
            .messages()
            .iter()
            .filter(|m| m.state == super::result::MessageState::Delivered && delivered.contains(&m.id))
        {
            let entry = ContinuityEntry {
                kind: ContinuityKind::Guidance,
                text: m.text.clone(),
                at: now,
            };
            if let Err(e) = self
                .store
                .append_continuity(&self.tenant, &self.agent, &key, entry)
                .await
            {
                notes.push(format!("continuity: {e}"));
            }
        }
        if !result.text.is_empty() {
            let entry = ContinuityEntry {
                kind: ContinuityKind::AssistantTurn,
                text: result.text.clone(),
                at: now,
            };
            if let Err(e) = self
                .store
                .append_continuity(&self.tenant, &self.agent, &key, entry)
                .await
            {
                notes.push(format!("continuity: {e}"));
            }
        }
        for n in notes {
            broker.publish_critical(
                Payload::Notice(Notice::new(notice_kind::THREAD_PERSISTENCE, n)),
                None,
            );
        }
        Ok(())
    }

    async fn release(&self, broker: &Broker) {
        let mut held = self.held.lock().await;
        if let Some(r) = held.renewal.take() {
            r.abort();
        }
        let borrowed = std::mem::take(&mut held.borrowed);
        let leases: Vec<Lease> = held.leases.drain(..).skip(usize::from(borrowed)).collect();
        for lease in leases.into_iter().rev() {
            if let Err(e) = super::release::release(&self.store, &lease).await {
                tracing::warn!(lease = %lease.target, error = %e, "could not release the thread's lease");
                broker.publish_critical(
                    Payload::Notice(Notice::new(
                        notice_kind::THREAD_PERSISTENCE,
                        format!(
                            "releasing the thread's lease failed {} times: {e}; this process releases it \
                             before its next run on the thread",
                            super::release::RELEASE_ATTEMPTS
                        ),
                    )),
                    None,
                );
            }
        }
    }
}
