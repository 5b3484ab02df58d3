//! The JSON-RPC conversation of one invocation: handshake, thread, turns, server requests, mid-turn
//! input ([`super::input`]) and the turn-end continuation.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::driver::{
    Ack, Boundary, ClaimedMessage, DecisionOutcome, FailureCode, MessageFailure, Notice, SandboxLevel,
    SessionPlan, TerminalPayload, notice_kind,
};

use super::super::classify::{is_resume_rejection, turn_failure};
use super::super::decision;
use super::super::wire::client::{
    ApprovalPolicy, ClientInfo, ClientRequest, CollaborationMode, CollaborationSettings,
    InitializeCapabilities, InitializeParams, SandboxMode, ThreadForkParams, ThreadResumeParams,
    ThreadStartParams, TurnInterruptParams, TurnStartParams, initialized,
};
use super::super::wire::items::{TurnStatus, UserInput};
use super::super::wire::results::ThreadResponse;
use super::super::wire::rpc::RpcError;
use super::super::wire::server_request::ServerRequest;
use super::super::wire::{RequestId, RpcMessage};
use super::Exec;
use super::conn::{Conn, Incoming};
use super::input::{joined, settle_all};

/// Why a request got no result.
#[derive(Debug)]
pub(super) enum CallError {
    /// A JSON-RPC error answer.
    Rpc(RpcError),
    /// stdin broke, stdout ended, the answer was malformed or late.
    Broken(String),
    /// The run was cancelled.
    Cancelled,
}

/// The client name sent in `initialize` (Codex sends it as the `originator` header).
pub const CLIENT_NAME: &str = "agent-adaptor";

fn sandbox(level: SandboxLevel) -> Option<SandboxMode> {
    match level {
        SandboxLevel::Inherit => None,
        SandboxLevel::ReadOnly => Some(SandboxMode::ReadOnly),
        SandboxLevel::WorkspaceWrite => Some(SandboxMode::WorkspaceWrite),
        SandboxLevel::Unrestricted => Some(SandboxMode::DangerFullAccess),
    }
}

