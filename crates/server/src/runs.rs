//! The run registry: every execution the service started, its in-memory mirror of the durable event
//! log, its live approval requests, and the pump that publishes and records its events.
//!
//! One pump task per run is the runtime stream's only consumer. It exposes and redacts each batch of
//! events once (the [`Recorder`]'s policy), appends the records to the run's in-memory log, bumps a
//! `watch` counter, and hands the same records to the run's writer ([`super::record`]), which commits
//! them to the durable log in order, off the live path. SSE subscribers read the in-memory log at their
//! own pace, so a slow subscriber never blocks the run and a slow commit never delays a live event. The
//! in-memory log holds every event of the run until the run is evicted, which happens only after the
//! run's end is durable: `done` is published after the writer confirmed that everything up to it is
//! committed (and the run's state recorded), so a subscriber that follows the memory log sees no gap and
//! no duplicate, and one that comes after eviction replays the same events from the store. Live
//! approval requests are kept by id so the approval POST can answer them exactly once.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};
use futures::{FutureExt, StreamExt};
use serde_json::{Value, json};
use tokio_util::task::TaskTracker;
use tracing::Instrument;

use super::agents::AgentEntry;
use super::error::{ApiError, ErrorCode};
use super::limits::{RunBudget, RunSlot};
use super::reader::{LogReader, Source};
use super::record::{MAX_UNRECORDED, Writer};
use super::runlog::{LIVE_WINDOW, RunLog};
use crate::recorder::Recorder;
use crate::runtime::{ApprovalRequest, CallOptions, FailureReason, Payload, RunOutcome, Stream};
use crate::store::{Approval, ApprovalState, RunRecord, RunState, StoreError, ThreadStore};

/// How long a finished run stays in memory (afterwards it is served from the store).
pub const FINISHED_TTL: Duration = Duration::from_secs(300);

pub use super::runlog::LogItem;

/// A run the service started.
pub struct RunEntry {
    /// The run id.
    pub run_id: String,
    /// The tenant.
    pub tenant: String,
    /// The agent's name.
    pub agent: String,
    /// The thread key, if any.
    pub thread_key: Option<String>,
    /// The runtime handle.
    pub stream: Stream,
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// Its live log: the exposed records in a bounded window over the durable log.
    pub log: RunLog,
    /// Its tenant's recorder under the agent's exposure (the durable log, the one exposure policy).
    pub recorder: Recorder,
    approvals: Mutex<BTreeMap<String, ApprovalRequest>>,
    /// The log position (last sequence shown) of a run whose AG-UI stream ended at an interrupt while
    /// the execution waits for its answer; the AG-UI run that resumes it takes the position and
    /// streams the rest.
    parked: Mutex<Option<u64>>,
    /// The finished run's result with its metered `usage` ([`super::metering`]).
    pub metered: std::sync::OnceLock<Value>,
}

impl std::fmt::Debug for RunEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunEntry")
            .field("run_id", &self.run_id)
            .finish_non_exhaustive()
    }
}

impl RunEntry {
    /// A reader of this run's log after sequence `after` (the window, then the durable log).
    pub fn reader(self: &Arc<Self>, after: u64) -> LogReader {
        LogReader::new(
            Source {
                run_id: self.run_id.clone(),
                live: Some(self.clone()),
                recorder: self.recorder.clone(),
                view: *self.recorder.policy(),
                interrupted: None,
            },
            after,
        )
    }

    /// True once the run's terminal event was recorded.
    pub fn is_finished(&self) -> bool {
        self.log.is_finished()
    }

    /// A live approval request of this run.
    pub fn approval(&self, id: &str) -> Option<ApprovalRequest> {
        self.approvals
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(id)
            .cloned()
    }

    /// Parks the AG-UI stream at log position `seq` (the last sequence it showed): the AG-UI run
    /// ended at an interrupt, the execution goes on.
    pub fn park(&self, seq: u64) {
        *self.parked.lock().unwrap_or_else(|p| p.into_inner()) = Some(seq);
    }

    /// Takes the parked AG-UI log position (exactly one caller gets it).
    pub fn unpark(&self) -> Option<u64> {
        self.parked.lock().unwrap_or_else(|p| p.into_inner()).take()
    }

    /// True while an AG-UI stream is parked (the run waits for an AG-UI resume).
    pub fn is_parked(&self) -> bool {
        self.parked.lock().unwrap_or_else(|p| p.into_inner()).is_some()
    }

    /// The live approval requests still pending.
    pub fn pending_approvals(&self) -> Vec<ApprovalRequest> {
        self.approvals
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .filter(|r| r.is_pending())
            .cloned()
            .collect()
    }
}

