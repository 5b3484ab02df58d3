//! One invocation of an ACP agent, end to end (shared by the `acp` driver and Cursor's ACP transport):
//!
//! 1. Spawn the agent (one process per invocation) and `initialize` (protocol version 1; the client offers
//!    `fs/*` inside the workspace when configured, never `terminal/*`), then `authenticate` when configured.
//! 2. Open the session: `session/new`, or for a resume `session/resume` (preferred) or `session/load`
//!    (its replayed history is not re-emitted), or `session/fork`; then `session/set_mode` /
//!    `session/set_model` when asked.
//! 3. `session/prompt` with the prompt; `session/update`s are translated as they arrive
//!    ([`super::translate`]), `session/request_permission` goes through the run's decision policy and is
//!    answered exactly once ([`super::permission`]), `fs/*` is served ([`super::fs`]), anything else the
//!    agent asks gets "method not found" (never an unanswered request). Frames that are no JSON-RPC and
//!    updates of unknown kinds are notices, never fatal.
//! 4. When the turn ends, queued turn-end input starts the next `session/prompt` in the same process.
//! 5. Cancel (or an approval refused with abort): `session/cancel`, every open permission answered
//!    `cancelled`, up to the grace period for the agent's `cancelled` answer, then the escalating stop.
//!    A clean run closes stdin and lets the agent exit.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::FuturesUnordered;
use serde::Serialize;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::caps::AgentCaps;
use super::conn::{Conn, Msg};
use super::translate::{Translator, to_usage};
use super::{fs, permission};
use crate::driver::process::{ProcessRegistry, ProcessSpec, StdinError};
use crate::driver::{
    Ack, Boundary, Checkpoint, ClaimedMessage, DecisionOutcome, DriverEvent, ExitInfo, Failure, FailureCode,
    Notice, ProcessInfo, ProcessKind, RawStreams, Request, Response, RunIo, SessionPlan, SessionState,
    TerminalPayload, Usage, notice_kind, session::PARAM_CWD,
};
use crate::vocab::{McpServer, McpTransport};
use agent_adaptor_core::acp::rpc::{Incoming, METHOD_NOT_FOUND, RpcError};
use agent_adaptor_core::acp::wire::{
    AuthenticateParams, CancelParams, ClientCapabilities, ContentBlock, FileSystemCapabilities,
    Implementation, InitializeParams, InitializeResponse, LoadSessionParams, McpServerSpec, NameValue,
    NewSessionParams, NewSessionResponse, PROTOCOL_VERSION, PermissionOption, PromptParams, PromptResponse,
    RemoteKind, RequestPermissionParams, SetModeParams, SetModelParams, StopReason, parse_update,
};

/// The failure code of a fork the agent does not declare.
pub const FORK_UNSUPPORTED: &str = "fork_unsupported";

/// What one invocation runs and how (built by the `acp` driver or Cursor's ACP transport).
pub struct Setup<'a> {
    /// The driver type (`acp`, `cursor`): events' sources and the response's provider.
    pub driver_type: &'a str,
    /// The agent process (program, args, cwd, environment); stdin is piped by the run.
    pub spec: ProcessSpec,
    /// What the process-info event names.
    pub program: String,
    /// The capabilities the driver's descriptor was built from.
    pub caps: &'a AgentCaps,
    /// An `authenticate` method to call after `initialize`.
    pub auth_method: Option<&'a str>,
    /// A session mode to set.
    pub mode: Option<&'a str>,
    /// The configured model (a per-call model wins); set with `session/set_model`.
    pub model: Option<&'a str>,
    /// Serve `fs/*` inside the workspace.
    pub client_fs: bool,
    /// The bound on `initialize`, `authenticate` and the session calls.
    pub handshake: Duration,
    /// The stop ladder's grace period (also how long a cancelled turn may take to answer).
    pub grace: Duration,
    /// Instructions to prefix the first prompt with.
    pub instructions: Option<&'a str>,
    /// Guard keys recorded in the checkpoint and checked on resume (besides the working directory).
    pub guards: Vec<(String, String)>,
}

