//! One invocation of the Codex driver, end to end. The transport rule (`transport.rs`) sends some
//! direct runs to `codex exec --json` ([`exec`]); everything else runs over `codex app-server`:
//!
//! 1. On a thread, lease the thread's kept app-server from the pool when its signature matches
//!    (`driver::process::ProcessPool`); else prepare the SDK-owned `CODEX_HOME` (`config.toml`) and
//!    spawn `codex app-server --listen stdio://`.
//! 2. `initialize` + `initialized` (a kept process skips both), then `thread/start`, `thread/resume`
//!    or `thread/fork` with the policy (sandbox, approval policy `on-request`: every request Codex
//!    raises goes through the run's decision policy) and the developer instructions; a kept process
//!    that already holds the resumed thread skips this too.
//! 3. `turn/start` with the prompt (and the output schema); notifications are translated in wire order,
//!    fenced by thread and turn ([`super::translate`]); server requests become decisions.
//! 4. While a turn runs, `Soon` input is steered in (`turn/steer`) and `Interrupt` input interrupts the
//!    turn (`turn/interrupt`) and starts the next one with it ([`input`]). At `turn/completed`, queued
//!    AfterTurn input starts the next turn in the same process.
//! 5. A clean run on a thread returns its process to the pool for the next run; otherwise stdin EOF and
//!    the process exits; on cancel, timeout or a protocol break, `turn/interrupt` and the escalating
//!    stop (never a replay of the prompt). Every process not kept is reaped before `run` returns.

pub(super) mod conn;
mod exec;
mod finish;
mod input;
mod turn;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::driver::process::{Lease, PoolKey, ProcessPool, ProcessRegistry, Taken};
use crate::driver::{
    Checkpoint, ClaimedMessage, DecisionKind, DecisionMode, DriverEvent, ExitInfo, Failure, FailureCode,
    Notice, ProcessInfo, ProcessKind, RawStreams, Request, Response, RunIo, SessionPlan, SessionState,
    notice_kind, session, session::PARAM_CWD,
};

use super::config::{CodexConfig, DEFAULT_TURN_TIMEOUT};
use super::translate::Translator;
use super::transport::{self, Facts, Refusal, Transport};
use super::wire::items::TurnStatus;
use super::{argv, home};
use crate::skills::SkillOverlay;
use conn::{Conn, Launch};

/// Guard key: the SDK-owned `CODEX_HOME` the thread lives in.
pub const PARAM_CODEX_HOME: &str = "codex_home";

/// The transport name reported in the metadata.
pub const TRANSPORT: &str = "app-server";

/// Everything one invocation accumulates.
struct Exec<'a> {
    config: &'a CodexConfig,
    registry: &'a ProcessRegistry,
    pool: &'a ProcessPool<Conn>,
    req: &'a Request,
    io: &'a RunIo,
    home: PathBuf,
    /// Whether the SDK may write `config.toml` into `home` (not the native `~/.codex`: its settings
    /// then travel as `-c` overrides).
    managed: bool,
    /// The run's skill overlay directory (`skills/extraRoots/set`), alive until `run` returns.
    skill_root: Option<PathBuf>,
    deadline: Instant,
    tr: Translator,
    raw: RawStreams,
    exit: Option<ExitInfo>,
    /// The process was kept for the thread's next run (so it has no exit status).
    kept: bool,
    failure: Option<Failure>,
    model: Option<String>,
    /// A decision was denied with abort (`cancel` answered): the interrupted turn is a rejection.
    rejected_abort: bool,
    cancelled: bool,
    turns: u32,
    /// Steered input waiting for its `userMessage` item.
    steers: Vec<input::Steered>,
    /// Client message ids handed out so far.
    steer_seq: u64,
    /// Codex refused a steer in the current turn: further `Soon` input waits for the turn end.
    steer_refused: bool,
    /// `Interrupt` input that withdrew a pending decision and interrupted the turn: it starts the
    /// next turn once the interrupted one completes.
    interrupted_for: Option<Vec<ClaimedMessage>>,
}