/// Counters for `/metrics`.
#[derive(Debug, Default)]
pub struct Metrics {
    /// Runs started.
    pub started: AtomicU64,
    /// Events recorded.
    pub events: AtomicU64,
    /// Event batches the store refused.
    pub record_failures: AtomicU64,
    /// Times a pump waited because its run's unrecorded backlog was full (the store fell behind).
    pub record_waits: AtomicU64,
    /// Open SSE streams.
    pub subscribers: AtomicU64,
    /// Latency histograms: requests, time to a run's first event, run duration.
    pub latency: Arc<super::histograms::Histograms>,
}

/// What the busy table holds for a thread an open Standby owns (a run holds its run id, a starting
/// run the empty string).
const STANDBY_HOLDER: &str = "(standby)";

/// A thread an open Standby holds in the [`RunRegistry`]'s busy table: runs refuse it with 409
/// `thread_busy` until the claim drops. One table, one lock: a Standby opening and a run starting on
/// the same thread cannot both be admitted.
#[derive(Debug)]
pub struct ThreadClaim {
    registry: Arc<RunRegistry>,
    key: (String, String, String),
}

impl Drop for ThreadClaim {
    fn drop(&mut self) {
        let mut busy = self.registry.busy.lock().unwrap_or_else(|p| p.into_inner());
        if busy.get(&self.key).is_some_and(|h| h == STANDBY_HOLDER) {
            busy.remove(&self.key);
        }
    }
}

/// The 409 `thread_busy` for a thread the busy table gives to `holder`.
fn busy_error(holder: &str) -> ApiError {
    let message = match holder {
        STANDBY_HOLDER => "a Standby owns this thread: send through its standby route".to_owned(),
        "" => "a run is starting on this thread".to_owned(),
        run => format!("run {run} is active on this thread"),
    };
    ApiError::new(ErrorCode::ThreadBusy, message)
}

/// Every run of this process, and which thread is busy with which run.
pub struct RunRegistry {
    /// Counters.
    pub metrics: Metrics,
    runs: Mutex<HashMap<String, Arc<RunEntry>>>,
    busy: Mutex<HashMap<(String, String, String), String>>,
    tracker: TaskTracker,
    record_backlog: usize,
    window: usize,
    /// The AG-UI bridge's registries of active executions (the library's, spec §17), one per tenant
    /// and agent: every run on a thread is tracked there until its pump ends.
    agui: Mutex<HashMap<(String, String), Arc<agent_adaptor_core::agui::RunRegistry>>>,
    /// Prices, budgets and the live usage of the runs ([`super::metering`]).
    pub metering: Arc<super::metering::Metering>,
    /// Where run ends, approval requests and failed messages are announced ([`super::webhooks`]).
    webhooks: Option<Arc<super::webhooks::Webhooks>>,
}

impl Default for RunRegistry {
    fn default() -> Self {
        RunRegistry::new(MAX_UNRECORDED)
    }
}

impl std::fmt::Debug for RunRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunRegistry").finish_non_exhaustive()
    }
}

/// What to start.
pub struct StartRun<'a> {
    /// The agent.
    pub agent: &'a AgentEntry,
    /// The tenant.
    pub tenant: &'a str,
    /// The thread, or `None` for a stateless run.
    pub thread_key: Option<String>,
    /// For the first run of a fork: the parent thread whose checkpoint it starts from.
    pub fork_of: Option<String>,
    /// The prompt.
    pub prompt: String,
    /// Call options (approvals arrive as events whatever is set here).
    pub options: CallOptions,
    /// The tenant's concurrent-run slot, held until the run's pump ends.
    pub slot: Option<RunSlot>,
    /// An AG-UI request on a thread: the run starts through the library's AG-UI run registry
    /// (`RunRegistry::send`, which starts `Thread::send` on an idle thread) with the input's text.
    pub agui: Option<&'a agent_adaptor_core::agui::RunAgentInput>,
}

impl RunRegistry {
    /// A registry whose runs each let at most `record_backlog` events wait for the store and keep
    /// [`LIVE_WINDOW`] committed events in memory.
    pub fn new(record_backlog: usize) -> Self {
        RunRegistry::with_window(record_backlog, LIVE_WINDOW)
    }

    /// A registry whose runs keep `window` committed events in memory (see [`RunLog`]).
    pub fn with_window(record_backlog: usize, window: usize) -> Self {
        RunRegistry {
            metrics: Metrics::default(),
            runs: Mutex::default(),
            busy: Mutex::default(),
            tracker: TaskTracker::new(),
            record_backlog,
            window,
            agui: Mutex::default(),
            metering: Arc::default(),
            webhooks: None,
        }
    }

