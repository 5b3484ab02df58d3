//! One execution, end to end: `RunStarted`, the workspace lease, the runtime services (ensure, attach,
//! their event sources folded into the stream), driver invocations (with turn-end continuation through
//! resume when the driver asks the core to drive it) in the lease's directory with the services'
//! environment, MCP servers and preamble, the sources flushed and the attachments' results collected,
//! structured-output validation, the single verdict, message outcomes, thread finalization, the
//! services released and detached (bounded, errors joined), the workspace release, `RunFinished`,
//! and `Done` last.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::broker::Broker;
use super::decide::Decider;
use super::error::{Error, FailureReason, RunError, ThreadErrorKind};
use super::event::{Done, Payload, RunFinished, RunStarted};
use super::messages::MessageQueue;
use super::options::Resolved;
use super::pipeline::Pipeline;
use super::result::RunResult;
use super::services::{Published, RunServices, ServiceRequest};
use super::stream::RunOutcome;
use super::structured::{OutputMode, OutputSpec, extract_json};
use super::verdict::{Confirmed, Verdict};
use crate::driver::{
    Ack, Boundary, Checkpoint, ContinueMode, DecisionSink, Driver, EventSink, FailureCode, JsonMap,
    MessageCaps, MessageFailure, Notice, OutputSchema, Request, Response, RunIo, SessionPlan, notice_kind,
};

/// How long a driver may take to return after cancellation before it is abandoned.
const DRIVER_STOP_GRACE: Duration = Duration::from_secs(10);
/// The bound of the one-time CLI version probe behind a MinVersion.
const VERSION_PROBE_BOUND: Duration = Duration::from_secs(10);

/// What a thread's plan decided.
pub(crate) struct Prepared {
    /// Fresh, resume or fork.
    pub session: SessionPlan,
    /// Recovery context prepended to the prompt of a fresh session.
    pub prefix: String,
}

/// Why a thread's finalize turned the outcome into an infrastructure failure.
#[derive(Debug)]
pub(crate) struct FinalizeError {
    pub message: String,
    /// The thread sentinel it is (lease lost, checkpoint missing, fork target taken).
    pub kind: Option<ThreadErrorKind>,
}

impl FinalizeError {
    pub(crate) fn thread(kind: ThreadErrorKind, message: impl Into<String>) -> Self {
        FinalizeError {
            message: message.into(),
            kind: Some(kind),
        }
    }
}

/// What a thread plugs into an execution.
#[async_trait::async_trait]
pub(crate) trait ExecutionHooks: Send + Sync {
    /// Takes ownership (leases), resolves the records and checks the starting prompt's receipt:
    /// `true` when it was already delivered (the execution completes with zero turns). An error ends
    /// the execution before anything is leased (a plain thread error, not a run failure).
    async fn prepare(&self, verdict: &Verdict, cancel: &CancellationToken) -> Result<bool, Error>;

    /// Decides the session plan once the runtime services published (`published` fingerprints what
    /// they publish). An error refuses the execution before driver entry (a plain thread error).
    async fn plan(&self, broker: &Broker, published: &str) -> Result<Prepared, Error>;

    /// Always called last: stops lease renewal and releases ownership.
    async fn release(&self, broker: &Broker);

    /// The driver rejected the resume: a fresh plan and prompt prefix to retry once with, or
    /// `None` to fail (ResumeOnly).
    async fn on_resume_rejected(&self, broker: &Broker, reason: &str) -> Option<(SessionPlan, String)>;

    /// Called after the result is formed and before `Done`: persist on a clean success. An error
    /// turns the outcome into an infrastructure failure carrying the full result.
    async fn finalize(
        &self,
        broker: &Broker,
        success: bool,
        checkpoint: Option<&Checkpoint>,
        result: &RunResult,
        delivered: &[String],
    ) -> Result<(), FinalizeError>;
}

