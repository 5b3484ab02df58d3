//! One invocation of the CodeBuddy driver, end to end.
//!
//! * **Control transport**: one process; `initialize` and its answer before the first user frame; one user
//!   frame per provider turn, written only when no turn is running (a frame written mid-turn would start a
//!   concurrent, history-less turn). Queued input is claimed at each turn end (and, for interrupt-timed
//!   input, after the interrupted turn ended) and written as the next user frame. A turn CodeBuddy leaves
//!   without `result` after an interrupt poisons the process: it is stopped and a new one resumes the
//!   session before the input is written.
//! * **Headless transport**: one `--print` process per provider turn; queued input continues the session
//!   with `--resume` in a new process.
//! * **Persistent process per thread** (`persist.rs`): an eligible thread run on the control transport
//!   reuses the thread's kept process (only the next user frame is written) and gives it back after a
//!   clean end.
//!
//! Every other process is stopped and reaped before `run` returns, whatever happened.

mod control;
mod headless;
mod persist;
mod proc;
mod redact;
mod turn;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::driver::process::ProcessRegistry;
use crate::driver::{
    Boundary, ClaimedMessage, ExitInfo, Failure, FailureCode, Notice, RawStreams, Request, Response, RunIo,
    SessionPlan, TerminalPayload, notice_kind, session::PARAM_CWD,
};

use super::argv::{self, Invocation, Transport};
use super::config::CodeBuddyConfig;
use super::translate::{self, Translator};
use super::{DRIVER_TYPE, env};
use crate::skills::SkillOverlay;
use crate::stream_json::run as shared;
pub use persist::Pool;
use proc::{Launch, Proc};
use turn::{Stall, Turn, TurnEnd};

pub use crate::stream_json::run::PARAM_CONFIG_DIR;
pub(super) use crate::stream_json::run::settle_claims;

/// Everything one invocation accumulates.
struct Exec<'a> {
    config: &'a CodeBuddyConfig,
    registry: &'a ProcessRegistry,
    pool: &'a Pool,
    req: &'a Request,
    io: &'a RunIo,
    transport: Transport,
    config_dir: PathBuf,
    instructions: Option<String>,
    schema: Option<String>,
    mcp_file: Option<PathBuf>,
    /// The run's skill overlay (`CODEBUDDY_SESSION_SKILL_DIRS`), removed when the run ends.
    skills: Option<SkillOverlay>,
    tr: Translator,
    raw: RawStreams,
    exit: Option<ExitInfo>,
    failure: Option<Failure>,
    structured: Option<Value>,
    processes: u32,
    /// The process was kept for the thread's next run (so it has no exit yet).
    kept: bool,
}