    /// A registry like [`with_window`](Self::with_window) whose runs are metered and budgeted by
    /// `metering`.
    pub fn with_metering(
        record_backlog: usize,
        window: usize,
        metering: Arc<super::metering::Metering>,
    ) -> Self {
        RunRegistry {
            metering,
            ..RunRegistry::with_window(record_backlog, window)
        }
    }

    /// This registry announcing its runs' ends, approval requests and failed messages to `webhooks`.
    pub fn with_webhooks(self, webhooks: Arc<super::webhooks::Webhooks>) -> Self {
        RunRegistry {
            webhooks: Some(webhooks),
            ..self
        }
    }

    /// Enqueues a webhook event off the run's path (on the registry's tracker, so a shutdown waits
    /// for it): the run never waits for the store's webhook tables.
    fn announce(&self, tenant: &str, event: super::webhooks::EventType, data: Value) {
        let Some(hooks) = self.webhooks.clone() else {
            return;
        };
        let tenant = tenant.to_owned();
        self.tracker.spawn(
            async move {
                hooks.emit(&tenant, event, data).await;
            }
            .in_current_span(),
        );
    }

    /// The AG-UI run registry (the library's) of `tenant` on `agent`: the execution active on each
    /// thread, for the AG-UI route's supplements.
    pub fn agui(&self, tenant: &str, agent: &str) -> Arc<agent_adaptor_core::agui::RunRegistry> {
        self.agui
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry((tenant.to_owned(), agent.to_owned()))
            .or_default()
            .clone()
    }

    /// Stops tracking `entry` as its thread's active execution.
    fn untrack(&self, entry: &RunEntry) {
        if let Some(key) = &entry.thread_key {
            self.agui(&entry.tenant, &entry.agent).forget(key, &entry.stream);
        }
    }

    /// The run `run_id` of `tenant`, if it is in memory.
    pub fn get(&self, tenant: &str, run_id: &str) -> Option<Arc<RunEntry>> {
        self.runs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(run_id)
            .filter(|e| e.tenant == tenant)
            .cloned()
    }