/// Everything an execution needs.
pub(crate) struct Execution {
    pub run_id: String,
    pub thread_key: Option<String>,
    pub driver: Arc<dyn Driver>,
    pub resolved: Resolved,
    pub prompt: String,
    pub cwd: std::path::PathBuf,
    pub output: Option<(OutputSpec, OutputMode)>,
    pub broker: Arc<Broker>,
    pub queue: Arc<MessageQueue>,
    pub caps: MessageCaps,
    pub cancel: CancellationToken,
    pub verdict: Verdict,
    pub retry_supported: bool,
    pub system_prompt_append: bool,
    pub hooks: Option<Arc<dyn ExecutionHooks>>,
    pub outcome_tx: watch::Sender<Option<RunOutcome>>,
    /// The Agent's hosted tools: their MCP declaration (appended to every invocation's set, whatever
    /// the call's MCP options) and the environment carrying their token.
    pub hosted: Option<(
        crate::vocab::McpServer,
        std::collections::BTreeMap<String, String>,
    )>,
    /// The skills materialized for this execution; their directory is removed when it ends.
    pub skills: Option<super::skills::RunSkills>,
    /// The profile dir the driver runs with, when the Agent has a profile, and the execution's claim
    /// on it (released when the execution ends).
    pub profile: Option<(crate::driver::ProfileTarget, super::profile::ProfileLease)>,
    /// How the workspace is leased (from `cwd`, the base directory) and released.
    pub workspace: super::workspace::WorkspacePlan,
    /// The runtime services: the manager's desired specs and the run service providers.
    pub services: super::services::ServicePlan,
    /// The Agent's once-probed CLI version (for a MinVersion in the message capability).
    pub cli_version: Arc<tokio::sync::OnceCell<Option<String>>>,
}

fn reason_for(code: &FailureCode) -> FailureReason {
    match code {
        FailureCode::DecisionRejected => FailureReason::ApprovalDenied,
        FailureCode::DecisionTimeout => FailureReason::ApprovalTimeout,
        FailureCode::Cancelled => FailureReason::Cancelled,
        FailureCode::Other(s) => FailureReason::Other(s.clone()),
        _ => FailureReason::AgentError,
    }
}

/// The execution's aggregate over its driver invocations (the fold rule of [`RunResult::fold`],
/// shared with `compose_results`) and the last valid checkpoint.
#[derive(Default)]
struct Aggregate {
    acc: RunResult,
    checkpoint: Option<Checkpoint>,
}

impl Aggregate {
    fn absorb(&mut self, r: &Response) {
        let mut part = RunResult {
            // Each invocation is at least one provider turn: its text is the latest answer.
            turns: 1,
            text: r.text.clone(),
            summary: r.summary.clone(),
            model: r.model.clone(),
            provider: r.provider.clone(),
            usage: r.usage,
            metadata: r.metadata.clone(),
            ..Default::default()
        };
        part.raw = r.raw.clone();
        part.transcript.clone_from(&r.transcript);
        part.structured.clone_from(&r.structured);
        self.acc.fold(&part);
        if let Some(c) = &r.checkpoint
            && c.valid
        {
            self.checkpoint = Some(c.clone());
        }
    }
}

impl Execution {
    fn request(
        &self,
        prompt: String,
        session: SessionPlan,
        cwd: &std::path::Path,
        published: &Published,
    ) -> Request {
        let mut prompt = prompt;
        let mut instructions = None;
        if let Some(i) = self
            .resolved
            .instructions
            .as_ref()
            .filter(|i| !i.trim().is_empty())
        {
            if self.system_prompt_append {
                instructions = Some(i.clone());
            } else {
                prompt = format!("{i}\n\n{prompt}");
            }
        }
        let mut output_schema = None;
        if let Some((spec, mode)) = &self.output {
            match mode {
                OutputMode::Native => {
                    output_schema = Some(OutputSchema {
                        schema: spec.schema.clone(),
                        name: spec.name.clone(),
                    })
                }
                OutputMode::Prompt => prompt.push_str(&spec.prompt_suffix()),
            }
        }
        Request {
            run_id: self.run_id.clone(),
            thread_key: self.thread_key.clone(),
            prompt,
            instructions,
            model: self.resolved.model.clone(),
            cwd: cwd.to_owned(),
            env: published
                .env
                .iter()
                .chain(self.hosted.iter().flat_map(|h| &h.1))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            policy: self.resolved.policy.clone(),
            output_schema,
            mcp: self
                .resolved
                .mcp
                .iter()
                .chain(&published.mcp)
                .chain(self.hosted.as_ref().map(|h| &h.0))
                .cloned()
                .collect(),
            skills: self.skills.as_ref().map(|s| s.skills.clone()).unwrap_or_default(),
            profile: self.profile.as_ref().map(|(t, _)| t.clone()),
            session,
            spawn: self.resolved.spawn,
            timeout: self.resolved.timeout,
            identity: self.resolved.identity.clone(),
            metadata: self.resolved.metadata.clone(),
        }
    }

