//! One invocation over `codex exec --json` (chosen by [`super::super::transport`]): one process per
//! turn, the prompt written to stdin (`-`) and stdin closed, events translated in wire order
//! ([`ExecTranslator`]) until stdout ends, then the exit status.
//!
//! * A resumed session runs `exec … resume <thread id> -`; an exit without `thread.started` whose stderr
//!   says the thread is unknown ("no rollout found …", the app-server classifier) is `resume_rejected`,
//!   so the core retries once with a fresh session.
//! * `--output-schema <file>`: the schema is written under `CODEX_HOME/exec-schemas/` (0600) and removed
//!   when the invocation ends.
//! * Turn-end input (any timing: exec has no steer or interrupt) continues the thread after a clean turn
//!   with `exec resume` in a new process; its claims are acknowledged (`exec_resume`) when that process
//!   reports `thread.started`.
//! * The wall-clock guard of the app-server path applies (Codex retries an unreachable endpoint
//!   forever); on expiry or cancel the process group is stopped (SIGTERM, then SIGKILL) and reaped.
//! * The checkpoint is the thread id, valid only when every turn ended with `turn.completed` and exit 0.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use futures::StreamExt;

use crate::driver::process::{self, Child, Line, ProcessRegistry, ProcessSpec, StdoutLines, StopPlan, spawn};
use crate::driver::{
    Ack, Boundary, ClaimedMessage, DecisionKind, DecisionMode, DriverEvent, ExitInfo, Failure, FailureCode,
    MessageFailure, Notice, ProcessInfo, ProcessKind, RawStreams, Request, Response, RunIo, SessionPlan,
    TerminalPayload, notice_kind,
};

use super::super::classify::{exec_failure, is_resume_rejection};
use super::super::config::CodexConfig;
use super::super::translate::exec::{ExecTerminal, ExecTranslator};
use super::super::transport::Transport;
use super::super::wire::exec::{ExecEvent, parse_exec_line};
use super::super::{argv, home};
use super::input::{joined, settle_all};

/// The transport name reported in the metadata.
pub const TRANSPORT: &str = "exec";

/// Everything one exec invocation accumulates.
struct ExecRun<'a> {
    config: &'a CodexConfig,
    registry: &'a ProcessRegistry,
    req: &'a Request,
    io: &'a RunIo,
    home: PathBuf,
    deadline: Instant,
    tr: ExecTranslator,
    raw: RawStreams,
    exit: Option<ExitInfo>,
    failure: Option<Failure>,
    turns: u32,
    schema: Option<PathBuf>,
}

/// Runs one invocation over `codex exec --json`.
pub(super) async fn run(
    config: &CodexConfig,
    registry: &ProcessRegistry,
    req: &Request,
    io: &RunIo,
    home: PathBuf,
    deadline: Instant,
) -> Response {
    let model = req
        .model
        .clone()
        .or_else(|| config.model.clone())
        .unwrap_or_default();
    let mut ex = ExecRun {
        config,
        registry,
        req,
        io,
        home,
        deadline,
        tr: ExecTranslator::new(&model),
        raw: RawStreams::default(),
        exit: None,
        failure: None,
        turns: 0,
        schema: None,
    };
    io.events
        .notice(
            Notice::new(notice_kind::INVOCATION, "codex exec transport").with_meta("transport", TRANSPORT),
        )
        .await;
    ex.go().await;
    if let Some(f) = ex.schema.take() {
        let _ = std::fs::remove_file(f);
    }
    ex.response(model)
}

fn exit_info(e: &process::ExitInfo) -> ExitInfo {
    ExitInfo {
        code: e.code,
        signal: e.signal,
    }
}

/// How one process ended.
enum End {
    /// stdout ended; the exit status.
    Exited(ExitInfo),
    /// Cancelled or out of time: stopped.
    Stopped,
}