    /// The run active on a thread, if any.
    pub fn active_on(&self, tenant: &str, agent: &str, key: &str) -> Option<Arc<RunEntry>> {
        let id = self
            .busy
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&(tenant.to_owned(), agent.to_owned(), key.to_owned()))
            .cloned()?;
        self.get(tenant, &id)
    }

    /// Claims thread `key` of `tenant` on `agent` for a Standby; 409 `thread_busy` while a run holds
    /// (or is starting on) it.
    pub fn claim_for_standby(
        self: &Arc<Self>,
        tenant: &str,
        agent: &str,
        key: &str,
    ) -> Result<ThreadClaim, ApiError> {
        let key = (tenant.to_owned(), agent.to_owned(), key.to_owned());
        let mut busy = self.busy.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(holder) = busy.get(&key) {
            return Err(busy_error(holder));
        }
        busy.insert(key.clone(), STANDBY_HOLDER.to_owned());
        Ok(ThreadClaim {
            registry: self.clone(),
            key,
        })
    }

    /// Every run still executing.
    pub fn live(&self) -> Vec<Arc<RunEntry>> {
        self.runs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .filter(|e| !e.is_finished())
            .cloned()
            .collect()
    }

    /// Waits until every pump finished, at most `deadline`; true when they all did.
    pub async fn drain(&self, deadline: Duration) -> bool {
        self.tracker.close();
        tokio::time::timeout(deadline, self.tracker.wait()).await.is_ok()
    }

    /// Starts a run: refuses a busy thread with 409 `thread_busy`, a refused send with 422, records the run
    /// and spawns its pump.
    pub async fn start(
        self: &Arc<Self>,
        store: &Arc<dyn ThreadStore>,
        owner: &str,
        req: StartRun<'_>,
    ) -> Result<Arc<RunEntry>, ApiError> {
        // A run that cannot fit in its budget is refused before anything starts (402).
        (self.metering)
            .admit(store, req.tenant, &req.agent.name, req.thread_key.as_deref())
            .await?;
        let busy_key = req
            .thread_key
            .as_ref()
            .map(|k| (req.tenant.to_owned(), req.agent.name.clone(), k.clone()));
        if let Some(key) = &busy_key {
            let mut busy = self.busy.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(holder) = busy.get(key) {
                return Err(busy_error(holder));
            }
            busy.insert(key.clone(), String::new());
        }
        let release = |this: &Self| {
            if let Some(key) = &busy_key {
                this.busy.lock().unwrap_or_else(|p| p.into_inner()).remove(key);
            }
        };
        let mut options = req.options.approvals_as_events();
        if !req.tenant.is_empty() {
            options = options.identity(crate::driver::Identity {
                tenant: req.tenant.to_owned(),
                ..Default::default()
            });
        }
        // The execution is spawned inside the run span, so driver and runtime logs of the run carry it.
        let span = super::telemetry::run_span(&req.agent.name, req.thread_key.as_deref(), req.tenant);
        let stream = match (&req.thread_key, &req.fork_of, req.agui) {
            (Some(k), None, Some(input)) => {
                let thread = req.agent.agent.thread(k);
                let bridge = self.agui(req.tenant, &req.agent.name);
                let sent = bridge
                    .send(&thread, input, options)
                    .instrument(span.clone())
                    .await;
                match sent {
                    Ok((stream, false)) => stream,
                    // The busy table admitted this start, so nothing else runs on the thread.
                    Ok((stream, true)) => {
                        release(self);
                        return Err(busy_error(stream.run_id()));
                    }
                    Err(e) => {
                        release(self);
                        return Err(ApiError::invalid("messages", e.to_string()));
                    }
                }
            }
            _ => span.in_scope(|| match &req.thread_key {
                Some(k) => match &req.fork_of {
                    Some(parent) => req.agent.agent.thread(parent).fork(k).send(&req.prompt, options),
                    None => req.agent.agent.thread(k).send(&req.prompt, options),
                },
                None => req.agent.agent.send(&req.prompt, options),
            }),
        };
        span.record("run_id", stream.run_id());
        if stream.run_id().is_empty() {
            release(self);
            let err = stream.result().await.err().map(|e| e.info());
            let (code, message) = err
                .map(|i| (i.code, i.message))
                .unwrap_or_else(|| ("refused".into(), "the run was refused".into()));
            return Err(ApiError::new(ErrorCode::RunRefused, format!("{code}: {message}")).field("options"));
        }
        let launched = Launch {
            agent: req.agent,
            tenant: req.tenant,
            thread_key: req.thread_key.clone(),
            stream,
            busy_key: busy_key.clone(),
            slot: req.slot,
        };
        Ok(self.launch(store, owner, launched, span).await)
    }

    /// Records an execution the runtime started elsewhere (a Standby's) as a run of this registry and
    /// spawns its pump, exactly like a started run's: one pump, exposure once, batched recording,
    /// `done` after the final commit. Its thread and slot are the caller's (the Standby holds them).
    pub async fn adopt(
        self: &Arc<Self>,
        store: &Arc<dyn ThreadStore>,
        owner: &str,
        agent: &AgentEntry,
        tenant: &str,
        key: &str,
        stream: Stream,
    ) -> Arc<RunEntry> {
        let span = super::telemetry::run_span(&agent.name, Some(key), tenant);
        span.record("run_id", stream.run_id());
        let launched = Launch {
            agent,
            tenant,
            thread_key: Some(key.to_owned()),
            stream,
            busy_key: None,
            slot: None,
        };
        self.launch(store, owner, launched, span).await
    }

    /// Registers an admitted execution, records its run and spawns its pump (inside `span`).
    async fn launch(
        self: &Arc<Self>,
        store: &Arc<dyn ThreadStore>,
        owner: &str,
        run: Launch<'_>,
        span: tracing::Span,
    ) -> Arc<RunEntry> {
        let busy_key = run.busy_key;
        let stream = run.stream;
        let now = Utc::now();
        let entry = Arc::new(RunEntry {
            run_id: stream.run_id().to_owned(),
            tenant: run.tenant.to_owned(),
            agent: run.agent.name.clone(),
            thread_key: run.thread_key,
            stream: stream.clone(),
            created_at: now,
            log: RunLog::new(self.window),
            recorder: Recorder::new(store.clone(), run.tenant, &run.agent.name, run.agent.exposure),
            approvals: Mutex::new(BTreeMap::new()),
            parked: Mutex::new(None),
            metered: std::sync::OnceLock::new(),
        });
        if let Some(key) = &busy_key {
            self.busy
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(key.clone(), entry.run_id.clone());
            self.agui(&entry.tenant, &entry.agent).track(&key.2, &stream);
        }
        self.runs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(entry.run_id.clone(), entry.clone());
        let record = RunRecord {
            run_id: entry.run_id.clone(),
            tenant: entry.tenant.clone(),
            agent: entry.agent.clone(),
            thread_key: entry.thread_key.clone(),
            state: RunState::Running,
            owner: owner.to_owned(),
            result: None,
            error: None,
            created_at: now,
            updated_at: now,
        };
        match with_retries(|| store.put_run(&record)).await {
            Ok(()) | Err(StoreError::AlreadyExists { .. }) => {}
            // The run goes on; its end is recorded whole (`Pump::finish`).
            Err(e) => tracing::warn!(run_id = %entry.run_id, error = %e, "could not record the run"),
        }
        let rescue = (self.clone(), entry.clone(), store.clone(), busy_key.clone());
        let meter = self.metering.start(
            store,
            super::metering::RunIdentity {
                run_id: entry.run_id.clone(),
                tenant: entry.tenant.clone(),
                agent: entry.agent.clone(),
                thread_key: entry.thread_key.clone(),
                started_at: now,
            },
        );
        let pump = Pump {
            meter: meter.await,
            registry: self.clone(),
            entry: entry.clone(),
            recorder: entry.recorder.clone(),
            store: store.clone(),
            busy_key,
            record,
            budget: run.slot.as_ref().map(RunSlot::budget).unwrap_or_default(),
            slot: run.slot,
            admitted: std::time::Instant::now(),
            first_seen: false,
        };
        self.metrics.started.fetch_add(1, Ordering::Relaxed);
        span.in_scope(|| tracing::info!("run started"));
        let guarded = async move {
            if std::panic::AssertUnwindSafe(pump.run())
                .catch_unwind()
                .await
                .is_err()
            {
                let (registry, entry, store, busy_key) = rescue;
                pump_panicked(&registry, &entry, &store, busy_key).await;
            }
        };
        self.tracker.spawn(guarded.instrument(span));
        entry
    }
}

