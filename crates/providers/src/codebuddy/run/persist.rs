//! The persistent `codebuddy` process per thread (control transport only), over the generic
//! [`ProcessPool`], like Claude's (`providers::claude::run::persist`):
//!
//! * **Eligible** runs are thread runs on the control transport without `max_turns_per_run`, a fork or
//!   a native schema (`--max-turns` and `--json-schema` hold for a process's life). They check the
//!   thread's process out of the pool under a signature ([`Exec::signature`]) and, when it is alive,
//!   holds the session the run resumes and its signature matches, write only the next user frame to it
//!   (no `initialize`, no `--resume` process start).
//! * **Any other thread run** (ineligible, `WithSpawn`, headless transport) first stops the thread's
//!   idle process, which would miss this run's turn, and runs in a one-off process.
//! * **Kept** only after a clean end: the last `result` a success, no failure, not cancelled. Anything
//!   else stops the process (a prompt byte may have been written: never replayed). A process poisoned
//!   by an interrupt without `result` is already replaced by a fresh `--resume` one in the run; that
//!   one is what is kept.
//! * A kept process found dead or with output at EOF before the prompt is written is discarded and the
//!   run starts a fresh one with `--resume` (no prompt byte reached it).
//! * Stopping a kept process closes stdin and escalates to SIGTERM after the grace period: CodeBuddy may
//!   not exit on stdin EOF alone (`real-clis-offline.md` M3b).

use std::path::PathBuf;
use std::time::Duration;

use futures::{FutureExt, StreamExt};

use crate::driver::process::{Child, Lease, PoolKey, Pooled, ProcessPool, StopPlan, Taken};
use crate::driver::{Notice, SessionPlan, notice_kind, session};

use super::super::argv::{self, Invocation, Transport};
use super::super::env;
use super::super::wire::parse_line;
use super::Exec;
use super::proc::Proc;
use crate::stream_json::run as shared;

/// The pool of a driver's kept processes.
pub type Pool = ProcessPool<Held>;

/// A `codebuddy` process between two runs of its thread.
pub struct Held {
    /// The process.
    pub proc: Proc,
    /// The session it holds (the last `result`'s `session_id`).
    pub session: String,
    /// The MCP file it was started with; removed when the process is dropped.
    pub mcp_file: Option<PathBuf>,
}

impl Held {
    fn new(proc: Proc) -> Held {
        Held {
            proc,
            session: String::new(),
            mcp_file: None,
        }
    }
}

impl Pooled for Held {
    fn child(&self) -> &Child {
        &self.proc.child
    }

    /// stdin EOF first, then SIGTERM after `grace` (CodeBuddy may ignore the EOF).
    fn stop_plan(&self, grace: Duration) -> StopPlan {
        self.proc.stop_plan(grace, false)
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if let Some(f) = self.mcp_file.take() {
            let _ = std::fs::remove_file(f);
        }
    }
}

/// The process a control run got: the thread's kept one (already initialized: only user frames are
/// written to it) or a new one.
pub struct Acquired {
    /// The process.
    pub held: Held,
    /// The thread's lease (`None` for direct runs).
    pub lease: Option<Lease<Held>>,
}