/// Runs one invocation.
pub async fn run(
    config: &CodexConfig,
    registry: &ProcessRegistry,
    pool: &ProcessPool<Conn>,
    req: Request,
    io: RunIo,
) -> Response {
    let (home, managed) = home::request_home(config, &req);
    if let Some(reason) = guard_violation(&req, &home) {
        return Response::failed(FailureCode::ResumeRejected, reason);
    }
    let skills = match SkillOverlay::create("codex", &req.run_id, Path::new(""), &req.skills) {
        Ok(s) => s,
        Err(e) => {
            return Response::failed(
                FailureCode::AgentError,
                format!("cannot lay out the run's skills: {e}"),
            );
        }
    };
    // `req.timeout` is the execution's resolved deadline (a call's own, else `CommonConfig.timeout`, filled
    // in by the core): the config's default must not cut a call's longer timeout short.
    let limit = [config.turn_timeout, req.timeout]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(DEFAULT_TURN_TIMEOUT);
    match select_transport(config, &req, io.messages.is_some()) {
        Ok(Transport::Exec) => {
            return exec::run(config, registry, &req, &io, home, Instant::now() + limit).await;
        }
        Ok(Transport::AppServer) => {}
        Err(refusal) => {
            return Response::failed(
                FailureCode::Other("transport_unsupported".into()),
                refusal.to_string(),
            );
        }
    }
    let mut ex = Exec {
        config,
        registry,
        pool,
        req: &req,
        io: &io,
        home,
        managed,
        skill_root: skills.as_ref().map(|s| s.skills_dir().to_owned()),
        deadline: Instant::now() + limit,
        tr: Translator::new(),
        raw: RawStreams::default(),
        exit: None,
        kept: false,
        failure: None,
        model: None,
        rejected_abort: false,
        cancelled: false,
        turns: 0,
        steers: Vec::new(),
        steer_seq: 0,
        interrupted_for: None,
        steer_refused: false,
    };
    io.events
        .notice(
            Notice::new(notice_kind::INVOCATION, "codex app-server transport")
                .with_meta("transport", TRANSPORT),
        )
        .await;
    ex.go().await;
    ex.response()
}

/// The transport of `req` under the configured preference (`transport.rs`).
pub(super) fn select_transport(
    config: &CodexConfig,
    req: &Request,
    messages: bool,
) -> Result<Transport, Refusal> {
    let facts = Facts {
        on_thread: req.thread_key.is_some(),
        fork: matches!(req.session, SessionPlan::Fork(_)),
        messages,
        plan_mode: config.plan_mode,
        ..Facts::of_policy(&req.policy)
    };
    transport::select(config.transport, &facts)
}

/// The developer instructions of a run: the configured ones, then the request's.
pub(super) fn instructions(config: &CodexConfig, req: &Request) -> Option<String> {
    let s = [config.common.instructions.as_deref(), req.instructions.as_deref()]
        .into_iter()
        .flatten()
        .filter(|s| !s.trim().is_empty())
        .collect::<Vec<_>>()
        .join("\n\n");
    (!s.is_empty()).then_some(s)
}

/// The checkpoint of thread `id`, with the guards a resume checks (`cwd`, `codex_home`).
pub(super) fn checkpoint(id: &str, req: &Request, home: &Path, valid: bool) -> Checkpoint {
    let mut state = SessionState {
        resume_id: id.to_owned(),
        display_id: id.to_owned(),
        ..Default::default()
    };
    state
        .data
        .insert(PARAM_CWD.into(), req.cwd.to_string_lossy().into_owned());
    state
        .data
        .insert(PARAM_CODEX_HOME.into(), home.to_string_lossy().into_owned());
    Checkpoint { state, valid }
}