impl Exec<'_> {
    pub(super) fn instructions(&self) -> Option<String> {
        super::instructions(self.config, self.req)
    }

    /// Sends `req` and reads (translating everything else in wire order) until its answer.
    pub(super) async fn call(
        &mut self,
        conn: &mut Conn,
        req: ClientRequest,
        timeout: Duration,
    ) -> Result<Value, CallError> {
        let method = req.method().to_owned();
        let id = conn
            .send(&req)
            .await
            .map_err(|e| CallError::Broken(format!("cannot write {method}: {e}")))?;
        let deadline = Instant::now() + timeout;
        loop {
            let inc = tokio::select! {
                biased;
                _ = self.io.cancel.cancelled() => return Err(CallError::Cancelled),
                r = tokio::time::timeout_at(deadline.into(), conn.next()) => match r {
                    Ok(i) => i,
                    Err(_) => return Err(CallError::Broken(format!("no answer to {method} within {timeout:?}"))),
                },
            };
            match inc {
                Incoming::Msg(RpcMessage::Response { id: rid, result }, _) if rid == id => {
                    return serde_json::from_str(result.get())
                        .map_err(|e| CallError::Broken(format!("malformed {method} answer: {e}")));
                }
                Incoming::Msg(RpcMessage::Error { id: Some(rid), error }, _) if rid == id => {
                    return Err(CallError::Rpc(error));
                }
                Incoming::Eof => {
                    return Err(CallError::Broken(format!(
                        "Codex exited before answering {method}"
                    )));
                }
                other => self.pump(conn, other).await,
            }
        }
    }

    /// Handles one item that is not an awaited answer.
    async fn pump(&mut self, conn: &mut Conn, inc: Incoming) {
        match inc {
            Incoming::Msg(RpcMessage::Notification { notification, .. }, value) => {
                let had = self.tr.terminal().is_some();
                let events = self.tr.handle(notification);
                if !had && self.tr.terminal().is_some() {
                    self.raw.terminal = Some(TerminalPayload {
                        event: "turn/completed".into(),
                        json: value,
                    });
                }
                self.emit_all(events).await;
            }
            Incoming::Msg(RpcMessage::Request { id, request }, _) => self.decide(conn, id, request).await,
            Incoming::Msg(RpcMessage::Unknown(v), _) => {
                self.io
                    .events
                    .notice(Notice::new(notice_kind::PROVIDER_UNKNOWN, "unknown frame").with_data("frame", v))
                    .await;
            }
            Incoming::Msg(RpcMessage::Error { id: None, error }, _) => {
                self.io
                    .events
                    .notice(Notice::new(notice_kind::PROVIDER_INVALID, error.message))
                    .await;
            }
            // Answers to requests nobody waits for (`turn/interrupt`).
            Incoming::Msg(RpcMessage::Response { .. } | RpcMessage::Error { .. }, _) => {}
            Incoming::Invalid(why) => {
                self.io
                    .events
                    .notice(Notice::new(notice_kind::PROVIDER_INVALID, why))
                    .await;
            }
            Incoming::Eof => {}
        }
    }

    /// Answers a server request through the decision policy.
    ///
    /// While the decision is pending, `Soon` and `AfterTurn` input waits (it is handled once the
    /// request is answered); `Interrupt` input withdraws the request instead
    /// ([`Exec::withdraw_for_interrupt`]).
    async fn decide(&mut self, conn: &mut Conn, id: RequestId, request: ServerRequest) {
        let Some(mut ask) = decision::ask(&request) else {
            let _ = conn.send_line(decision::refusal(&id, &request)).await;
            self.io
                .events
                .notice(
                    Notice::new(
                        notice_kind::PROVIDER_UNKNOWN,
                        format!("refused {}", request.method()),
                    )
                    .with_meta("method", request.method()),
                )
                .await;
            return;
        };
        if let ServerRequest::McpElicitation(p) = &request
            && let Some(tool) = p.tool_approval()
        {
            // The elicitation names no item: it gates the `mcpToolCall` item Codex just started.
            let name = format!("{}/{tool}", p.server_name);
            ask.tool_call_id = self.tr.open_tool_named(&name).unwrap_or_default().to_owned();
        }
        let mut port = self.io.messages.clone();
        let decision = self.io.decisions.request(ask);
        tokio::pin!(decision);
        let outcome = loop {
            let changed = async {
                match port.as_mut() {
                    Some(p) => p.changed().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                o = &mut decision => break o,
                _ = self.io.cancel.cancelled() => return,
                _ = tokio::time::sleep_until(self.deadline.into()) => return,
                () = changed => {
                    if self.withdraw_for_interrupt(conn).await {
                        // Dropping the decision expires it for the host; Codex withdraws its
                        // request itself when the turn is interrupted (`serverRequest/resolved`).
                        return;
                    }
                }
            }
        };
        let abort = matches!(outcome, DecisionOutcome::Denied { interrupt: true, .. });
        if abort {
            self.rejected_abort = true;
            if decision::abort_interrupts(&request) {
                // Codex has no answer for this request that stops the turn: interrupt it, then
                // resolve the request (Codex ignores the late answer).
                self.interrupt(conn).await;
            }
        }
        let _ = conn.send_line(decision::answer(&id, &request, &outcome)).await;
    }

    /// Handshake, thread, turns.
    pub(super) async fn drive(&mut self, conn: &mut Conn) {
        let hs = self.config.handshake_timeout();
        let init = ClientRequest::Initialize(InitializeParams {
            client_info: ClientInfo {
                name: CLIENT_NAME.into(),
                title: None,
                version: env!("CARGO_PKG_VERSION").into(),
            },
            // Plan collaboration mode is experimental: without the opt-in `turn/start` refuses it.
            capabilities: self.config.plan_mode.then_some(InitializeCapabilities {
                experimental_api: true,
                opt_out_notification_methods: None,
            }),
        });
        let reused = conn.initialized;
        if !conn.initialized {
            if let Err(e) = self.call(conn, init, hs).await {
                return self.call_failed("initialize", e);
            }
            if let Err(e) = conn.send_line(initialized()).await {
                return self.fail(FailureCode::AgentError, format!("cannot write initialized: {e}"));
            }
            conn.initialized = true;
        }
        // This run's skills (or none: a kept process forgets the previous run's).
        if let Some(req) = crate::codex::skills::extra_roots(self.skill_root.as_deref(), reused) {
            match self.call(conn, req, hs).await {
                Ok(_) => {}
                Err(e) if self.skill_root.is_some() => return self.call_failed("skills/extraRoots/set", e),
                Err(e) => tracing::debug!("clearing the skill roots failed: {e:?}"),
            }
        }
        // A kept process that already holds the thread being resumed just takes the next turn.
        let held = match (&self.req.session, &conn.thread) {
            (SessionPlan::Resume(s), Some((id, model))) if s.resume_id == *id => {
                Some((id.clone(), model.clone()))
            }
            _ => None,
        };
        let (thread_id, model) = match held {
            Some(h) => h,
            None => {
                let Some(thread_req) = self.thread_request() else {
                    return;
                };
                let method = thread_req.method().to_owned();
                let thread = match self.call(conn, thread_req, hs).await {
                    Ok(v) => v,
                    Err(CallError::Rpc(e)) if is_resume_rejection(&e.message) => {
                        return self.fail(FailureCode::ResumeRejected, e.message);
                    }
                    Err(e) => return self.call_failed(&method, e),
                };
                let thread: ThreadResponse = match serde_json::from_value::<ThreadResponse>(thread) {
                    Ok(t) if !t.thread.id.is_empty() => t,
                    Ok(_) => {
                        return self.fail(
                            FailureCode::Protocol,
                            format!("{method} returned an empty thread id"),
                        );
                    }
                    Err(e) => {
                        return self.fail(FailureCode::Protocol, format!("malformed {method} answer: {e}"));
                    }
                };
                conn.thread = Some((thread.thread.id.clone(), thread.model.clone()));
                (thread.thread.id, thread.model)
            }
        };
        self.model = model;
        let events = self.tr.begin_thread(&thread_id, self.model.as_deref());
        self.emit_all(events).await;
        let mut prompt = self.req.prompt.clone();
        let mut claims: Vec<ClaimedMessage> = Vec::new();
        let mut mechanism = "turn_start";
        loop {
            self.steer_refused = false;
            if !self.start_turn(conn, &prompt).await {
                settle_all(claims, &Ack::Failed(MessageFailure::RunFailed));
                return;
            }
            settle_all(
                std::mem::take(&mut claims),
                &Ack::Delivered {
                    mechanism: mechanism.into(),
                },
            );
            let end = self.await_terminal(conn).await;
            let requeue = Ack::Requeue {
                possible_duplicate: true,
            };
            match end {
                Wait::Stopped => {
                    self.release_steers(&Ack::Failed(MessageFailure::RunFailed));
                    return;
                }
                Wait::Interrupted(next) => {
                    self.release_steers(&requeue);
                    let interrupted = self
                        .tr
                        .terminal()
                        .is_some_and(|t| t.status == TurnStatus::Interrupted);
                    // The turn may have ended by itself before the interrupt reached it.
                    if !interrupted && !self.verdict() {
                        settle_all(next, &Ack::Failed(MessageFailure::RunFailed));
                        return;
                    }
                    prompt = joined(&next);
                    claims = next;
                    mechanism = "interrupt";
                    continue;
                }
                Wait::Ended => self.release_steers(&requeue),
            }
            if !self.verdict() {
                return;
            }
            match self.claim(Boundary::TurnEnd) {
                Some((p, c)) => {
                    prompt = p;
                    claims = c;
                    mechanism = "turn_start";
                }
                None => return,
            }
        }
    }

    fn thread_request(&mut self) -> Option<ClientRequest> {
        let cwd = Some(self.req.cwd.to_string_lossy().into_owned());
        let model = self.req.model.clone().or_else(|| self.config.model.clone());
        let approval = Some(ApprovalPolicy::OnRequest);
        let sb = sandbox(self.req.policy.sandbox);
        Some(match &self.req.session {
            SessionPlan::Fresh => ClientRequest::ThreadStart(ThreadStartParams {
                cwd,
                model,
                approval_policy: approval,
                sandbox: sb,
                developer_instructions: self.instructions(),
                ..Default::default()
            }),
            SessionPlan::Resume(s) => ClientRequest::ThreadResume(ThreadResumeParams {
                thread_id: s.resume_id.clone(),
                cwd,
                model,
                approval_policy: approval,
                sandbox: sb,
                developer_instructions: self.instructions(),
                exclude_turns: Some(true),
            }),
            SessionPlan::Fork(s) => ClientRequest::ThreadFork(ThreadForkParams {
                thread_id: s.resume_id.clone(),
                cwd,
                model,
                approval_policy: approval,
                sandbox: sb,
                ephemeral: None,
                exclude_turns: Some(true),
            }),
        })
    }

    fn call_failed(&mut self, method: &str, e: CallError) {
        match e {
            CallError::Rpc(r) => self.fail(
                FailureCode::AgentError,
                format!("{method} failed: {} (code {})", r.message, r.code),
            ),
            CallError::Broken(m) => self.fail(FailureCode::AgentError, m),
            CallError::Cancelled => {
                self.cancelled = true;
                self.fail(FailureCode::Cancelled, "cancelled");
            }
        }
    }

    /// `collaborationMode: plan` when configured; the mode needs the model (the thread's, else the
    /// requested one) and keeps Codex's built-in plan instructions.
    fn plan_mode(&self, effort: Option<String>) -> Option<CollaborationMode> {
        if !self.config.plan_mode {
            return None;
        }
        let model = self
            .model
            .clone()
            .or_else(|| self.req.model.clone())
            .or_else(|| self.config.model.clone())
            .unwrap_or_default();
        Some(CollaborationMode {
            mode: "plan".into(),
            settings: CollaborationSettings {
                model,
                reasoning_effort: effort,
                developer_instructions: None,
            },
        })
    }

    /// `turn/start`; false when the run cannot go on.
    async fn start_turn(&mut self, conn: &mut Conn, prompt: &str) -> bool {
        let tid = self.tr.thread_id().unwrap_or_default().to_owned();
        let effort = self.config.reasoning_effort.map(|e| e.as_str().to_owned());
        let params = TurnStartParams {
            thread_id: tid,
            input: vec![UserInput::text(prompt)],
            effort: effort.clone(),
            output_schema: self.req.output_schema.as_ref().map(|s| s.schema.clone()),
            collaboration_mode: self.plan_mode(effort),
            ..Default::default()
        };
        let hs = self.config.handshake_timeout();
        match self.call(conn, ClientRequest::TurnStart(params), hs).await {
            Ok(v) => match v["turn"]["id"].as_str() {
                Some(id) if !id.is_empty() => {
                    self.turns += 1;
                    let events = self.tr.begin_turn(id);
                    self.emit_all(events).await;
                    true
                }
                _ => {
                    self.fail(FailureCode::Protocol, "turn/start returned no turn id");
                    false
                }
            },
            Err(e) => {
                self.call_failed("turn/start", e);
                false
            }
        }
    }

    /// Reads until the current turn's `turn/completed`, handing queued input to the running turn
    /// as it is admitted.
    async fn await_terminal(&mut self, conn: &mut Conn) -> Wait {
        let mut port = self.io.messages.clone();
        let mut check = port.is_some();
        let mut next: Option<Vec<ClaimedMessage>> = None;
        let stop = |next: Option<Vec<ClaimedMessage>>, why: MessageFailure| {
            settle_all(next.unwrap_or_default(), &Ack::Failed(why));
            Wait::Stopped
        };
        while self.tr.terminal().is_none() {
            if check {
                check = false;
                if next.is_none() {
                    next = self.mid_turn_input(conn).await;
                }
                if next.is_none() {
                    next = self.interrupted_for.take();
                }
                if self.tr.terminal().is_some() {
                    break;
                }
            }
            let changed = async {
                match port.as_mut() {
                    Some(p) => p.changed().await,
                    None => std::future::pending().await,
                }
            };
            let inc = tokio::select! {
                biased;
                _ = self.io.cancel.cancelled() => {
                    self.cancelled = true;
                    self.interrupt(conn).await;
                    self.fail(FailureCode::Cancelled, "cancelled");
                    return stop(next, MessageFailure::Cancelled);
                }
                () = changed => {
                    check = true;
                    continue;
                }
                r = tokio::time::timeout_at(self.deadline.into(), conn.next()) => match r {
                    Ok(i) => i,
                    Err(_) => {
                        self.interrupt(conn).await;
                        self.fail(FailureCode::Network, "Codex did not finish the turn within the wall-clock limit");
                        return stop(next, MessageFailure::Timeout);
                    }
                },
            };
            if matches!(inc, Incoming::Eof) {
                let tail = conn.child.stderr().tail_lossy();
                self.fail(
                    FailureCode::AgentError,
                    format!("codex app-server exited before turn/completed: {}", tail.trim()),
                );
                return stop(next, MessageFailure::RunFailed);
            }
            self.pump(conn, inc).await;
            self.ack_steers();
            if next.is_none() {
                next = self.interrupted_for.take();
            }
            if self.io.cancel.is_cancelled() && self.tr.terminal().is_none() {
                self.cancelled = true;
                self.interrupt(conn).await;
                self.fail(FailureCode::Cancelled, "cancelled");
                return stop(next, MessageFailure::Cancelled);
            }
        }
        self.ack_steers();
        match next {
            Some(claims) => Wait::Interrupted(claims),
            None => Wait::Ended,
        }
    }

    /// Sends `turn/interrupt` without waiting for the answer.
    pub(super) async fn interrupt(&mut self, conn: &mut Conn) {
        if let (Some(thread), Some(turn)) = (self.tr.thread_id(), self.tr.turn_id()) {
            let req = ClientRequest::TurnInterrupt(TurnInterruptParams {
                thread_id: thread.to_owned(),
                turn_id: turn.to_owned(),
            });
            let _ = conn.send(&req).await;
        }
    }

    /// Records the failure the terminal means; true when the run may continue.
    fn verdict(&mut self) -> bool {
        let Some(turn) = self.tr.terminal() else {
            return false;
        };
        match turn.status {
            TurnStatus::Completed => true,
            TurnStatus::Interrupted => {
                let (code, msg) = if self.rejected_abort {
                    (
                        FailureCode::DecisionRejected,
                        "a decision was refused; the turn was stopped",
                    )
                } else {
                    (FailureCode::AgentError, "the turn was interrupted")
                };
                self.fail(code, msg);
                false
            }
            _ => {
                let err = turn.error.clone().or_else(|| self.tr.last_error().cloned());
                let f = match err {
                    Some(e) => turn_failure(&e),
                    None => crate::driver::Failure::new(FailureCode::AgentError, "the turn failed"),
                };
                if self.failure.is_none() {
                    self.failure = Some(f);
                }
                false
            }
        }
    }

    /// Claims queued input at `boundary`: the prompt for the next turn and the claims to settle.
    fn claim(&self, boundary: Boundary) -> Option<(String, Vec<ClaimedMessage>)> {
        let port = self.io.messages.as_ref()?;
        let claims = port.claim(boundary);
        if claims.is_empty() {
            return None;
        }
        Some((joined(&claims), claims))
    }
}

/// How waiting for a turn's terminal ended.
enum Wait {
    /// `turn/completed` arrived.
    Ended,
    /// `turn/completed` arrived after the driver interrupted the turn for this input.
    Interrupted(Vec<ClaimedMessage>),
    /// Cancel, the wall-clock limit or a broken stream: the run stops.
    Stopped,
}