/// Runs one invocation.
pub async fn run(
    config: &CodeBuddyConfig,
    registry: &ProcessRegistry,
    pool: &Pool,
    req: Request,
    io: RunIo,
) -> Response {
    let transport = argv::select_transport(&req.policy);
    let config_dir = env::config_dir(config, &req.identity.profile);
    if let Some(reason) = guard_violation(&req, &config_dir) {
        return Response::failed(FailureCode::ResumeRejected, reason);
    }
    if let Err(e) = std::fs::create_dir_all(&config_dir) {
        return Response::failed(
            FailureCode::AgentError,
            format!(
                "cannot create the CodeBuddy config dir {}: {e}",
                config_dir.display()
            ),
        );
    }
    let instructions =
        shared::instructions(config.common.instructions.as_deref(), req.instructions.as_deref());
    let mcp_file = match shared::write_mcp_config(&req, &config_dir, |r| env::mcp_config(&r.mcp)) {
        Ok(f) => f,
        Err(e) => {
            return Response::failed(
                FailureCode::AgentError,
                format!("cannot write the MCP configuration: {e}"),
            );
        }
    };
    let skills = match SkillOverlay::create(
        "codebuddy",
        &req.run_id,
        Path::new(env::SKILLS_LAYOUT),
        &req.skills,
    ) {
        Ok(s) => s,
        Err(e) => {
            if let Some(f) = &mcp_file {
                let _ = std::fs::remove_file(f);
            }
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
        tr: Translator::new(),
        raw: RawStreams::default(),
        exit: None,
        failure: None,
        structured: None,
        processes: 0,
        kept: false,
    };
    io.events
        .notice(
            Notice::new(
                notice_kind::INVOCATION,
                format!("codebuddy {} transport", transport.as_str()),
            )
            .with_meta("transport", transport.as_str()),
        )
        .await;
    match transport {
        Transport::Control => inv.control().await,
        Transport::Headless => inv.headless().await,
    }
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
    if let Some(cwd) = state.data.get(PARAM_CWD)
        && *cwd != req.cwd.to_string_lossy()
    {
        return Some(format!(
            "session working directory changed ({cwd} -> {})",
            req.cwd.display()
        ));
    }
    if let Some(dir) = state.data.get(PARAM_CONFIG_DIR)
        && *dir != config_dir.to_string_lossy()
    {
        return Some(format!(
            "CodeBuddy config dir changed ({dir} -> {})",
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
    fn vars(&self) -> std::collections::BTreeMap<String, String> {
        env::vars(
            self.config,
            &self.req.env,
            &self.config_dir,
            self.transport,
            self.skills.as_ref().map(SkillOverlay::skills_dir),
        )
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
            allowed_tools: &shared::preapproved(self.req),
            prompt,
        };
        let args = argv::build(self.config, &self.req.policy, self.transport, &inv);
        let program = self.config.program();
        let launch = Launch {
            program: &program,
            args,
            cwd: &self.req.cwd,
            vars: self.vars(),
            inherit: proc::base_or_codebuddy,
            stdin: self.transport == Transport::Control,
            label: format!("codebuddy {} {}", self.transport.as_str(), self.req.run_id),
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
                self.fail(FailureCode::AgentError, format!("cannot start CodeBuddy: {e}"));
                None
            }
        }
    }

    /// Collects a finished process's output and exit.
    fn collect(&mut self, proc: &mut Proc, exit: crate::driver::process::ExitInfo) {
        self.take_output(proc);
        self.set_exit(exit);
    }

    /// Moves the process's output so far into this run's raw streams (a kept process keeps running).
    fn take_output(&mut self, proc: &mut Proc) {
        self.raw
            .stdout
            .extend_from_slice(&redact::redact_stdout(&proc.stdout.take_raw().bytes));
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

    fn terminal(&mut self, turn: &Turn) {
        if let Some(json) = &turn.terminal {
            let event = json.get("type").and_then(Value::as_str).unwrap_or("result");
            self.raw.terminal = Some(TerminalPayload {
                event: event.to_owned(),
                json: json.clone(),
            });
        }
    }

    /// Closes a turn that ended without `result` (so lifecycles and the turn count stay right) and records
    /// the terminal line.
    async fn close_turn(&mut self, turn: &Turn) {
        self.terminal(turn);
        let why = match &turn.end {
            TurnEnd::Result(_) | TurnEnd::Error(_) => return,
            TurnEnd::Closed => "CodeBuddy ended its output without a result",
            TurnEnd::Cancelled => "cancelled",
            TurnEnd::Stalled(Stall::Aborted) => "the model stream was aborted and CodeBuddy sent no result",
            TurnEnd::Stalled(Stall::PlanRefused) => {
                "the plan was refused; CodeBuddy ends such a turn without a result"
            }
            TurnEnd::Stalled(Stall::Interrupted) => "interrupted; CodeBuddy sent no result",
        };
        for ev in self.tr.abort_turn(why) {
            self.io.events.emit(ev).await;
        }
    }

    /// Records the failure a turn end means; returns true when the invocation may continue.
    fn verdict(&mut self, turn: &Turn) -> bool {
        let (code, message) = match &turn.end {
            TurnEnd::Result(r) => {
                if let Some(s) = &r.structured_output {
                    self.structured = Some(s.clone());
                }
                match translate::result_failure(r) {
                    Some(f) => {
                        if self.failure.is_none() {
                            self.failure = Some(f);
                        }
                        return false;
                    }
                    None => return true,
                }
            }
            TurnEnd::Error(e) => match e.unknown_session() {
                Some(id) => (
                    FailureCode::ResumeRejected,
                    format!("CodeBuddy has no session {id}"),
                ),
                None => (FailureCode::AgentError, e.error.clone()),
            },
            TurnEnd::Closed => (
                FailureCode::Protocol,
                "CodeBuddy ended its output without a result".to_owned(),
            ),
            TurnEnd::Cancelled => (FailureCode::Cancelled, "cancelled".to_owned()),
            TurnEnd::Stalled(Stall::Aborted) => (
                FailureCode::Network,
                "the model stream was aborted and CodeBuddy sent no result".to_owned(),
            ),
            TurnEnd::Stalled(Stall::PlanRefused) => (
                FailureCode::DecisionRejected,
                "the plan was refused; CodeBuddy ends such a turn without a result".to_owned(),
            ),
            TurnEnd::Stalled(Stall::Interrupted) => (
                FailureCode::AgentError,
                "the turn was interrupted and CodeBuddy sent no result".to_owned(),
            ),
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

    fn response(mut self) -> Response {
        let last = self.tr.last_result().cloned();
        let text = match &last {
            Some(r) => translate::final_text(r, ""),
            None => self.tr.turn_text().to_owned(),
        };
        let success = self.failure.is_none()
            && last.as_ref().is_some_and(|r| r.is_success())
            && (self.kept || self.exit.is_some_and(|e| e.success()));
        let checkpoint = last
            .as_ref()
            .map(|r| shared::checkpoint(&r.session_id, &self.req.cwd, &self.config_dir, success));
        let mut metadata = std::collections::BTreeMap::new();
        metadata.insert("transport".into(), self.transport.as_str().into());
        metadata.insert("processes".into(), self.processes.to_string());
        metadata.insert("process_kept".into(), self.kept.to_string());
        if let Some(sid) = self.tr.session_id() {
            metadata.insert("session_id".into(), sid.to_owned());
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