/// An admitted execution to register.
struct Launch<'a> {
    agent: &'a AgentEntry,
    tenant: &'a str,
    thread_key: Option<String>,
    stream: Stream,
    busy_key: Option<(String, String, String)>,
    slot: Option<RunSlot>,
}

/// A pump that panicked (its slot went with it): the run is cancelled, recorded `failed`
/// (`internal_panic`), its thread freed, its live log closed and the entry dropped from memory (later
/// reads come from the store), so nothing waits on it forever.
async fn pump_panicked(
    registry: &RunRegistry,
    entry: &RunEntry,
    store: &Arc<dyn ThreadStore>,
    busy_key: Option<(String, String, String)>,
) {
    tracing::error!(run_id = %entry.run_id, "the run's pump panicked; the run ends failed");
    entry.stream.cancel();
    let error = json!({
        "code": "run_failed",
        "reason": "infrastructure_error",
        "message": "the run stopped on an internal error (a panic in its pump); see the service log",
        "details": {"code": "internal_panic"},
    });
    if let Err(e) = store
        .update_run_state(&entry.run_id, RunState::Failed, None, Some(error))
        .await
    {
        tracing::error!(run_id = %entry.run_id, error = %e, "could not record the run's end");
    }
    if let Some(key) = busy_key {
        let mut busy = registry.busy.lock().unwrap_or_else(|p| p.into_inner());
        if busy.get(&key) == Some(&entry.run_id) {
            busy.remove(&key);
        }
    }
    registry.untrack(entry);
    entry.log.finish();
    // The run is served from the store from now on (its live outcome would read `cancelled`).
    registry
        .runs
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .remove(&entry.run_id);
}

struct Pump {
    meter: super::metering::RunMeter,
    registry: Arc<RunRegistry>,
    entry: Arc<RunEntry>,
    recorder: Recorder,
    store: Arc<dyn ThreadStore>,
    busy_key: Option<(String, String, String)>,
    /// The run's record as first written (rewritten whole with its end if that write was lost).
    record: RunRecord,
    slot: Option<RunSlot>,
    budget: RunBudget,
    /// When the run was admitted (the histograms' zero).
    admitted: std::time::Instant,
    /// Whether the first event after `run_started` was counted.
    first_seen: bool,
}

/// Attempts of a run-record write before the service goes on without it.
const RECORD_ATTEMPTS: u32 = 4;