    /// Runs one driver invocation, abandoning a driver that ignores cancellation.
    async fn invoke(&self, req: Request, io: RunIo) -> Response {
        let run = self.driver.run(req, io);
        tokio::pin!(run);
        tokio::select! {
            r = &mut run => r,
            _ = async {
                self.cancel.cancelled().await;
                tokio::time::sleep(DRIVER_STOP_GRACE).await;
            } => {
                self.verdict.add_cause("the driver did not return after cancellation and was abandoned");
                Response::failed(FailureCode::Cancelled, "driver abandoned after cancellation")
            }
        }
    }

    fn judge(&self, r: &Response) {
        let mut candidates = Vec::new();
        if let Some(f) = &r.failure {
            candidates.push(Confirmed {
                thread: (f.code == FailureCode::ResumeRejected).then_some(ThreadErrorKind::ResumeRejected),
                reason: reason_for(&f.code),
                message: f.message.clone(),
                details: {
                    let mut d = f.details.clone();
                    d.insert("code".into(), f.code.as_str().into());
                    if let Some(ra) = f.retry_after {
                        d.insert("retry_after_ms".into(), (ra.as_millis() as u64).into());
                    }
                    d
                },
            });
        }
        if let Some(exit) = r.exit
            && !exit.success()
        {
            candidates.push(Confirmed {
                thread: None,
                reason: FailureReason::AgentError,
                message: match (exit.code, exit.signal) {
                    (_, Some(sig)) => format!("provider process killed by signal {sig}"),
                    (Some(code), _) => format!("provider process exited with status {code}"),
                    _ => "provider process ended abnormally".into(),
                },
                details: JsonMap::new(),
            });
        }
        if !candidates.is_empty() {
            self.verdict.confirm_best(candidates);
        }
    }

    /// The CLI version, probed once per Agent through the driver's environment probe (bounded);
    /// `None` when unknown.
    async fn cli_version(&self) -> Option<String> {
        let probe = self.cli_version.get_or_init(|| async {
            match tokio::time::timeout(VERSION_PROBE_BOUND, self.driver.environment()).await {
                Ok(Ok(report)) => report.version,
                _ => None,
            }
        });
        tokio::select! {
            v = probe => v.clone(),
            _ = self.cancel.cancelled() => None,
        }
    }

    /// The message capability of this execution: the driver's resolution for its first request,
    /// with in-run delivery trimmed (one notice) below a known MinVersion, kept with a warning
    /// notice when the version is unknown.
    async fn resolve_caps(&self, request: &Request) -> MessageCaps {
        let caps = self.driver.resolve_messages(request);
        let Some(min) = caps.min_version.clone().filter(|_| caps.delivers_in_run()) else {
            return caps;
        };
        match self.cli_version().await {
            Some(v) if crate::driver::inspect::version_older(&v, &min) => {
                let resumable = self.driver.descriptor().sessions.resume;
                let trimmed = caps.without_in_run(resumable);
                self.broker.publish_critical(
                    Payload::Notice(
                        Notice::new(
                            notice_kind::LIFECYCLE,
                            format!(
                                "the CLI version {v} is older than {min}: supplemental input is delivered \
                                 at turn ends through a checkpoint resume"
                            ),
                        )
                        .with_meta("code", "messages_below_min_version")
                        .with_data("version", v.as_str())
                        .with_data("min_version", min.as_str()),
                    ),
                    None,
                );
                trimmed
            }
            Some(_) => caps,
            None => {
                self.broker.publish_critical(
                    Payload::Notice(
                        Notice::new(
                            notice_kind::LIFECYCLE,
                            format!(
                                "the CLI version is unknown: keeping the declared message support \
                                 (verified from {min})"
                            ),
                        )
                        .with_data("warning", "cli_version_unknown")
                        .with_data("min_version", min.as_str()),
                    ),
                    None,
                );
                caps
            }
        }
    }