impl Exec<'_> {
    /// Why this run may not share the thread's process, or `None`.
    fn ineligible(&self) -> Option<&'static str> {
        if self.transport != Transport::Control {
            Some("headless transport")
        } else if self.config.max_turns_per_run.is_some() {
            Some("max_turns_per_run")
        } else if matches!(self.req.session, SessionPlan::Fork(_)) {
            Some("fork")
        } else if self.schema.is_some() {
            Some("native structured output")
        } else {
            None
        }
    }

    fn pool_key(&self) -> Option<PoolKey> {
        let thread = self.req.thread_key.as_deref()?;
        Some(PoolKey::new(&self.req.identity.tenant, thread))
    }

    /// A one-off thread run (headless transport): stops the thread's idle process first, which would
    /// otherwise miss this run's turn.
    pub(super) async fn evict_resident(&self) {
        if let Some(key) = self.pool_key() {
            // A forced checkout stops the idle process; the one-off lease is never used.
            drop(self.pool.checkout(key, "", true).await);
        }
    }

    /// The persistent-process signature: everything fixed for a process's life. The argv without
    /// `--resume` (model, effort, permission mode, instructions, pre-approved tools, extra args), the
    /// rendered MCP servers (the file name is per run), the working directory, the environment (the
    /// config dir, the run's skill overlay) and the driver configuration.
    pub(super) fn signature(&self) -> String {
        let allowed = shared::preapproved(self.req);
        let inv = Invocation {
            resume: None,
            fork: false,
            model: self.req.model.as_deref(),
            schema: self.schema.clone(),
            instructions: self.instructions.as_deref(),
            mcp_config: None,
            allowed_tools: &allowed,
            prompt: None,
        };
        let args = argv::build(self.config, &self.req.policy, self.transport, &inv);
        // The overlay is per run: a run with skills never shares a process with another run.
        let vars = self
            .vars()
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("\u{1f}");
        let mcp = if self.req.mcp.is_empty() {
            String::new()
        } else {
            env::mcp_config(&self.req.mcp).to_string()
        };
        session::fingerprint(&[
            &self.config.program().to_string_lossy(),
            &args.join("\u{1f}"),
            &self.req.cwd.to_string_lossy(),
            &vars,
            &serde_json::to_string(self.config).unwrap_or_default(),
            &mcp,
        ])
    }

    /// The process for a control run: the thread's kept one when it may be reused, else a new one
    /// (kept after the run when the run is eligible). `None` when none could start (recorded).
    pub(super) async fn acquire(&mut self, resume: Option<(&str, bool)>) -> Option<Acquired> {
        let lease = match self.pool_key() {
            None => None,
            Some(key) => {
                let fresh = self.req.spawn || self.ineligible().is_some();
                let signature = self.signature();
                match self.pool.checkout(key, &signature, fresh).await {
                    Taken::Cold(lease) => Some(lease),
                    Taken::Warm(mut held, lease) => {
                        let wanted = resume.map(|(id, _)| id).unwrap_or_default();
                        let why = if held.session != wanted {
                            Some("it holds another session")
                        } else if !self.still_alive(&mut held).await {
                            Some("it exited")
                        } else {
                            None
                        };
                        match why {
                            None => {
                                let notice = Notice::new(
                                    notice_kind::RUNTIME,
                                    "reusing the thread's codebuddy process",
                                )
                                .with_meta("source", "codebuddy.process")
                                .with_meta("pid", held.proc.child.pid().to_string())
                                .with_meta("transport", Transport::Control.as_str());
                                self.io.events.notice(notice).await;
                                return Some(Acquired {
                                    held,
                                    lease: Some(lease),
                                });
                            }
                            Some(why) => {
                                // Nothing was written to it: a fresh process with `--resume` is safe.
                                let exit = held.proc.stop(self.grace(), false).await;
                                let notice = Notice::new(
                                    notice_kind::RUNTIME,
                                    format!("the thread's codebuddy process was not reused: {why}"),
                                )
                                .with_meta("source", "codebuddy.process")
                                .with_meta("exit", format!("{exit:?}"));
                                self.io.events.notice(notice).await;
                                Some(lease)
                            }
                        }
                    }
                }
            }
        };
        let kept = lease.as_ref().is_some_and(Lease::is_kept);
        let proc = self
            .start_control(resume.map(|(id, f)| (id.to_owned(), f)), kept)
            .await?;
        Some(Acquired {
            held: Held::new(proc),
            lease,
        })
    }

    /// True unless the kept process's output already ended. Lines it wrote while idle (none are
    /// expected) are translated like any other.
    async fn still_alive(&mut self, held: &mut Held) -> bool {
        if held.proc.child.exit_info().is_some() {
            return false;
        }
        loop {
            match held.proc.stdout.next().now_or_never() {
                None => return true,
                Some(None | Some(Err(_))) => return false,
                Some(Some(Ok(line))) => {
                    let Some(raw) = line.raw().cloned() else {
                        continue;
                    };
                    let text = String::from_utf8_lossy(&raw).into_owned();
                    let events = match parse_line(&text) {
                        Ok(f) => self.tr.frame(&f),
                        Err(e) => vec![self.tr.invalid(&text, &e.to_string())],
                    };
                    for ev in events {
                        self.io.events.emit(ev).await;
                    }
                }
            }
        }
    }

    /// Ends a control run's process: kept for the thread's next run after a clean end on a kept lease,
    /// else finished (clean) or stopped, and reaped.
    pub(super) async fn put_back(&mut self, mut held: Held, lease: Option<Lease<Held>>) {
        let cancelled = self.io.cancel.is_cancelled();
        let clean =
            !cancelled && self.failure.is_none() && self.tr.last_result().is_some_and(|r| r.is_success());
        let session = self.tr.session_id().map(str::to_owned);
        match (lease, session) {
            (Some(lease), Some(session)) if clean && lease.is_kept() => {
                self.take_output(&mut held.proc);
                held.session = session;
                if held.mcp_file.is_none() {
                    // Started by this run: the file lives as long as the process. A reused process
                    // keeps its own; `run` removes this run's unused one.
                    held.mcp_file = self.mcp_file.take();
                }
                match lease.release(held, true).await {
                    None => self.kept = true,
                    Some(exit) => self.set_exit(exit),
                }
            }
            (lease, _) => {
                let exit = if clean {
                    held.proc.finish(self.grace()).await
                } else {
                    held.proc.stop(self.grace(), cancelled).await
                };
                self.collect(&mut held.proc, exit);
                if let Some(lease) = lease {
                    lease.release(held, false).await;
                }
            }
        }
    }
}