/// Why waiting for an answer stopped.
#[derive(Debug)]
enum Stop {
    /// The agent answered with an error.
    Rpc(RpcError),
    /// stdout closed.
    Eof,
    /// The run was cancelled (and, in a prompt, the agent did not answer in time).
    Cancelled,
    /// No answer within the bound.
    Timeout,
    /// stdin is gone.
    Write(StdinError),
}

type Decision = BoxFuture<'static, (String, DecisionOutcome)>;

struct Exec<'a> {
    setup: &'a Setup<'a>,
    req: &'a Request,
    io: &'a RunIo,
    conn: Conn,
    tr: Translator,
    live: Option<AgentCaps>,
    session_id: Option<String>,
    /// `session/load` is replaying history: its updates are counted, not emitted.
    replaying: bool,
    replayed: u64,
    in_prompt: bool,
    cancel_seen: bool,
    cancel_sent: bool,
    cancel_deadline: Option<Instant>,
    /// An approval was refused with abort: the turn is being cancelled for it.
    aborted: bool,
    /// A permission was answered with a reject option in this turn (some agents end the turn on it:
    /// codex-acp's only reject option is `cancel`).
    rejected: bool,
    decisions: FuturesUnordered<Decision>,
    /// Open permission requests by JSON-RPC id (as JSON text), with their options.
    open: HashMap<String, (Value, Vec<PermissionOption>)>,
    failure: Option<Failure>,
    usage: Option<Usage>,
    stop_reason: Option<StopReason>,
    terminal: Option<Value>,
    turns: u32,
}

/// Runs one invocation.
pub async fn run(setup: Setup<'_>, registry: &ProcessRegistry, req: &Request, io: &RunIo) -> Response {
    if let Some(refusal) = refuse_plan(&setup, req) {
        return Response {
            provider: setup.driver_type.into(),
            failure: Some(refusal),
            ..Default::default()
        };
    }
    let conn = match Conn::spawn(registry, setup.spec.clone()).await {
        Ok(c) => c,
        Err(e) => {
            let mut r = Response::failed(
                FailureCode::AgentError,
                format!("cannot start the ACP agent {}: {e}", setup.program),
            );
            r.provider = setup.driver_type.into();
            return r;
        }
    };
    let mut info = ProcessInfo {
        kind: ProcessKind::Spawn,
        text: setup.program.clone(),
        bytes: None,
        metadata: BTreeMap::new(),
        data: Default::default(),
    };
    info.metadata.insert("pid".into(), conn.child.pid().to_string());
    info.metadata.insert("transport".into(), "acp".into());
    io.events.emit(DriverEvent::ProcessInfo(info)).await;
    let mut ex = Exec {
        setup: &setup,
        req,
        io,
        conn,
        tr: Translator::new(),
        live: None,
        session_id: None,
        replaying: false,
        replayed: 0,
        in_prompt: false,
        cancel_seen: false,
        cancel_sent: false,
        cancel_deadline: None,
        aborted: false,
        rejected: false,
        decisions: FuturesUnordered::new(),
        open: HashMap::new(),
        failure: None,
        usage: None,
        stop_reason: None,
        terminal: None,
        turns: 0,
    };
    ex.go().await;
    ex.finish().await
}

/// A session plan this agent cannot honour, refused before launch: a resume the agent cannot do or
/// whose guards moved (the core then starts fresh), a fork it does not declare.
fn refuse_plan(setup: &Setup<'_>, req: &Request) -> Option<Failure> {
    match &req.session {
        SessionPlan::Fresh => None,
        SessionPlan::Resume(s) | SessionPlan::Fork(s) => {
            let fork = matches!(req.session, SessionPlan::Fork(_));
            if fork && !setup.caps.fork {
                return Some(Failure::new(
                    FailureCode::Other(FORK_UNSUPPORTED.into()),
                    "the ACP agent does not declare session/fork",
                ));
            }
            if !fork && !setup.caps.resumable() {
                return Some(Failure::new(
                    FailureCode::ResumeRejected,
                    "the ACP agent declares neither session/resume nor session/load",
                ));
            }
            guard_violation(setup, s, req).map(|why| Failure::new(FailureCode::ResumeRejected, why))
        }
    }
}