/// A resume whose guards do not match this request is refused before anything starts.
fn guard_violation(req: &Request, home: &Path) -> Option<String> {
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
    if let Some(h) = state.data.get(PARAM_CODEX_HOME)
        && *h != home.to_string_lossy()
    {
        return Some(format!("CODEX_HOME changed ({h} -> {})", home.display()));
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

    async fn emit_all(&self, events: Vec<DriverEvent>) {
        for ev in events {
            self.io.events.emit(ev).await;
        }
    }

    /// The process for this run: the thread's kept app-server when its signature matches, else a
    /// new one (kept after the run when the run is on a thread and not `WithSpawn`).
    async fn acquire(&mut self) -> Option<(Conn, Option<Lease<Conn>>)> {
        let program = self.config.program();
        let approve_all =
            self.req.policy.approvals.effective_mode(DecisionKind::Permission) == DecisionMode::AutoApprove;
        let mcp = match home::mcp_overrides(&self.req.mcp, approve_all) {
            Ok(mut m) => {
                if !self.managed {
                    m.extend(home::config_overrides(self.config));
                }
                m
            }
            Err(e) => {
                self.fail(FailureCode::Other("invalid_mcp_config".into()), e);
                return None;
            }
        };
        let args = argv::app_server(&self.config.common.extra_args, &self.req.policy, &mcp);
        let vars = home::vars(self.config, &self.req.env, &self.home);
        let lease = match &self.req.thread_key {
            Some(thread) => {
                let key = PoolKey::new(&self.req.identity.tenant, thread);
                let sig = self.signature(&program, &args, &vars);
                match self.pool.checkout(key, &sig, self.req.spawn).await {
                    Taken::Warm(conn, lease) => {
                        self.io
                            .events
                            .notice(
                                Notice::new(notice_kind::RUNTIME, "reusing the thread's codex app-server")
                                    .with_meta("source", "codex.process")
                                    .with_meta("pid", conn.child.pid().to_string())
                                    .with_meta("transport", TRANSPORT),
                            )
                            .await;
                        return Some((conn, Some(lease)));
                    }
                    Taken::Cold(lease) => Some(lease),
                }
            }
            None => None,
        };
        if self.managed
            && let Err(e) = home::prepare(&self.home, self.config)
        {
            self.fail(
                FailureCode::AgentError,
                format!("cannot prepare CODEX_HOME {}: {e}", self.home.display()),
            );
            return None;
        }
        let kept = lease.as_ref().is_some_and(Lease::is_kept);
        let launch = Launch {
            program: &program,
            args,
            cwd: &self.req.cwd,
            vars,
            label: format!("codex app-server {}", self.req.run_id),
        };
        match Conn::spawn(self.registry, launch).await {
            Ok(c) => {
                let mut info = ProcessInfo {
                    kind: ProcessKind::Spawn,
                    text: format!("{} app-server", program.display()),
                    bytes: None,
                    metadata: Default::default(),
                    data: Default::default(),
                };
                info.metadata.insert("pid".into(), c.child.pid().to_string());
                info.metadata.insert("transport".into(), TRANSPORT.into());
                info.metadata.insert("persistent".into(), kept.to_string());
                self.io.events.emit(DriverEvent::ProcessInfo(info)).await;
                Some((c, lease))
            }
            Err(e) => {
                self.fail(FailureCode::AgentError, format!("cannot start Codex: {e}"));
                None
            }
        }
    }

    /// The persistent-process signature: everything fixed for a process's life (argv, cwd,
    /// environment, the driver configuration) and everything `thread/start|resume` fixes for its
    /// thread (model, sandbox, developer instructions). A change restarts the process.
    fn signature(&self, program: &Path, args: &[String], vars: &BTreeMap<String, String>) -> String {
        let env = vars
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("\u{1f}");
        let config = serde_json::to_string(self.config).unwrap_or_default();
        let model = self.req.model.as_deref().or(self.config.model.as_deref());
        session::fingerprint(&[
            &program.to_string_lossy(),
            &args.join("\u{1f}"),
            &self.req.cwd.to_string_lossy(),
            &env,
            &config,
            model.unwrap_or(""),
            &format!("{:?}", self.req.policy.sandbox),
            self.instructions().as_deref().unwrap_or(""),
        ])
    }

    async fn go(&mut self) {
        if self.io.cancel.is_cancelled() {
            self.cancelled = true;
            self.fail(FailureCode::Cancelled, "cancelled");
            return;
        }
        let Some((mut conn, lease)) = self.acquire().await else {
            return;
        };
        self.drive(&mut conn).await;
        if let Some(claims) = self.interrupted_for.take() {
            // The run stopped before the interrupted turn completed.
            input::settle_all(
                claims,
                &crate::driver::Ack::Failed(crate::driver::MessageFailure::RunFailed),
            );
        }
        let why = self.failure.as_ref().map_or_else(
            || "Codex ended without turn/completed".to_owned(),
            |f| f.message.clone(),
        );
        let aborted = self.tr.abort_turn(&why);
        self.emit_all(aborted).await;
        let clean = self.failure.is_none() && self.tr.terminal().is_some() && !self.cancelled;
        let exit = match lease {
            Some(lease) if clean && lease.is_kept() => {
                // The run ended at a turn boundary: keep the process for the thread's next run.
                self.take_raw(&mut conn);
                match lease.release(conn, true).await {
                    None => {
                        self.kept = true;
                        return;
                    }
                    Some(exit) => exit,
                }
            }
            lease => {
                // Not kept (a direct or `WithSpawn` run, or a failure mid-turn: never replayed).
                let exit = if clean {
                    conn.finish(self.grace()).await
                } else {
                    conn.stop(self.grace()).await
                };
                self.take_raw(&mut conn);
                if let Some(lease) = lease {
                    lease.release(conn, false).await;
                }
                exit
            }
        };
        self.exit = Some(ExitInfo {
            code: exit.code,
            signal: exit.signal,
        });
    }

    /// Moves the process's output so far into this run's raw streams.
    fn take_raw(&mut self, conn: &mut Conn) {
        self.raw.stdout.extend_from_slice(&conn.stdout.take_raw().bytes);
        self.raw
            .stderr
            .extend_from_slice(&conn.child.stderr().take_full().bytes);
    }

    fn response(mut self) -> Response {
        let terminal_ok = self
            .tr
            .terminal()
            .is_some_and(|t| t.status == TurnStatus::Completed);
        let exited_ok = self.kept || self.exit.is_some_and(|e| e.success());
        let success = self.failure.is_none() && terminal_ok && exited_ok;
        if self.failure.is_none() && terminal_ok && !exited_ok {
            let exit = self.exit.unwrap_or_default();
            self.fail(
                FailureCode::AgentError,
                format!("codex app-server exited abnormally ({exit:?})"),
            );
        }
        let model = self
            .model
            .clone()
            .or_else(|| self.req.model.clone())
            .or_else(|| self.config.model.clone())
            .unwrap_or_default();
        finish::Finished {
            req: self.req,
            home: &self.home,
            transport: Transport::AppServer,
            success,
            turns: self.turns,
            thread_id: self.tr.thread_id().map(str::to_owned),
            turn_id: self.tr.turn_id().map(str::to_owned),
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
