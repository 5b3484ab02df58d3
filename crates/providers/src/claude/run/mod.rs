//! One invocation of the Claude driver, end to end.
//!
//! * **Bidirectional transport** (`bidi.rs`): one process; `initialize` and its answer before the first
//!   user frame; `can_use_tool` answered through the decision sink; supplemental messages written as user
//!   frames with a client `uuid` the moment they are claimed (Soon → `priority:"next"`, folded into the
//!   running turn at its next model request; Interrupt → the `interrupt` control request first) and
//!   acknowledged when the CLI reports their delivery (`system/status requesting` listing the uuid, or
//!   `command_lifecycle started`); AfterTurn input is claimed at the `result` and written as the next user
//!   frame. The invocation ends at a `result` with nothing in flight and nothing claimable.
//! * **One-shot transport** (`oneshot.rs`): one `-p` process per provider turn; queued input continues the
//!   session with `--resume` in a new process.
//!
//! * **Persistent process per thread** (`persist.rs`): an eligible thread run on the bidirectional
//!   transport reuses the thread's kept process (only the next user frame is written) and gives it back
//!   after a clean end.
//!
//! Every other process is stopped and reaped before `run` returns, whatever happened.

mod bidi;
mod oneshot;
mod persist;
mod proc;
mod turn;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use std::collections::BTreeMap;

use crate::driver::process::ProcessRegistry;
use crate::driver::{
    Ack, Boundary, ClaimedMessage, ExitInfo, Failure, FailureCode, MessageFailure, Notice, RawStreams,
    Request, Response, RunIo, SessionPlan, TerminalPayload, notice_kind,
};

use super::argv::{self, Invocation, Transport};
use super::config::Config;
use super::env::SKILLS_LAYOUT;
use super::translate::{self, Translator};
use super::wire::InitializeInfo;
use super::{DRIVER_TYPE, env};
use crate::skills::SkillOverlay;
use crate::stream_json::run as shared;
pub use persist::Pool;
use proc::{Launch, Proc};
use turn::{Turn, TurnEnd};

pub use crate::stream_json::run::PARAM_CONFIG_DIR;
pub(super) use crate::stream_json::run::settle_claims;

/// Messages written to the CLI and not yet reported delivered, by client uuid.
type Inflight = Vec<(String, &'static str, Vec<ClaimedMessage>)>;

/// Everything one invocation accumulates.
struct Exec<'a> {
    config: &'a Config,
    registry: &'a ProcessRegistry,
    pool: &'a Pool,
    req: &'a Request,
    io: &'a RunIo,
    transport: Transport,
    config_dir: PathBuf,
    instructions: Option<String>,
    schema: Option<String>,
    mcp_file: Option<PathBuf>,
    /// The run's skill overlay (`--add-dir`), removed when the run ends.
    skills: Option<SkillOverlay>,
    allowed_tools: Vec<String>,
    tr: Translator,
    raw: RawStreams,
    exit: Option<ExitInfo>,
    failure: Option<Failure>,
    structured: Option<Value>,
    processes: u32,
    inflight: Inflight,
    init: Option<InitializeInfo>,
    /// The process was kept for the thread's next run (so it has no exit yet).
    kept: bool,
}

/// Runs one invocation.
pub async fn run(
    config: &Config,
    registry: &ProcessRegistry,
    pool: &Pool,
    req: Request,
    io: RunIo,
) -> Response {
    let transport = argv::select_transport(&req.policy);
    let (config_dir, managed) = env::request_dir(config, &req);
    if let Some(reason) = guard_violation(&req, &config_dir) {
        return Response::failed(FailureCode::ResumeRejected, reason);
    }
    // The SDK's own files (the MCP file) never go into the user's native dir.
    let own_dir = if managed {
        config_dir.clone()
    } else {
        env::scratch_dir()
    };
    if let Err(e) = std::fs::create_dir_all(&own_dir) {
        return Response::failed(
            FailureCode::AgentError,
            format!("cannot create the Claude config dir {}: {e}", own_dir.display()),
        );
    }
    let instructions =
        shared::instructions(config.common.instructions.as_deref(), req.instructions.as_deref());
    let mcp_file = match shared::write_mcp_config(&req, &own_dir, |r| env::mcp_config(&r.mcp)) {
        Ok(f) => f,
        Err(e) => {
            return Response::failed(
                FailureCode::AgentError,
                format!("cannot write the MCP configuration: {e}"),
            );
        }
    };
    let skills = match SkillOverlay::create("claude", &req.run_id, Path::new(SKILLS_LAYOUT), &req.skills) {
        Ok(s) => s,
        Err(e) => {
            return Response::failed(
                FailureCode::AgentError,
                format!("cannot lay out the run's skills: {e}"),
            );
        }
    };
    let mut inv = Exec {
        config,
        registry,
        pool,
        req: &req,
        io: &io,
        transport,
        config_dir,
        instructions,
        schema: req.output_schema.as_ref().map(|s| s.schema.to_string()),
        mcp_file,
        skills,
        allowed_tools: shared::preapproved(&req),
        tr: Translator::new(),
        raw: RawStreams::default(),
        exit: None,
        failure: None,
        structured: None,
        processes: 0,
        inflight: Vec::new(),
        init: None,
        kept: false,
    };
    io.events
        .notice(
            Notice::new(
                notice_kind::INVOCATION,
                format!("claude {} transport", transport.as_str()),
            )
            .with_meta("transport", transport.as_str()),
        )
        .await;
    match transport {
        Transport::Bidi => inv.bidi().await,
        Transport::OneShot => inv.oneshot().await,
    }
    inv.settle_inflight();
    if let Some(f) = &inv.mcp_file {
        let _ = std::fs::remove_file(f);
    }
    inv.response()
}