fn guard_violation(setup: &Setup<'_>, s: &SessionState, req: &Request) -> Option<String> {
    let cwd = req.cwd.to_string_lossy();
    if let Some(was) = s.data.get(PARAM_CWD)
        && *was != cwd
    {
        return Some(format!(
            "the session was created in {was}, this run works in {cwd}"
        ));
    }
    for (k, v) in &setup.guards {
        if s.data.get(k).is_some_and(|was| was != v) {
            return Some(format!("the session's {k} changed"));
        }
    }
    None
}

/// The run's MCP servers in ACP's shape; a bearer-token variable is read from `env` (the run's own
/// variables) or the service's environment and sent as an `Authorization` header.
pub fn mcp_servers(servers: &[McpServer], env: &BTreeMap<String, String>) -> Vec<McpServerSpec> {
    let pairs = |m: &BTreeMap<String, String>| {
        m.iter()
            .map(|(name, value)| NameValue {
                name: name.clone(),
                value: value.clone(),
            })
            .collect::<Vec<_>>()
    };
    let headers = |h: &BTreeMap<String, String>, bearer: &Option<String>| {
        let mut out = pairs(h);
        if let Some(var) = bearer
            && let Some(token) = env.get(var).cloned().or_else(|| std::env::var(var).ok())
        {
            out.push(NameValue {
                name: "Authorization".into(),
                value: format!("Bearer {token}"),
            });
        }
        out
    };
    servers
        .iter()
        .map(|s| match &s.transport {
            McpTransport::Stdio { command, args, env } => McpServerSpec::Stdio {
                name: s.name.clone(),
                command: command.clone(),
                args: args.clone(),
                env: pairs(env),
            },
            McpTransport::Http {
                url,
                headers: h,
                bearer_token_env,
            } => McpServerSpec::Remote {
                kind: RemoteKind::Http,
                name: s.name.clone(),
                url: url.clone(),
                headers: headers(h, bearer_token_env),
            },
            McpTransport::Sse {
                url,
                headers: h,
                bearer_token_env,
            } => McpServerSpec::Remote {
                kind: RemoteKind::Sse,
                name: s.name.clone(),
                url: url.clone(),
                headers: headers(h, bearer_token_env),
            },
        })
        .collect()
}

fn key(id: &Value) -> String {
    id.to_string()
}