impl ExecRun<'_> {
    fn fail(&mut self, code: FailureCode, message: impl Into<String>) {
        if self.failure.is_none() {
            self.failure = Some(Failure::new(code, message));
        }
    }

    async fn emit_all(&self, events: Vec<DriverEvent>) {
        for ev in events {
            self.io.events.emit(ev).await;
        }
    }

    /// Writes the output schema file, if the run has one.
    fn write_schema(&mut self) -> std::io::Result<()> {
        let Some(schema) = &self.req.output_schema else {
            return Ok(());
        };
        let dir = self.home.join("exec-schemas");
        std::fs::create_dir_all(&dir)?;
        let path = dir.join(format!("{}.json", self.req.run_id));
        let mut opts = std::fs::OpenOptions::new();
        opts.write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
        std::io::Write::write_all(&mut opts.open(&path)?, schema.schema.to_string().as_bytes())?;
        self.schema = Some(path);
        Ok(())
    }

    async fn go(&mut self) {
        if self.io.cancel.is_cancelled() {
            return self.fail(FailureCode::Cancelled, "cancelled");
        }
        let approve_all =
            self.req.policy.approvals.effective_mode(DecisionKind::Permission) == DecisionMode::AutoApprove;
        let mcp = match home::mcp_overrides(&self.req.mcp, approve_all) {
            Ok(m) => m,
            Err(e) => return self.fail(FailureCode::Other("invalid_mcp_config".into()), e),
        };
        if let Err(e) = home::prepare(&self.home, self.config).and_then(|()| self.write_schema()) {
            return self.fail(
                FailureCode::AgentError,
                format!("cannot prepare CODEX_HOME {}: {e}", self.home.display()),
            );
        }
        let mut resume = match &self.req.session {
            SessionPlan::Resume(s) => Some(s.resume_id.clone()),
            _ => None,
        };
        let mut prompt = self.req.prompt.clone();
        let mut claims: Vec<ClaimedMessage> = Vec::new();
        loop {
            let ok = self.turn(&mcp, resume.as_deref(), &prompt, &mut claims).await;
            // Claims not acknowledged by `thread.started` never reached Codex.
            settle_all(
                std::mem::take(&mut claims),
                &Ack::Failed(MessageFailure::RunFailed),
            );
            if !ok {
                return;
            }
            let Some(port) = self.io.messages.as_ref() else {
                return;
            };
            let next = port.claim(Boundary::TurnEnd);
            if next.is_empty() {
                return;
            }
            prompt = joined(&next);
            claims = next;
            resume = self.tr.thread_id().map(str::to_owned);
        }
    }

    /// One process, one turn; true when it ended cleanly (`turn.completed`, exit 0).
    async fn turn(
        &mut self,
        mcp: &[String],
        resume: Option<&str>,
        prompt: &str,
        claims: &mut Vec<ClaimedMessage>,
    ) -> bool {
        let model = self.req.model.as_deref();
        let instructions = super::instructions(self.config, self.req);
        let args = argv::exec(
            &self.config.common.extra_args,
            &self.req.policy,
            mcp,
            &argv::ExecArgs {
                cwd: Some(&self.req.cwd),
                model,
                instructions: instructions.as_deref(),
                schema: self.schema.as_deref(),
                resume,
            },
        );
        let vars = home::vars(self.config, &self.req.env, &self.home);
        let program = self.config.program();
        let Some((child, mut stdout)) = self.spawn(&program, args, vars).await else {
            return false;
        };
        self.turns += 1;
        let fed = match child.stdin() {
            Some(w) => {
                let r = w.send_raw(prompt.as_bytes().to_vec()).await;
                w.close().await;
                r.map_err(|e| e.to_string())
            }
            None => Err("stdin was not piped".to_owned()),
        };
        if let Err(e) = fed {
            self.fail(
                FailureCode::AgentError,
                format!("cannot write the prompt to Codex: {e}"),
            );
            self.stop(&child).await;
            self.take_raw(&child, &mut stdout);
            return false;
        }
        let end = self.read(&child, &mut stdout, claims).await;
        self.take_raw(&child, &mut stdout);
        let why = self.failure.as_ref().map_or_else(
            || "codex exec ended without turn.completed".to_owned(),
            |f| f.message.clone(),
        );
        let aborted = self.tr.abort_turn(&why);
        self.emit_all(aborted).await;
        let exit = match end {
            End::Stopped => return false,
            End::Exited(e) => e,
        };
        self.verdict(&child, exit, resume.is_some())
    }

    async fn spawn(
        &mut self,
        program: &Path,
        args: Vec<String>,
        vars: BTreeMap<String, String>,
    ) -> Option<(Child, StdoutLines)> {
        let spec = ProcessSpec::new(program)
            .args(&args)
            .cwd(&self.req.cwd)
            .inherit_base_env()
            .envs(&vars)
            .stdin_piped(true)
            .label(format!("codex exec {}", self.req.run_id));
        let mut child = match spawn(self.registry, spec).await {
            Ok(c) => c,
            Err(e) => {
                self.fail(FailureCode::AgentError, format!("cannot start Codex: {e}"));
                return None;
            }
        };
        let Some(stdout) = child.take_stdout() else {
            self.fail(
                FailureCode::AgentError,
                "cannot start Codex: stdout was not piped",
            );
            let _ = self.stop(&child).await;
            return None;
        };
        let mut info = ProcessInfo {
            kind: ProcessKind::Spawn,
            text: format!("{} exec", program.display()),
            bytes: None,
            metadata: Default::default(),
            data: Default::default(),
        };
        info.metadata.insert("pid".into(), child.pid().to_string());
        info.metadata.insert("transport".into(), TRANSPORT.into());
        info.metadata.insert("persistent".into(), "false".into());
        self.io.events.emit(DriverEvent::ProcessInfo(info)).await;
        Some((child, stdout))
    }

    /// Reads stdout to its end (or a cancel / the deadline).
    async fn read(
        &mut self,
        child: &Child,
        stdout: &mut StdoutLines,
        claims: &mut Vec<ClaimedMessage>,
    ) -> End {
        loop {
            let line = tokio::select! {
                biased;
                _ = self.io.cancel.cancelled() => {
                    self.fail(FailureCode::Cancelled, "cancelled");
                    self.stop(child).await;
                    return End::Stopped;
                }
                r = tokio::time::timeout_at(self.deadline.into(), stdout.next()) => match r {
                    Ok(l) => l,
                    Err(_) => {
                        self.fail(
                            FailureCode::Network,
                            "Codex did not finish the turn within the wall-clock limit",
                        );
                        self.stop(child).await;
                        return End::Stopped;
                    }
                },
            };
            match line {
                None | Some(Err(_)) => break,
                Some(Ok(Line::Json { value, raw })) => {
                    let text = String::from_utf8_lossy(&raw);
                    match parse_exec_line(&text) {
                        Ok(ev) => {
                            let had = self.tr.terminal().is_some();
                            let started = matches!(ev, ExecEvent::ThreadStarted { .. });
                            let events = self.tr.handle(ev);
                            if !had && self.tr.terminal().is_some() {
                                let event = value["type"].as_str().unwrap_or_default().to_owned();
                                self.raw.terminal = Some(TerminalPayload { event, json: value });
                            }
                            if started && !claims.is_empty() {
                                // `thread.started`: Codex took the prompt of this process.
                                settle_all(
                                    std::mem::take(claims),
                                    &Ack::Delivered {
                                        mechanism: "exec_resume".into(),
                                    },
                                );
                            }
                            self.emit_all(events).await;
                        }
                        Err(e) => self.invalid(e.to_string()).await,
                    }
                }
                Some(Ok(Line::Invalid { raw, error })) => {
                    let text = String::from_utf8_lossy(&raw);
                    if !text.trim().is_empty() {
                        self.invalid(format!("{error}: {}", text.chars().take(120).collect::<String>()))
                            .await;
                    }
                }
                Some(Ok(Line::TooLong { len, .. })) => {
                    self.invalid(format!("a {len}-byte line exceeded the limit"))
                        .await;
                }
            }
        }
        let grace = self.config.common.grace();
        match tokio::time::timeout(super::conn::EXIT_WAIT.max(grace), child.wait()).await {
            Ok(exit) => End::Exited(exit_info(&exit)),
            Err(_) => End::Exited(self.stop(child).await),
        }
    }

    async fn invalid(&self, why: String) {
        self.io
            .events
            .notice(Notice::new(notice_kind::PROVIDER_INVALID, why).with_meta("transport", TRANSPORT))
            .await;
    }

    async fn stop(&mut self, child: &Child) -> ExitInfo {
        let grace = self.config.common.grace();
        let exit = exit_info(
            &child
                .stop(StopPlan::new().interrupt_grace(grace).term_grace(grace))
                .await,
        );
        self.exit = Some(exit);
        exit
    }

    fn take_raw(&mut self, child: &Child, stdout: &mut StdoutLines) {
        self.raw.stdout.extend_from_slice(&stdout.take_raw().bytes);
        self.raw
            .stderr
            .extend_from_slice(&child.stderr().take_full().bytes);
    }

    /// Records what the process's end means; true when the turn ended cleanly.
    fn verdict(&mut self, child: &Child, exit: ExitInfo, resumed: bool) -> bool {
        self.exit = Some(exit);
        match self.tr.terminal() {
            Some(ExecTerminal::Completed) if exit.success() => true,
            Some(ExecTerminal::Completed) => {
                self.fail(
                    FailureCode::AgentError,
                    format!("codex exec exited abnormally after turn.completed ({exit:?})"),
                );
                false
            }
            Some(ExecTerminal::Failed(m)) => {
                if self.failure.is_none() {
                    self.failure = Some(exec_failure(m));
                }
                false
            }
            None => {
                let stderr = child.stderr().tail_lossy();
                if resumed && is_resume_rejection(&stderr) {
                    let line = stderr
                        .lines()
                        .find(|l| is_resume_rejection(l))
                        .unwrap_or(&stderr)
                        .to_owned();
                    self.fail(FailureCode::ResumeRejected, line);
                } else if let Some(m) = self.tr.last_error().map(str::to_owned) {
                    if self.failure.is_none() {
                        self.failure = Some(exec_failure(&m));
                    }
                } else {
                    self.fail(
                        FailureCode::AgentError,
                        format!("codex exec exited before turn.completed ({exit:?}): {stderr}"),
                    );
                }
                false
            }
        }
    }

    fn response(mut self, model: String) -> Response {
        let success = self.failure.is_none() && self.tr.terminal() == Some(&ExecTerminal::Completed);
        super::finish::Finished {
            req: self.req,
            home: &self.home,
            transport: Transport::Exec,
            success,
            turns: self.turns,
            thread_id: self.tr.thread_id().map(str::to_owned),
            turn_id: None,
            text: self.tr.last_text().unwrap_or_default().to_owned(),
            model,
            usage: self.tr.usage(),
            transcript: self.tr.take_transcript(),
            raw: std::mem::take(&mut self.raw),
            failure: self.failure.take(),
            exit: self.exit,
        }
        .response()
    }
}