/// A resume whose guards do not match this request is refused before anything starts.
fn guard_violation(req: &Request, config_dir: &std::path::Path) -> Option<String> {
    let state = match &req.session {
        SessionPlan::Fresh => return None,
        SessionPlan::Resume(s) | SessionPlan::Fork(s) => s,
    };
    if let Some(dir) = state.data.get(PARAM_CONFIG_DIR)
        && *dir != config_dir.to_string_lossy()
    {
        return Some(format!(
            "Claude config dir changed ({dir} -> {})",
            config_dir.display()
        ));
    }
    None
}

impl Exec<'_> {
    fn grace(&self) -> Duration {
        self.config.common.grace()
    }

    fn fail(&mut self, code: FailureCode, message: impl Into<String>) {
        if self.failure.is_none() {
            self.failure = Some(Failure::new(code, message));
        }
    }

    /// The child's explicit environment.
    fn vars(&self) -> BTreeMap<String, String> {
        let mode = argv::permission_mode(self.config, &self.req.policy);
        env::vars(self.config, &self.req.env, &self.config_dir, mode, env::is_root())
    }

    /// Starts a process; `kept` says whether it is kept for the thread after a clean run.
    async fn launch(
        &mut self,
        resume: Option<(&str, bool)>,
        prompt: Option<&str>,
        kept: bool,
    ) -> Option<Proc> {
        let inv = Invocation {
            resume: resume.map(|(id, _)| id),
            fork: resume.is_some_and(|(_, fork)| fork),
            model: self.req.model.as_deref(),
            schema: self.schema.clone(),
            instructions: self.instructions.as_deref(),
            mcp_config: self.mcp_file.as_deref(),
            allowed_tools: &self.allowed_tools,
            skills: self.skills.as_ref().map(SkillOverlay::root),
            prompt,
        };
        let args = argv::build(self.config, &self.req.policy, self.transport, &inv);
        let program = self.config.program();
        let launch = Launch {
            program: &program,
            args,
            cwd: &self.req.cwd,
            vars: self.vars(),
            inherit: proc::base_or_claude,
            stdin: self.transport == Transport::Bidi,
            label: format!("claude {} {}", self.transport.as_str(), self.req.run_id),
        };
        match Proc::spawn(self.registry, launch).await {
            Ok(p) => {
                self.processes += 1;
                let mut info = shared::spawned(&program, self.transport.as_str(), p.child.pid());
                if let crate::driver::DriverEvent::ProcessInfo(i) = &mut info {
                    i.metadata.insert("persistent".into(), kept.to_string());
                }
                self.io.events.emit(info).await;
                Some(p)
            }
            Err(e) => {
                self.fail(FailureCode::AgentError, format!("cannot start Claude: {e}"));
                None
            }
        }
    }

    /// Collects a finished process's output and exit.
    fn collect(&mut self, proc: &mut Proc, exit: crate::driver::process::ExitInfo) {
        self.take_output(proc);
        self.set_exit(exit);
    }

    /// Moves the process's output so far into this run's raw streams.
    fn take_output(&mut self, proc: &mut Proc) {
        self.raw.stdout.extend_from_slice(&proc.stdout.take_raw().bytes);
        self.raw
            .stderr
            .extend_from_slice(&proc.child.stderr().take_full().bytes);
    }

    fn set_exit(&mut self, exit: crate::driver::process::ExitInfo) {
        self.exit = Some(ExitInfo {
            code: exit.code,
            signal: exit.signal,
        });
    }

    /// Closes a turn that ended without `result` (so lifecycles and the turn count stay right) and records
    /// the terminal line.
    async fn close_turn(&mut self, turn: &Turn) {
        if let Some(json) = &turn.terminal {
            self.raw.terminal = Some(TerminalPayload {
                event: "result".into(),
                json: json.clone(),
            });
        }
        let why = match &turn.end {
            TurnEnd::Result(_) => return,
            TurnEnd::Closed => "Claude ended its output without a result",
            TurnEnd::Cancelled => "cancelled",
            TurnEnd::McpRequired(why) => why,
        };
        for ev in self.tr.abort_turn(why) {
            self.io.events.emit(ev).await;
        }
    }

    /// Records the failure a turn end means; returns true when the invocation may continue. A turn the
    /// driver interrupted for a supplemental message is expected to end aborted and is not a failure.
    fn verdict(&mut self, turn: &Turn) -> bool {
        let (code, message) = match &turn.end {
            TurnEnd::Result(r) => {
                if let Some(s) = &r.structured_output {
                    self.structured = Some(s.clone());
                }
                let aborted = r
                    .terminal_reason
                    .as_deref()
                    .is_some_and(|t| t.starts_with("aborted"));
                if turn.interrupted && aborted {
                    return true;
                }
                match translate::result_failure(r) {
                    Some(mut f) => {
                        if turn.denied && aborted {
                            f.code = FailureCode::DecisionRejected;
                        }
                        if self.failure.is_none() {
                            self.failure = Some(f);
                        }
                        return false;
                    }
                    None => return true,
                }
            }
            TurnEnd::Closed => (
                FailureCode::Protocol,
                "Claude ended its output without a result".to_owned(),
            ),
            TurnEnd::Cancelled => (FailureCode::Cancelled, "cancelled".to_owned()),
            TurnEnd::McpRequired(why) => (FailureCode::AgentError, why.clone()),
        };
        self.fail(code, message);
        false
    }

    /// Claims queued input at `boundary`: the prompt for the next turn and the claims to settle.
    fn claim(&self, boundary: Boundary) -> Option<(String, Vec<ClaimedMessage>)> {
        shared::claim(self.io, boundary)
    }

    fn session_plan(&self) -> Option<(&str, bool)> {
        shared::session_plan(self.req)
    }

    /// Settles every message still in flight when the invocation ends: cancelled runs cancel them, any
    /// other end fails them (the CLI never reported them delivered).
    fn settle_inflight(&mut self) {
        let failure = if self.io.cancel.is_cancelled() {
            MessageFailure::Cancelled
        } else {
            MessageFailure::RunFailed
        };
        for (_, _, claims) in self.inflight.drain(..) {
            for c in claims {
                c.ack(Ack::Failed(failure));
            }
        }
    }

    /// A fork must produce a new session: the same id as the parent means the CLI did not fork.
    fn check_fork(&mut self) {
        if let (SessionPlan::Fork(parent), Some(child)) = (&self.req.session, self.tr.session_id())
            && parent.resume_id == child
        {
            let msg = format!("Claude did not fork session {child}");
            self.fail(FailureCode::ResumeRejected, msg);
        }
    }

    fn response(mut self) -> Response {
        self.check_fork();
        let last = self.tr.last_result().cloned();
        let text = last.as_ref().map(translate::final_text).unwrap_or_default();
        let success = self.failure.is_none()
            && last.as_ref().is_some_and(|r| !r.is_error)
            && (self.kept || self.exit.is_some_and(|e| e.success()));
        let checkpoint = last
            .as_ref()
            .filter(|r| !r.session_id.is_empty())
            .map(|r| shared::checkpoint(&r.session_id, &self.req.cwd, &self.config_dir, success));
        let mut metadata = std::collections::BTreeMap::new();
        metadata.insert("transport".into(), self.transport.as_str().into());
        metadata.insert("processes".into(), self.processes.to_string());
        metadata.insert("process_kept".into(), self.kept.to_string());
        if let Some(sid) = self.tr.session_id() {
            metadata.insert("session_id".into(), sid.to_owned());
        }
        if let Some(v) = self.init.as_ref().and_then(|i| i.claude_code_version.clone()) {
            metadata.insert("cli_version".into(), v);
        }
        if let Some(r) = &last {
            if let Some(t) = &r.terminal_reason {
                metadata.insert("terminal_reason".into(), t.clone());
            }
            metadata.insert("num_turns".into(), r.num_turns.to_string());
        }
        let model = self
            .tr
            .model()
            .map(str::to_owned)
            .or_else(|| self.req.model.clone())
            .or_else(|| self.config.model.clone())
            .unwrap_or_default();
        Response {
            text,
            summary: String::new(),
            model,
            provider: DRIVER_TYPE.into(),
            usage: self.tr.usage(),
            metadata,
            transcript: self.tr.take_transcript(),
            raw: std::mem::take(&mut self.raw),
            checkpoint,
            failure: self.failure.take(),
            exit: self.exit,
            structured: self.structured.take(),
        }
    }
}
