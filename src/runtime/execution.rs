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
use super::error::{Error, FailureReason, RunError};
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
    MessageCaps, MessageFailure, OutputSchema, RawStreams, Request, Response, RunIo, SessionPlan, Usage,
};

/// How long a driver may take to return after cancellation before it is abandoned.
const DRIVER_STOP_GRACE: Duration = Duration::from_secs(10);

/// What a thread's preparation decided.
pub(crate) struct Prepared {
    /// Fresh, resume or fork.
    pub session: SessionPlan,
    /// Recovery context prepended to the prompt of a fresh session.
    pub prefix: String,
    /// The starting prompt's id was already delivered: complete with zero turns.
    pub duplicate: bool,
}

/// What a thread plugs into an execution.
#[async_trait::async_trait]
pub(crate) trait ExecutionHooks: Send + Sync {
    /// Takes ownership (leases), resolves the record and decides the session plan. An error ends
    /// the execution before the driver is entered (a plain thread error, not a run failure).
    async fn prepare(
        &self,
        broker: &Broker,
        verdict: &Verdict,
        cancel: &CancellationToken,
    ) -> Result<Prepared, Error>;

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
    ) -> Result<(), String>;
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

#[derive(Default)]
struct Aggregate {
    text: String,
    summary: String,
    model: String,
    provider: String,
    usage: Option<Usage>,
    metadata: std::collections::BTreeMap<String, String>,
    raw: RawStreams,
    transcript: Vec<crate::driver::TranscriptItem>,
    structured: Option<serde_json::Value>,
    checkpoint: Option<Checkpoint>,
}

impl Aggregate {
    fn absorb(&mut self, r: &Response) {
        self.text.clone_from(&r.text);
        if !r.summary.is_empty() {
            self.summary.clone_from(&r.summary);
        }
        if !r.model.is_empty() {
            self.model.clone_from(&r.model);
        }
        if !r.provider.is_empty() {
            self.provider.clone_from(&r.provider);
        }
        self.usage = Usage::sum(self.usage, r.usage);
        self.metadata
            .extend(r.metadata.iter().map(|(k, v)| (k.clone(), v.clone())));
        self.raw.append(&r.raw);
        self.transcript.extend(r.transcript.iter().cloned());
        if r.structured.is_some() {
            self.structured.clone_from(&r.structured);
        }
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
            continuation: self.caps.continue_mode != ContinueMode::None
                || self.caps.boundaries.contains(&Boundary::TurnEnd),
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

        let prepared = match &self.hooks {
            None => Ok(Prepared {
                session: SessionPlan::Fresh,
                prefix: String::new(),
                duplicate: false,
            }),
            Some(h) => h.prepare(&self.broker, &self.verdict, &self.cancel).await,
        };
        let prepared = match prepared {
            Ok(p) => p,
            Err(e) => {
                // Refused before driver entry: a plain error, no run verdict, nothing started.
                if let Some(h) = &self.hooks {
                    h.release(&self.broker).await;
                }
                self.queue.close(MessageFailure::RunFailed);
                watcher.abort();
                if let Some(t) = timer {
                    t.abort();
                }
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
                return;
            }
        };
        // The workspace lease: before driver entry; a failure fails the run without entering it.
        let mut lease = None;
        if !prepared.duplicate {
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
        let preamble = services.as_ref().map(RunServices::preamble).unwrap_or_default();
        let mut agg = Aggregate::default();
        let mut entered = false;
        if ready {
            entered = true;
            let mut session = prepared.session.clone();
            let mut prompt = format!("{}{preamble}{}", prepared.prefix, self.prompt);
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
                // A resume rejection may fall back to one fresh session.
                if let Some(f) = &resp.failure
                    && f.code == FailureCode::ResumeRejected
                    && !fresh_retry_used
                    && !self.cancel.is_cancelled()
                    && let Some(hooks) = &self.hooks
                {
                    fresh_retry_used = true;
                    agg.raw.append(&resp.raw);
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
                    && self.caps.continue_mode == ContinueMode::Resume
                    && self.queue.turns() < self.queue.max_turns()
                    && let Some(cp) = agg.checkpoint.clone()
                {
                    let claims = self.queue.port().claim(Boundary::TurnEnd);
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
            let value = match (mode, &agg.structured) {
                (OutputMode::Native, Some(v)) => Ok(v.clone()),
                _ => extract_json(&agg.text),
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
        let mut transcript = agg.transcript;
        transcript.extend(self.queue.delivered_transcript());
        let mut result = RunResult {
            turns: self.queue.turns(),
            run_id: self.run_id.clone(),
            model: agg.model,
            provider: agg.provider,
            text: agg.text,
            summary: agg.summary,
            usage: agg.usage,
            metadata: agg.metadata,
            raw: agg.raw,
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
                self.verdict
                    .confirm(FailureReason::InfrastructureError, e, JsonMap::new());
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
        let result = Arc::new(result);
        let outcome: RunOutcome = match self.verdict.get() {
            None => Ok(result.clone()),
            Some(c) => Err(Error::Run(Arc::new(RunError {
                reason: c.reason,
                message: c.message,
                details: c.details,
                result: result.clone(),
                causes: self.verdict.causes(),
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