/// Runs `write` until it succeeds or fails other than [`StoreError::Unavailable`] (a lock or pool
/// timeout, a lost connection), at most [`RECORD_ATTEMPTS`] times, 50 ms apart growing fourfold.
async fn with_retries<T, F, Fut>(mut write: F) -> Result<T, StoreError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, StoreError>>,
{
    let mut pause = Duration::from_millis(50);
    let mut attempt = 1;
    loop {
        match write().await {
            Err(StoreError::Unavailable { detail }) if attempt < RECORD_ATTEMPTS => {
                tracing::debug!(attempt, %detail, "a run-record write failed; retrying");
                tokio::time::sleep(pause).await;
                pause *= 4;
                attempt += 1;
            }
            other => return other,
        }
    }
}

/// A run result as the service shows it: `text`, `turns`, `summary`, and `services` (name, state,
/// endpoint, env variable *names*, cleanup error) when the run had any.
fn result_json(r: &crate::runtime::RunResult) -> Value {
    let mut v = json!({ "text": r.text, "turns": r.turns, "summary": r.summary });
    let services = r.services();
    if !services.is_empty() {
        v["services"] = json!(services);
    }
    v
}

/// The store state and JSON of a finished run's outcome.
pub fn outcome_state(outcome: &RunOutcome) -> (RunState, Option<Value>, Option<Value>) {
    match outcome {
        Ok(r) => (RunState::Succeeded, Some(result_json(r)), None),
        Err(e) => {
            let info = e.info();
            let interrupted = e.reason() == Some(FailureReason::InfrastructureError)
                && info.details.get("code").and_then(Value::as_str) == Some(super::recovery::RUN_INTERRUPTED);
            let state = if e.reason() == Some(FailureReason::Cancelled) {
                RunState::Cancelled
            } else if interrupted {
                RunState::Interrupted
            } else {
                RunState::Failed
            };
            // A failed run shows its partial result only when it had services: their reports say
            // which cleanup failed.
            let partial = e
                .as_run()
                .filter(|r| !r.result.services().is_empty())
                .map(|r| result_json(&r.result));
            (state, partial, serde_json::to_value(info).ok())
        }
    }
}