    /// Ends a refused execution: `RunFinished` (failed) and `Done` with the plain error `e`.
    fn refuse(&mut self, thread_id: String, e: Error) {
        let finished = RunFinished {
            run_id: self.run_id.clone(),
            thread_id,
            usage: None,
            failed: true,
            reason: String::new(),
            message: e.to_string(),
        };
        let outcome: RunOutcome = Err(e);
        // The profile claim ends before anyone can see the outcome (a next send may resync).
        self.profile = None;
        self.outcome_tx.send_replace(Some(outcome.clone()));
        self.broker.finish(
            vec![Payload::RunFinished(finished), Payload::Done(Done { outcome })],
            false,
        );
    }

    /// Runs the execution and publishes the terminal sequence.
    pub(crate) async fn run(mut self) {
        let thread_id = self.thread_key.clone().unwrap_or_else(|| self.run_id.clone());
        self.broker.publish_critical(
            Payload::RunStarted(RunStarted {
                run_id: self.run_id.clone(),
                thread_id: thread_id.clone(),
            }),
            None,
        );
        self.broker.set_turn(1);
        // Any cancellation that no one attributed (Agent close) counts as a cancel.
        let watcher = {
            let cancel = self.cancel.clone();
            let verdict = self.verdict.clone();
            let broker = self.broker.clone();
            tokio::spawn(async move {
                cancel.cancelled().await;
                verdict.confirm(FailureReason::Cancelled, "cancelled", JsonMap::new());
                broker.cancel();
            })
        };
        let timer = self.resolved.timeout.map(|t| {
            let cancel = self.cancel.clone();
            let verdict = self.verdict.clone();
            tokio::spawn(async move {
                tokio::time::sleep(t).await;
                verdict.confirm(
                    FailureReason::DeadlineExceeded,
                    format!("execution deadline of {t:?} exceeded"),
                    JsonMap::new(),
                );
                cancel.cancel();
            })
        });

        let pipeline = Arc::new(Pipeline {
            broker: self.broker.clone(),
            queue: self.queue.clone(),
            run_id: self.run_id.clone(),
            continuation: std::sync::atomic::AtomicBool::new(
                self.caps.continue_mode != ContinueMode::None
                    || self.caps.boundaries.contains(&Boundary::TurnEnd),
            ),
            turns_in_invocation: Default::default(),
        });
        let decider = Arc::new(Decider {
            policy: self.resolved.policy.approvals,
            retry_supported: self.retry_supported,
            handler: self.resolved.approval_handler.clone(),
            broker: self.broker.clone(),
            verdict: self.verdict.clone(),
            run_id: self.run_id.clone(),
            cancel: self.cancel.clone(),
        });
        let io = RunIo {
            events: EventSink::new(pipeline.clone()),
            messages: (!self.resolved.policy.messages.disabled).then(|| self.queue.port()),
            decisions: DecisionSink::new(decider),
            cancel: self.cancel.clone(),
        };

        let duplicate = match &self.hooks {
            None => Ok(false),
            Some(h) => h.prepare(&self.verdict, &self.cancel).await,
        };
        let duplicate = match duplicate {
            Ok(d) => d,
            Err(e) => {
                // Refused before anything was leased: a plain error, no run verdict, nothing started.
                if let Some(h) = &self.hooks {
                    h.release(&self.broker).await;
                }
                self.queue.close(MessageFailure::RunFailed);
                watcher.abort();
                if let Some(t) = timer {
                    t.abort();
                }
                self.refuse(thread_id, e);
                return;
            }
        };
        // The workspace lease: before driver entry; a failure fails the run without entering it.
        let mut lease = None;
        if !duplicate {
            match self
                .workspace
                .lease(
                    self.cwd.clone(),
                    &self.run_id,
                    self.thread_key.as_deref(),
                    &self.resolved.metadata,
                )
                .await
            {
                Ok(l) => lease = Some(l),
                Err(e) => {
                    let mut details = JsonMap::new();
                    details.insert("code".into(), "workspace_unavailable".into());
                    self.verdict.confirm(
                        FailureReason::InfrastructureError,
                        format!("workspace lease failed: {e}"),
                        details,
                    );
                }
            }
        }
        let cwd = lease.as_ref().map_or_else(|| self.cwd.clone(), |l| l.cwd.clone());
        // Services: ensured and attached in the lease, before driver entry; a failure fails the run
        // without entering it (what was started is still cleaned up below).
        let mut services: Option<RunServices> = None;
        let mut published = Published::default();
        let mut ready = lease.is_some();
        if let Some(l) = &lease
            && !self.services.is_empty()
        {
            let req = ServiceRequest {
                run_id: self.run_id.clone(),
                driver_type: self.driver.descriptor().driver_type,
                identity: self.resolved.identity.clone(),
                workspace: l.clone(),
                desired: self.resolved.services.clone(),
                metadata: self.resolved.metadata.clone(),
            };
            let (live, started) = self.services.start(req, &self.broker, &self.cancel).await;
            let outcome = started.and_then(|()| {
                live.publish(
                    &self.driver.descriptor(),
                    &self.resolved.mcp,
                    self.hosted.as_ref(),
                )
            });
            match outcome {
                Ok(p) => published = p,
                Err(e) => {
                    ready = false;
                    // A cancellation is the watcher's verdict, not a service failure.
                    if !self.cancel.is_cancelled() {
                        let mut details = JsonMap::new();
                        details.insert("code".into(), e.code.into());
                        self.verdict
                            .confirm(FailureReason::InfrastructureError, e.message, details);
                    }
                }
            }
            services = Some(live);
        }
        // The thread's session plan, now that the services' publication is known.
        let mut refusal: Option<Error> = None;
        let mut prepared = Prepared {
            session: SessionPlan::Fresh,
            prefix: String::new(),
        };
        if ready && let Some(h) = &self.hooks {
            match h.plan(&self.broker, &published.fingerprint()).await {
                Ok(p) => prepared = p,
                Err(e) => {
                    ready = false;
                    refusal = Some(e);
                }
            }
        }
        let preamble = services.as_ref().map(RunServices::preamble).unwrap_or_default();
        let mut agg = Aggregate::default();
        let mut entered = false;
        if ready {
            entered = true;
            let mut session = prepared.session.clone();
            let mut prompt = format!("{}{preamble}{}", prepared.prefix, self.prompt);
            // The driver's message capability for this execution, resolved at launch.
            let caps = self
                .resolve_caps(&self.request(prompt.clone(), session.clone(), &cwd, &published))
                .await;
            pipeline.continuation.store(
                caps.continue_mode != ContinueMode::None || caps.boundaries.contains(&Boundary::TurnEnd),
                Ordering::SeqCst,
            );
            self.queue.set_caps(caps.clone());
            let mut fresh_retry_used = false;
            let mut pending_claims: Vec<crate::driver::ClaimedMessage> = Vec::new();
            loop {
                pipeline.turns_in_invocation.store(0, Ordering::SeqCst);
                let resp = self
                    .invoke(
                        self.request(prompt.clone(), session.clone(), &cwd, &published),
                        io.clone(),
                    )
                    .await;
                let rejected = resp
                    .failure
                    .as_ref()
                    .filter(|f| f.code == FailureCode::ResumeRejected && !self.cancel.is_cancelled());
                // A resume rejected while continuing with queued input: the starting prompt was
                // delivered already (it is never sent again) and the claimed input was not (it fails).
                if let Some(f) = rejected
                    && !pending_claims.is_empty()
                {
                    agg.acc.raw.append(&resp.raw);
                    for claim in pending_claims.drain(..) {
                        claim.ack(Ack::Failed(MessageFailure::ProviderRejected));
                    }
                    self.broker.publish_critical(
                        Payload::Notice(
                            Notice::new(
                                notice_kind::LIFECYCLE,
                                format!(
                                    "the provider rejected resuming the session to continue with queued \
                                     input ({}); the input was not delivered",
                                    f.message
                                ),
                            )
                            .with_meta("code", "continuation_resume_rejected"),
                        ),
                        None,
                    );
                    break;
                }
                // A resume rejection of the first invocation may fall back to one fresh session.
                if let Some(f) = rejected
                    && !fresh_retry_used
                    && let Some(hooks) = &self.hooks
                {
                    fresh_retry_used = true;
                    agg.acc.raw.append(&resp.raw);
                    if let Some((plan, prefix)) = hooks.on_resume_rejected(&self.broker, &f.message).await {
                        session = plan;
                        prompt = format!("{prefix}{preamble}{}", self.prompt);
                        continue;
                    }
                }
                agg.absorb(&resp);
                self.judge(&resp);
                let ok = self.verdict.get().is_none() && !self.cancel.is_cancelled();
                for claim in pending_claims.drain(..) {
                    claim.ack(if ok {
                        Ack::Delivered {
                            mechanism: "resume".into(),
                        }
                    } else {
                        Ack::Failed(MessageFailure::RunFailed)
                    });
                }
                if ok && pipeline.turns_in_invocation.load(Ordering::SeqCst) == 0 {
                    // The driver did not report turns: one successful invocation is one turn.
                    pipeline.turn_end(crate::driver::TurnReport {
                        text: resp.text.clone(),
                        usage: resp.usage,
                        error: None,
                    });
                }
                // Turn-end continuation through resume, driven by the core.
                if ok
                    && caps.continue_mode == ContinueMode::Resume
                    && self.queue.turns() < self.queue.max_turns()
                    && let Some(cp) = agg.checkpoint.clone()
                {
                    let claims = self.queue.claim_for_continuation();
                    if !claims.is_empty() {
                        prompt = claims
                            .iter()
                            .map(|c| c.text.as_str())
                            .collect::<Vec<_>>()
                            .join("\n\n");
                        session = SessionPlan::Resume(cp.state);
                        pending_claims = claims;
                        continue;
                    }
                }
                break;
            }
        }

        // Service event sources flush and close; attachment results are collected (before detach).
        let mut service_errors = Vec::new();
        let mut subagents = Vec::new();
        if let Some(live) = &mut services {
            service_errors.extend(live.flush_sources().await);
            subagents = live.collect_results();
        }

        // Structured output.
        let mut structured = None;
        let mut structured_error = None;
        if entered
            && self.verdict.get().is_none()
            && let Some((spec, mode)) = &self.output
        {
            let value = match (mode, &agg.acc.structured) {
                (OutputMode::Native, Some(v)) => Ok(v.clone()),
                _ => extract_json(&agg.acc.text),
            };
            match value.and_then(|v| spec.validate(&v).map(|_| v)) {
                Ok(v) => structured = Some(v),
                Err(e) if spec.return_invalid => structured_error = Some(e),
                Err(e) => {
                    self.verdict.confirm(
                        FailureReason::PolicyViolation,
                        format!("structured output does not match the schema: {e}"),
                        JsonMap::new(),
                    );
                    structured_error = Some(e);
                }
            }
        }

        let cancelled = self.cancel.is_cancelled();
        // Leftovers fail: cancelled, or undelivered when the execution ended (the queue reports
        // limit_exceeded itself when the turn limit was reached).
        self.queue.close(if cancelled {
            MessageFailure::Cancelled
        } else {
            MessageFailure::RunFailed
        });
        for v in self.queue.violations() {
            self.verdict.add_cause(format!("driver protocol violation: {v}"));
        }
        let acc = std::mem::take(&mut agg.acc);
        let mut transcript = acc.transcript;
        transcript.extend(self.queue.delivered_transcript());
        let mut result = RunResult {
            turns: self.queue.turns(),
            run_id: self.run_id.clone(),
            model: acc.model,
            provider: acc.provider,
            text: acc.text,
            summary: acc.summary,
            usage: acc.usage,
            metadata: acc.metadata,
            raw: acc.raw,
            transcript,
            services: Vec::new(),
            structured,
            structured_error,
            messages: self.queue.outcomes(),
            subagents,
        };
        if !entered {
            result.turns = 0;
            result.text.clear();
        }

        if let Some(hooks) = &self.hooks {
            let success = self.verdict.get().is_none() && !cancelled;
            if let Err(e) = hooks
                .finalize(
                    &self.broker,
                    success,
                    agg.checkpoint.as_ref(),
                    &result,
                    &self.queue.delivered_ids(),
                )
                .await
            {
                match e.kind {
                    Some(kind) => self.verdict.confirm_thread(
                        FailureReason::InfrastructureError,
                        kind,
                        e.message,
                        JsonMap::new(),
                    ),
                    None => {
                        self.verdict
                            .confirm(FailureReason::InfrastructureError, e.message, JsonMap::new())
                    }
                };
            }
            hooks.release(&self.broker).await;
        }
        // Services are released (manager) and detached (providers) before the workspace they may use.
        if let Some(live) = services {
            let (reports, errors) = live.cleanup().await;
            result.services = reports;
            service_errors.extend(errors);
        }
        if !service_errors.is_empty() {
            let mut details = JsonMap::new();
            details.insert("code".into(), "service_cleanup_failed".into());
            self.verdict.confirm(
                FailureReason::InfrastructureError,
                format!("service cleanup failed: {}", service_errors.join("; ")),
                details,
            );
        }
        if let Some(lease) = lease
            && let Err(e) = self.workspace.release(lease).await
        {
            let mut details = JsonMap::new();
            details.insert("code".into(), "workspace_release_failed".into());
            self.verdict.confirm(
                FailureReason::InfrastructureError,
                format!("workspace release failed: {e}"),
                details,
            );
        }

        watcher.abort();
        if let Some(t) = timer {
            t.abort();
        }
        if let Some(e) = refusal {
            // The thread refused the plan after the services were ensured: they and the workspace
            // are cleaned up above; the outcome is the plain thread error.
            self.refuse(thread_id, e);
            return;
        }
        let result = Arc::new(result);
        let outcome: RunOutcome = match self.verdict.get() {
            None => Ok(result.clone()),
            Some(c) => Err(Error::Run(Arc::new(RunError {
                reason: c.reason,
                message: c.message,
                details: c.details,
                result: result.clone(),
                causes: self.verdict.causes(),
                thread: c.thread,
            }))),
        };
        let finished = RunFinished {
            run_id: self.run_id.clone(),
            thread_id,
            usage: result.usage,
            failed: outcome.is_err(),
            reason: outcome
                .as_ref()
                .err()
                .and_then(Error::reason)
                .map(|r| r.to_string())
                .unwrap_or_default(),
            message: outcome
                .as_ref()
                .err()
                .and_then(|e| e.as_run().map(|r| r.message.clone()))
                .unwrap_or_default(),
        };
        // The profile claim ends before anyone can see the outcome (a next send may resync).
        self.profile = None;
        self.outcome_tx.send_replace(Some(outcome.clone()));
        self.broker.finish(
            vec![Payload::RunFinished(finished), Payload::Done(Done { outcome })],
            cancelled,
        );
    }
}