impl Exec<'_> {
    async fn emit(&mut self, events: Vec<DriverEvent>) {
        for e in events {
            self.io.events.emit(e).await;
        }
    }

    async fn notice(&mut self, n: Notice) {
        self.io.events.notice(n).await;
    }

    fn fail(&mut self, code: FailureCode, message: impl Into<String>) {
        if self.failure.is_none() {
            self.failure = Some(Failure::new(code, message));
        }
    }

    fn cwd(&self) -> String {
        self.req.cwd.to_string_lossy().into_owned()
    }

    /// Sends a request and waits for its answer; `bound` limits the wait.
    async fn call(
        &mut self,
        method: &str,
        params: impl Serialize,
        bound: Option<Duration>,
    ) -> Result<Value, Stop> {
        let id = self.conn.request(method, params).await.map_err(Stop::Write)?;
        self.wait(id, bound.map(|b| Instant::now() + b)).await
    }

    /// Pumps the agent's messages until the answer to request `id` arrives.
    async fn wait(&mut self, id: u64, deadline: Option<Instant>) -> Result<Value, Stop> {
        loop {
            tokio::select! {
                biased;
                _ = self.io.cancel.cancelled(), if !self.cancel_seen => {
                    self.cancel_seen = true;
                    if !self.in_prompt {
                        return Err(Stop::Cancelled);
                    }
                    self.cancel_turn().await;
                }
                _ = sleep_until(self.cancel_deadline), if self.cancel_deadline.is_some() => {
                    return Err(Stop::Cancelled);
                }
                _ = sleep_until(deadline), if deadline.is_some() => return Err(Stop::Timeout),
                Some((rid, outcome)) = self.decisions.next(), if !self.decisions.is_empty() => {
                    self.decided(rid, outcome).await;
                }
                msg = self.conn.next() => match msg {
                    Msg::Eof => return Err(Stop::Eof),
                    Msg::Noise(why) => {
                        self.notice(Notice::new(notice_kind::PROVIDER_INVALID, "a line that is no JSON-RPC frame")
                            .with_data("detail", why)).await;
                    }
                    Msg::Rpc(Incoming::Response { id: rid, outcome }) => {
                        if rid.as_u64() == Some(id) {
                            return outcome.map_err(Stop::Rpc);
                        }
                        self.notice(Notice::new(notice_kind::PROVIDER_INVALID, "an answer to no open request")
                            .with_data("id", rid)).await;
                    }
                    Msg::Rpc(Incoming::Notification { method, params }) => self.notification(&method, params).await,
                    Msg::Rpc(Incoming::Request { id, method, params }) => self.agent_request(id, &method, params).await,
                    Msg::Rpc(Incoming::Invalid { error, .. }) => {
                        self.notice(Notice::new(notice_kind::PROVIDER_INVALID, "a malformed JSON-RPC frame")
                            .with_data("error", serde_json::to_value(&error).unwrap_or_default())).await;
                    }
                },
            }
        }
    }

    async fn notification(&mut self, method: &str, params: Value) {
        if method != "session/update" {
            self.notice(
                Notice::new(
                    notice_kind::PROVIDER_UNKNOWN,
                    format!("an unknown notification {method:?}"),
                )
                .with_data("method", method)
                .with_data("params", params),
            )
            .await;
            return;
        }
        let Value::Object(mut p) = params else {
            self.notice(Notice::new(
                notice_kind::PROVIDER_INVALID,
                "a session/update without an object",
            ))
            .await;
            return;
        };
        let session = p.get("sessionId").and_then(Value::as_str).map(str::to_owned);
        let update = p.remove("update").unwrap_or(Value::Null);
        if let (Some(ours), Some(theirs)) = (&self.session_id, &session)
            && ours != theirs
        {
            self.notice(
                Notice::new(notice_kind::PROVIDER_UNKNOWN, "an update for another session")
                    .with_data("session_id", theirs.clone())
                    .with_data("update", update),
            )
            .await;
            return;
        }
        if self.replaying {
            self.replayed += 1;
            return;
        }
        let events = self.tr.update(parse_update(&update), &update);
        self.emit(events).await;
    }

    async fn agent_request(&mut self, id: Value, method: &str, params: Value) {
        let answer = match method {
            "session/request_permission" => {
                let raw = params.clone();
                match serde_json::from_value::<RequestPermissionParams>(params) {
                    Err(e) => {
                        self.notice(
                            Notice::new(notice_kind::PROVIDER_INVALID, "a malformed permission request")
                                .with_data("params", raw),
                        )
                        .await;
                        Err(RpcError::invalid_params(e))
                    }
                    Ok(_) if self.cancel_sent => {
                        Ok(serde_json::to_value(permission::cancelled()).unwrap_or_default())
                    }
                    Ok(p) => {
                        let request = permission::decision_request(self.setup.driver_type, &p, &raw);
                        let sink = self.io.decisions.clone();
                        let k = key(&id);
                        self.open.insert(k.clone(), (id, p.options));
                        self.decisions
                            .push(Box::pin(async move { (k, sink.request(request).await) }));
                        return;
                    }
                }
            }
            "fs/read_text_file" if self.setup.client_fs => fs::read(&self.req.cwd, params),
            "fs/write_text_file" if self.setup.client_fs => fs::write(&self.req.cwd, params),
            other => {
                self.notice(
                    Notice::new(
                        notice_kind::PROVIDER_UNKNOWN,
                        format!("an agent request this client does not serve: {other:?}"),
                    )
                    .with_data("method", other)
                    .with_data("params", params),
                )
                .await;
                Err(RpcError::new(METHOD_NOT_FOUND, "Method not found").with_data(json!({ "method": other })))
            }
        };
        let _ = self.conn.respond(id, answer).await;
    }

    /// Answers a permission request the host decided (unless the turn's cancel answered it first).
    async fn decided(&mut self, rid: String, outcome: DecisionOutcome) {
        let Some((id, options)) = self.open.remove(&rid) else {
            return;
        };
        let answer = permission::answer(&options, &outcome);
        if matches!(outcome, DecisionOutcome::Denied { .. }) {
            self.rejected = true;
        }
        let value = serde_json::to_value(answer).unwrap_or_default();
        let _ = self.conn.respond(id, Ok(value)).await;
        if matches!(outcome, DecisionOutcome::Denied { interrupt: true, .. }) {
            self.aborted = true;
            self.cancel_turn().await;
        }
    }

    /// `session/cancel`, every open permission answered `cancelled` (their host requests withdrawn), and
    /// a deadline for the agent's answer.
    async fn cancel_turn(&mut self) {
        if self.cancel_sent || !self.in_prompt {
            return;
        }
        self.cancel_sent = true;
        if let Some(sid) = self.session_id.clone() {
            let _ = self
                .conn
                .notify("session/cancel", CancelParams { session_id: sid })
                .await;
        }
        self.decisions = FuturesUnordered::new();
        let cancelled = serde_json::to_value(permission::cancelled()).unwrap_or_default();
        for (_, (id, _)) in self.open.drain() {
            let _ = self.conn.respond(id, Ok(cancelled.clone())).await;
        }
        self.cancel_deadline = Some(Instant::now() + self.setup.grace.max(Duration::from_millis(500)));
    }

    /// The failure a stop means during `method`.
    fn stopped(&mut self, method: &str, stop: Stop, code: FailureCode) {
        match stop {
            Stop::Cancelled => {
                if self.aborted {
                    self.fail(
                        FailureCode::DecisionRejected,
                        "a decision was refused; the turn was stopped",
                    );
                } else {
                    self.fail(FailureCode::Cancelled, "cancelled");
                }
            }
            Stop::Eof => {
                let tail = self.conn.child.stderr().tail_lossy();
                let tail = tail.trim();
                let msg = if tail.is_empty() {
                    format!("the ACP agent exited before answering {method}")
                } else {
                    format!("the ACP agent exited before answering {method}: {tail}")
                };
                self.fail(FailureCode::AgentError, msg);
            }
            Stop::Timeout => {
                let msg = format!(
                    "the ACP agent did not answer {method} within {} s",
                    self.setup.handshake.as_secs()
                );
                self.fail(FailureCode::AgentError, msg);
            }
            Stop::Write(e) => self.fail(
                FailureCode::AgentError,
                format!("cannot write to the ACP agent: {e}"),
            ),
            Stop::Rpc(e) => {
                let mut f = Failure::new(code, format!("{method} failed: {}", e.message));
                f.details.insert("rpc_code".into(), e.code.into());
                if let Some(d) = e.data {
                    f.details.insert("rpc_data".into(), d);
                }
                if self.failure.is_none() {
                    self.failure = Some(f);
                }
            }
        }
    }

    async fn go(&mut self) {
        if !self.handshake().await || !self.open_session().await {
            return;
        }
        let mut text = match self.setup.instructions.filter(|i| !i.trim().is_empty()) {
            Some(i) => format!("{i}\n\n{}", self.req.prompt),
            None => self.req.prompt.clone(),
        };
        let mut claimed: Vec<ClaimedMessage> = Vec::new();
        loop {
            if !self.prompt(&text, claimed).await {
                return;
            }
            let Some(port) = &self.io.messages else { return };
            claimed = port.claim(Boundary::TurnEnd);
            if claimed.is_empty() {
                return;
            }
            text = claimed
                .iter()
                .map(|m| m.text.as_str())
                .collect::<Vec<_>>()
                .join("\n\n");
        }
    }

    async fn handshake(&mut self) -> bool {
        let fs = self.setup.client_fs;
        let params = InitializeParams {
            protocol_version: PROTOCOL_VERSION,
            client_capabilities: serde_json::to_value(ClientCapabilities {
                fs: FileSystemCapabilities {
                    read_text_file: fs,
                    write_text_file: fs,
                },
                terminal: false,
            })
            .unwrap_or_default(),
            client_info: Some(Implementation {
                name: "agent-adaptor".into(),
                title: "agent-adaptor".into(),
                version: env!("CARGO_PKG_VERSION").into(),
            }),
        };
        let bound = Some(self.setup.handshake);
        let init = match self.call("initialize", params, bound).await {
            Ok(v) => v,
            Err(stop) => {
                self.stopped("initialize", stop, FailureCode::AgentError);
                return false;
            }
        };
        let init: InitializeResponse = match serde_json::from_value(init) {
            Ok(i) => i,
            Err(e) => {
                self.fail(
                    FailureCode::Protocol,
                    format!("an initialize answer that does not fit ACP: {e}"),
                );
                return false;
            }
        };
        if init.protocol_version != PROTOCOL_VERSION {
            self.fail(
                FailureCode::Protocol,
                format!(
                    "the agent answered protocol version {} (this client speaks {PROTOCOL_VERSION})",
                    init.protocol_version
                ),
            );
            return false;
        }
        self.live = Some(AgentCaps::from_initialize(&init));
        if let Some(method) = self.setup.auth_method {
            let params = AuthenticateParams {
                method_id: method.to_owned(),
            };
            if let Err(stop) = self.call("authenticate", params, bound).await {
                self.stopped("authenticate", stop, FailureCode::AgentError);
                return false;
            }
        }
        true
    }

    async fn open_session(&mut self) -> bool {
        let bound = Some(self.setup.handshake);
        let cwd = self.cwd();
        let mcp = mcp_servers(&self.req.mcp, &self.req.env);
        let live = self.live.clone().unwrap_or_default();
        match self.req.session.clone() {
            SessionPlan::Fresh => {
                let params = NewSessionParams {
                    cwd,
                    mcp_servers: mcp,
                };
                match self.call("session/new", params, bound).await {
                    Ok(v) => match serde_json::from_value::<NewSessionResponse>(v) {
                        Ok(r) => self.session_id = Some(r.session_id),
                        Err(e) => {
                            self.fail(
                                FailureCode::Protocol,
                                format!("a session/new answer without a sessionId: {e}"),
                            );
                            return false;
                        }
                    },
                    Err(stop) => {
                        self.stopped("session/new", stop, FailureCode::AgentError);
                        return false;
                    }
                }
            }
            SessionPlan::Resume(s) => {
                let params = LoadSessionParams {
                    session_id: s.resume_id.clone(),
                    cwd,
                    mcp_servers: mcp,
                };
                self.session_id = Some(s.resume_id.clone());
                // session/resume when both the descriptor and this process declare it (no replay),
                // else session/load.
                let method = if live.resume && self.setup.caps.resume {
                    "session/resume"
                } else if live.load {
                    self.replaying = true;
                    "session/load"
                } else {
                    self.fail(
                        FailureCode::ResumeRejected,
                        "the agent no longer declares session/resume or session/load",
                    );
                    return false;
                };
                let r = self.call(method, params, bound).await;
                self.replaying = false;
                if let Err(stop) = r {
                    self.stopped(method, stop, FailureCode::ResumeRejected);
                    return false;
                }
                if self.replayed > 0 {
                    let n = Notice::new(
                        notice_kind::LIFECYCLE,
                        format!(
                            "session/load replayed {} earlier updates (not re-emitted)",
                            self.replayed
                        ),
                    )
                    .with_meta("code", "acp_history_replayed")
                    .with_data("updates", self.replayed);
                    self.notice(n).await;
                }
            }
            SessionPlan::Fork(s) => {
                let params = LoadSessionParams {
                    session_id: s.resume_id.clone(),
                    cwd,
                    mcp_servers: mcp,
                };
                match self.call("session/fork", params, bound).await {
                    Ok(v) => match serde_json::from_value::<NewSessionResponse>(v) {
                        Ok(r) => self.session_id = Some(r.session_id),
                        Err(e) => {
                            self.fail(
                                FailureCode::Protocol,
                                format!("a session/fork answer without a sessionId: {e}"),
                            );
                            return false;
                        }
                    },
                    Err(stop) => {
                        self.stopped("session/fork", stop, FailureCode::AgentError);
                        return false;
                    }
                }
            }
        }
        let sid = self.session_id.clone().unwrap_or_default();
        if let Some(mode) = self.setup.mode {
            let params = SetModeParams {
                session_id: sid.clone(),
                mode_id: mode.to_owned(),
            };
            if let Err(stop) = self.call("session/set_mode", params, bound).await {
                self.stopped("session/set_mode", stop, FailureCode::AgentError);
                return false;
            }
        }
        if let Some(model) = self.req.model.as_deref().or(self.setup.model) {
            let params = SetModelParams {
                session_id: sid,
                model_id: model.to_owned(),
            };
            if let Err(stop) = self.call("session/set_model", params, bound).await {
                self.stopped("session/set_model", stop, FailureCode::AgentError);
                return false;
            }
        }
        true
    }

    /// One prompt turn; true when the run may continue with another.
    async fn prompt(&mut self, text: &str, claimed: Vec<ClaimedMessage>) -> bool {
        let params = PromptParams {
            session_id: self.session_id.clone().unwrap_or_default(),
            prompt: vec![ContentBlock::text(text)],
        };
        self.turns += 1;
        self.in_prompt = true;
        self.cancel_sent = false;
        self.rejected = false;
        let sent = self.conn.request("session/prompt", params).await;
        let id = match sent {
            Ok(id) => {
                for m in claimed {
                    m.ack(Ack::Delivered {
                        mechanism: "session/prompt".into(),
                    });
                }
                id
            }
            Err(e) => {
                for m in claimed {
                    m.ack(Ack::Requeue {
                        possible_duplicate: true,
                    });
                }
                self.in_prompt = false;
                self.stopped("session/prompt", Stop::Write(e), FailureCode::AgentError);
                return false;
            }
        };
        // A cancel that arrived between turns cancels this one at once.
        if self.io.cancel.is_cancelled() && !self.cancel_seen {
            self.cancel_seen = true;
            self.cancel_turn().await;
        }
        let r = self.wait(id, None).await;
        self.in_prompt = false;
        self.open.clear();
        self.decisions = FuturesUnordered::new();
        let value = match r {
            Ok(v) => v,
            Err(stop) => {
                let tail = self.tr.close_all();
                self.emit(tail).await;
                self.stopped("session/prompt", stop, FailureCode::AgentError);
                return false;
            }
        };
        self.terminal = Some(value.clone());
        let resp: PromptResponse = match serde_json::from_value(value) {
            Ok(r) => r,
            Err(e) => {
                let tail = self.tr.close_all();
                self.emit(tail).await;
                self.fail(
                    FailureCode::Protocol,
                    format!("a session/prompt answer without a stopReason: {e}"),
                );
                return false;
            }
        };
        self.stop_reason = Some(resp.stop_reason);
        if let Some(u) = &resp.usage {
            self.usage = Usage::sum(self.usage, Some(to_usage(u)));
        }
        let error = match resp.stop_reason {
            StopReason::EndTurn | StopReason::MaxTokens => None,
            StopReason::MaxTurnRequests => {
                Some("the agent hit its limit of model requests for the turn".to_owned())
            }
            StopReason::Refusal => Some("the agent refused to continue".to_owned()),
            StopReason::Cancelled if self.aborted => {
                Some("a decision was refused; the turn was stopped".to_owned())
            }
            StopReason::Cancelled if self.cancel_seen => Some("cancelled".to_owned()),
            StopReason::Cancelled if self.rejected => {
                Some("the agent ended the turn when a permission was refused".to_owned())
            }
            StopReason::Cancelled => Some("the agent cancelled the turn".to_owned()),
        };
        let events = self
            .tr
            .end_turn(Some(resp.stop_reason), resp.usage.as_ref(), error.clone());
        self.emit(events).await;
        match (resp.stop_reason, error) {
            (_, None) => !self.cancel_seen,
            (StopReason::Cancelled, Some(msg)) => {
                let code = if self.aborted || (self.rejected && !self.cancel_seen) {
                    FailureCode::DecisionRejected
                } else if self.cancel_seen {
                    FailureCode::Cancelled
                } else {
                    FailureCode::AgentError
                };
                self.fail(code, msg);
                false
            }
            (_, Some(msg)) => {
                self.fail(FailureCode::AgentError, msg);
                false
            }
        }
    }

    async fn finish(mut self) -> Response {
        let grace = self.setup.grace;
        let clean = self.failure.is_none() && !self.cancel_seen;
        let exit = if clean {
            self.conn.finish(grace).await
        } else {
            self.conn.stop(grace).await
        };
        if self.cancel_seen && self.failure.is_none() {
            self.fail(FailureCode::Cancelled, "cancelled");
        }
        let stderr = self.conn.child.stderr().take_full().bytes.to_vec();
        let stdout = self.conn.stdout.take_raw().bytes.to_vec();
        let mut exit = Some(ExitInfo {
            code: exit.code,
            signal: exit.signal,
        });
        if clean && !exit.is_some_and(|e| e.success()) {
            // The agent did not exit by itself after stdin closed and was stopped; the run itself
            // ended cleanly, so the stop is reported, not counted as a failure.
            self.notice(
                Notice::new(
                    notice_kind::LIFECYCLE,
                    "the ACP agent did not exit after its stdin closed; it was stopped",
                )
                .with_meta("code", "acp_agent_stopped"),
            )
            .await;
            exit = None;
        }
        let live = self.live.clone().unwrap_or_default();
        let resumable = self.setup.caps.resumable() && live.resumable();
        let checkpoint = self.session_id.as_ref().filter(|_| resumable).map(|sid| {
            let mut state = SessionState {
                resume_id: sid.clone(),
                display_id: sid.clone(),
                ..Default::default()
            };
            state.data.insert(PARAM_CWD.into(), self.cwd());
            for (k, v) in &self.setup.guards {
                state.data.insert(k.clone(), v.clone());
            }
            Checkpoint {
                state,
                valid: self.failure.is_none(),
            }
        });
        let mut metadata = BTreeMap::new();
        metadata.insert("transport".into(), "acp".into());
        if let Some(sid) = &self.session_id {
            metadata.insert("session_id".into(), sid.clone());
        }
        if let Some(s) = self.stop_reason.and_then(|s| serde_json::to_value(s).ok()) {
            metadata.insert("stop_reason".into(), s.as_str().unwrap_or_default().to_owned());
        }
        if !live.name.is_empty() {
            metadata.insert("agent".into(), live.name.clone());
        }
        if !live.version.is_empty() {
            metadata.insert("agent_version".into(), live.version.clone());
        }
        let mut usage = self.usage;
        if let Some(c) = self.tr.cost_milli() {
            let mut u = usage.unwrap_or_default();
            u.estimated_cost_milli = c;
            usage = Some(u);
        }
        let text = self.tr.text().to_owned();
        let model = self
            .req
            .model
            .clone()
            .or_else(|| self.setup.model.map(str::to_owned))
            .unwrap_or_default();
        Response {
            text,
            summary: String::new(),
            model,
            provider: self.setup.driver_type.into(),
            usage,
            metadata,
            raw: RawStreams {
                stdout,
                stderr,
                terminal: self.terminal.take().map(|json| TerminalPayload {
                    event: "session/prompt".into(),
                    json,
                }),
            },
            transcript: std::mem::take(&mut self.tr).into_transcript(),
            checkpoint,
            failure: self.failure.take(),
            exit,
            structured: None,
        }
    }
}

async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