impl Pump {
    async fn run(mut self) {
        let entry = Arc::clone(&self.entry);
        let mut events = entry.stream.events();
        let (writer, task) = Writer::start(
            self.recorder.clone(),
            self.registry.clone(),
            self.registry.record_backlog,
            entry.clone(),
        );
        self.registry.tracker.spawn(task.in_current_span());
        while let Some(first) = events.next().await {
            let mut batch = vec![first];
            while batch.len() < 256 {
                match events.next().now_or_never() {
                    Some(Some(e)) => batch.push(e),
                    _ => break,
                }
            }
            for e in &batch {
                match &e.payload {
                    Payload::ApprovalRequest(req) => self.park_approval(req).await,
                    Payload::MessageUpdate(m) if m.state == crate::runtime::MessageState::Failed => {
                        self.message_failed(m);
                    }
                    Payload::Notice(n) if n.kind == crate::driver::notice_kind::APPROVAL_RESOLVED => {
                        let id = n.data.get("request_id").and_then(Value::as_str);
                        let label = n.data.get("outcome").and_then(Value::as_str);
                        if let (Some(id), Some(label)) = (id, label) {
                            self.end_approval(id, ended_decision(label)).await;
                        }
                    }
                    _ => {}
                }
            }
            if !self.first_seen && batch.iter().any(|e| !matches!(e.payload, Payload::RunStarted(_))) {
                self.first_seen = true;
                let latency = &self.registry.metrics.latency;
                latency.observe_first_event(&entry.agent, self.admitted.elapsed());
            }
            self.meter.observe(&entry.stream, &batch).await;
            self.registry
                .metrics
                .events
                .fetch_add(batch.len() as u64, Ordering::Relaxed);
            let records = self.recorder.prepare(&batch);
            let mut items: Vec<Arc<LogItem>> = records.iter().map(|r| Arc::new(LogItem::of(r))).collect();
            self.charge(&items);
            // Everything before the run's end goes live at once, its recording queued behind.
            let end = batch.iter().position(|e| matches!(e.payload, Payload::Done(_)));
            let Some(end) = end else {
                self.publish(items, false);
                writer.queue(records).await;
                continue;
            };
            // The run's end is durable, with everything before it, and its thread and slot are free
            // before any subscriber can see `done`: a client that reads the run or starts the next one
            // on the thread right after the terminal event never sees `running` or `thread_busy`, and
            // a run evicted from memory replays from the store in full.
            let tail = items.split_off(end);
            self.publish(items, false);
            if let Err(e) = writer.flush(records).await {
                let last = tail.first().map_or(0, |i| i.seq);
                let mut all = vec![Arc::new(LogItem::store_error(last, &e))];
                all.extend(tail);
                self.finish().await;
                self.publish(all, true);
            } else {
                self.finish().await;
                self.publish(tail, true);
            }
        }
        // A stream that ended without `done` (it cannot, by the one-terminal invariant, but the pump
        // does not rely on it) still waits for its events to be durable and records the run's end.
        if !entry.is_finished() {
            let _ = writer.flush(Vec::new()).await;
            self.finish().await;
        }
        entry.log.finish();
        drop(writer);
        let registry = self.registry.clone();
        let id = entry.run_id.clone();
        tokio::spawn(async move {
            tokio::time::sleep(FINISHED_TTL).await;
            registry
                .runs
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&id);
        });
    }

    /// Charges the run's log budget; past it the run is stopped as `limit_exceeded`.
    fn charge(&mut self, items: &[Arc<LogItem>]) {
        let bytes = items.iter().map(|i| i.data.len()).sum();
        if let Some(over) = self.budget.charge(items.len(), bytes) {
            tracing::warn!(code = over.code(), "the run outgrew its log budget; stopping it");
            let mut details = crate::driver::JsonMap::new();
            details.insert("code".into(), over.code().into());
            self.entry
                .stream
                .fail(FailureReason::LimitExceeded, over.message(), details);
        }
    }

    /// Appends to the live log and wakes the readers.
    fn publish(&self, items: Vec<Arc<LogItem>>, terminal: bool) {
        self.entry.log.publish(items, terminal);
    }

    /// Records an ended approval on its row, unless the row already tells (an answer the approval POST
    /// or an AG-UI resume recorded first) — the approvals view reads these rows.
    async fn end_approval(&self, request_id: &str, decision: Value) {
        let entry = &self.entry;
        match self
            .store
            .resolve_approval(&entry.tenant, request_id, decision)
            .await
        {
            Ok(_)
            | Err(StoreError::AlreadyResolved { .. })
            | Err(StoreError::Expired { .. })
            | Err(StoreError::NotFound) => {}
            Err(e) => {
                tracing::warn!(run_id = %entry.run_id, error = %e, "could not record how an approval ended");
            }
        }
    }

    /// Records the run's end in the store and frees its thread and concurrency slot.
    async fn finish(&mut self) {
        // Requests still pending in the store end with the run.
        match self
            .store
            .list_approvals(&self.entry.tenant, &self.entry.run_id, true)
            .await
        {
            Ok(pending) => {
                for a in pending {
                    self.end_approval(&a.request_id, json!({"outcome": "cancelled"}))
                        .await;
                }
            }
            Err(e) => {
                tracing::warn!(run_id = %self.entry.run_id, error = %e, "could not list the run's approvals");
            }
        }
        let entry = &self.entry;
        let outcome = entry.stream.result().await;
        let (state, result, error) = outcome_state(&outcome);
        let result = Some(self.meter.finish(&entry.stream, &outcome, state, result).await);
        let _ = entry.metered.set(result.clone().unwrap_or_default());
        tracing::info!(state = ?state, "run finished");
        let latency = &self.registry.metrics.latency;
        latency.observe_run(&entry.agent, state.as_str(), self.admitted.elapsed());
        // `done` goes out after this: the run's end is committed first (retried on a transient
        // failure; the whole record when its first write was lost), so a client that saw `done` never
        // reads the run `running` from the store — after eviction or a restart alike.
        let store = &self.store;
        let ended =
            with_retries(|| store.update_run_state(&entry.run_id, state, result.clone(), error.clone()))
                .await;
        let ended = match ended {
            Err(StoreError::NotFound) => {
                let whole = RunRecord {
                    state,
                    result,
                    error: error.clone(),
                    updated_at: Utc::now(),
                    ..self.record.clone()
                };
                with_retries(|| store.put_run(&whole)).await
            }
            other => other.map(|_| ()),
        };
        match ended {
            Ok(()) | Err(StoreError::Conflict { .. }) => {}
            Err(e) => {
                tracing::error!(run_id = %entry.run_id, error = %e, "could not record the run's end");
            }
        }
        self.run_ended(state, error.as_ref());
        if let Some(key) = self.busy_key.take() {
            let mut busy = self.registry.busy.lock().unwrap_or_else(|p| p.into_inner());
            if busy.get(&key) == Some(&entry.run_id) {
                busy.remove(&key);
            }
            drop(busy);
            self.registry.untrack(entry);
        }
        drop(self.slot.take());
    }

    /// Announces the run's end: `run.finished`, and `run.failed` when it failed or was interrupted.
    fn run_ended(&self, state: RunState, error: Option<&Value>) {
        use super::webhooks::{EventType, run_data};
        let entry = &self.entry;
        let data = run_data(
            &entry.run_id,
            &entry.agent,
            entry.thread_key.as_deref(),
            state.as_str(),
            error,
        );
        let registry = &self.registry;
        if matches!(state, RunState::Failed | RunState::Interrupted) {
            registry.announce(&entry.tenant, EventType::RunFailed, data.clone());
        }
        registry.announce(&entry.tenant, EventType::RunFinished, data);
    }

    /// Announces a supplemental message that will not be delivered (`message.failed`): its id and
    /// why, never its text.
    fn message_failed(&self, m: &crate::runtime::MessageUpdate) {
        let entry = &self.entry;
        let data = json!({
            "run_id": entry.run_id,
            "agent": entry.agent,
            "thread_key": entry.thread_key,
            "message_id": m.id,
            "reason": m.reason,
        });
        let event = super::webhooks::EventType::MessageFailed;
        self.registry.announce(&entry.tenant, event, data);
    }

    async fn park_approval(&self, req: &ApprovalRequest) {
        let entry = &self.entry;
        entry
            .approvals
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(req.id.clone(), req.clone());
        let approval = Approval {
            tenant: entry.tenant.clone(),
            run_id: entry.run_id.clone(),
            request_id: req.id.clone(),
            kind: req.kind.as_str().to_owned(),
            payload: serde_json::to_value(approval_view(req)).unwrap_or(Value::Null),
            state: ApprovalState::Pending,
            decision: None,
            created_at: req.created_at,
            deadline: req
                .deadline
                .unwrap_or_else(|| Utc::now() + chrono::Duration::days(1)),
        };
        if let Err(e) = self.store.create_approval(&approval).await {
            tracing::warn!(run_id = %entry.run_id, error = %e, "could not record the approval");
        }
        let data = json!({
            "run_id": entry.run_id,
            "agent": entry.agent,
            "thread_key": entry.thread_key,
            "approval": approval.payload,
        });
        let event = super::webhooks::EventType::ApprovalRequested;
        self.registry.announce(&entry.tenant, event, data);
    }
}

/// The public view of an approval request (details redacted).
pub fn approval_view(req: &ApprovalRequest) -> super::views::ApprovalView {
    let mut details = Value::Object(req.details.clone());
    crate::recorder::redact::redact(&mut details);
    super::views::ApprovalView {
        id: req.id.clone(),
        run_id: req.run_id.clone(),
        kind: req.kind.as_str().to_owned(),
        title: req.title.clone(),
        source: req.source.clone(),
        tool_call_id: req.tool_call_id.clone(),
        choices: req
            .choices
            .iter()
            .map(|c| super::views::ChoiceView {
                key: c.key.clone(),
                label: c.label.clone(),
                description: c.description.clone(),
            })
            .collect(),
        details,
        created_at: req.created_at,
        deadline: req.deadline,
        attempt: req.attempt,
        pending: req.is_pending(),
        outcome: None,
    }
}

/// How a stored approval ended (`None` while it is pending): a resolved row's decision
/// (`approve`/`deny`/`answer`), or the `outcome` the run recorded when the request ended unanswered
/// (`expired`, `cancelled`); an expired row without one expired by its deadline.
pub fn approval_outcome(a: &Approval) -> Option<&'static str> {
    let recorded = a
        .decision
        .as_ref()
        .and_then(|d| d.get("outcome"))
        .and_then(Value::as_str);
    match (a.state, recorded) {
        (ApprovalState::Pending, _) => None,
        (_, Some("cancelled")) => Some("cancelled"),
        (ApprovalState::Expired, _) | (_, Some("expired")) => Some("expired"),
        (ApprovalState::Resolved, _) => Some(
            match a
                .decision
                .as_ref()
                .and_then(|d| d.get("decision"))
                .and_then(Value::as_str)
            {
                Some("deny") => "denied",
                Some("answer") => "answered",
                _ => "approved",
            },
        ),
    }
}

/// The row value recording an `approval.resolved` outcome label of the runtime (`approved`, `denied`,
/// `answered`, `timed_out`, `withdrawn`, `cancelled`, `handler_failed`).
fn ended_decision(label: &str) -> Value {
    match label {
        "approved" => json!({"decision": "approve"}),
        "denied" => json!({"decision": "deny"}),
        "answered" => json!({"decision": "answer"}),
        "timed_out" | "withdrawn" => json!({"outcome": "expired"}),
        _ => json!({"outcome": "cancelled"}),
    }
}
