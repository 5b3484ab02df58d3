//! The control transport: one process, the `initialize` handshake before the first user frame, one user
//! frame per provider turn, held input written after each `result`, and the restart with `--resume` when
//! an interrupt leaves the process poisoned. A thread's kept process (`persist.rs`) skips the handshake:
//! only the user frame is written.

use crate::driver::process::Lease;
use crate::driver::{Boundary, ClaimedMessage, FailureCode};

use super::super::wire::{Frame, INITIALIZE_REQUEST_ID, InputFrame, parse_line};
use super::persist::Acquired;
use super::proc::Proc;
use super::turn::{self, Stall, Turn, TurnEnd};
use super::{Exec, settle_claims};

impl Exec<'_> {
    /// Starts a control process and completes the handshake; `kept` says whether it is kept for the
    /// thread after a clean run.
    pub(super) async fn start_control(&mut self, resume: Option<(String, bool)>, kept: bool) -> Option<Proc> {
        let mut proc = self
            .launch(resume.as_ref().map(|(id, f)| (id.as_str(), *f)), None, kept)
            .await?;
        if let Err(e) = proc.send(&InputFrame::initialize()).await {
            self.fail(FailureCode::AgentError, format!("cannot write to CodeBuddy: {e}"));
        } else if self.handshake(&mut proc).await {
            return Some(proc);
        }
        let exit = proc.stop(self.grace(), false).await;
        self.collect(&mut proc, exit);
        None
    }

    /// Reads until the `initialize` answer. Never logs the answer: it echoes the API key.
    async fn handshake(&mut self, proc: &mut Proc) -> bool {
        use futures::StreamExt;
        let deadline = tokio::time::sleep(self.config.handshake_timeout());
        tokio::pin!(deadline);
        loop {
            let line = tokio::select! {
                _ = self.io.cancel.cancelled() => {
                    self.fail(FailureCode::Cancelled, "cancelled");
                    return false;
                }
                _ = &mut deadline => {
                    self.fail(FailureCode::AgentError, "CodeBuddy did not answer initialize in time");
                    return false;
                }
                line = proc.stdout.next() => line,
            };
            let raw = match line {
                Some(Ok(l)) => match l.raw() {
                    Some(r) => r.clone(),
                    None => continue,
                },
                _ => {
                    self.fail(FailureCode::AgentError, "CodeBuddy exited during the handshake");
                    return false;
                }
            };
            let text = String::from_utf8_lossy(&raw);
            match parse_line(&text) {
                Ok(Frame::ControlResponse(r)) if r.response.request_id == INITIALIZE_REQUEST_ID => {
                    if r.response.subtype != "success" {
                        let why = r.response.error.unwrap_or_else(|| r.response.subtype.clone());
                        self.fail(FailureCode::AgentError, format!("initialize refused: {why}"));
                        return false;
                    }
                    return true;
                }
                Ok(Frame::Error(e)) => {
                    for ev in self.tr.frame(&Frame::Error(e.clone())) {
                        self.io.events.emit(ev).await;
                    }
                    let turn = Turn {
                        end: TurnEnd::Error(e),
                        interrupted: false,
                        terminal: serde_json::from_str(&text).ok(),
                    };
                    self.terminal(&turn);
                    self.verdict(&turn);
                    return false;
                }
                Ok(f) => {
                    for ev in self.tr.frame(&f) {
                        self.io.events.emit(ev).await;
                    }
                }
                Err(e) => {
                    let ev = self.tr.invalid(&text, &e.to_string());
                    self.io.events.emit(ev).await;
                }
            }
        }
    }

    pub(super) async fn control(&mut self) {
        let resume = self.session_plan().map(|(id, f)| (id.to_owned(), f));
        let Some(Acquired { mut held, lease }) = self
            .acquire(resume.as_ref().map(|(id, f)| (id.as_str(), *f)))
            .await
        else {
            return;
        };
        let kept = lease.as_ref().is_some_and(Lease::is_kept);
        // A kept (warm) process answered `initialize` in the run that started it: only user frames.
        self.turns(&mut held.proc, kept).await;
        self.put_back(held, lease).await;
    }

    /// Writes the prompt and held input turn by turn, until nothing is claimable or a turn fails.
    async fn turns(&mut self, proc: &mut Proc, kept: bool) {
        let mut prompt = self.req.prompt.clone();
        let mut claims: Vec<ClaimedMessage> = Vec::new();
        loop {
            let written = proc.send(&InputFrame::user(&prompt)).await;
            settle_claims(std::mem::take(&mut claims), written.is_ok(), "stdin");
            if let Err(e) = written {
                self.fail(FailureCode::AgentError, format!("cannot write to CodeBuddy: {e}"));
                break;
            }
            let turn = turn::drive(proc, &mut self.tr, self.io, self.config.settle_timeout(), true).await;
            self.close_turn(&turn).await;
            if matches!(turn.end, TurnEnd::Stalled(Stall::Interrupted)) {
                // No result after the interrupt: this process would run the next frame in a new session
                // without history. Stop it and resume the session in a new one.
                let exit = proc.stop(self.grace(), false).await;
                self.collect(proc, exit);
                let sid = self.tr.session_id().map(str::to_owned);
                let next = if sid.is_some() {
                    self.claim(Boundary::Interrupt)
                } else {
                    None
                };
                let (Some(sid), Some((p, c))) = (sid, next) else {
                    self.verdict(&turn);
                    return;
                };
                match self.start_control(Some((sid, false)), kept).await {
                    Some(fresh) => *proc = fresh,
                    None => {
                        settle_claims(c, false, "stdin");
                        return;
                    }
                }
                prompt = p;
                claims = c;
                continue;
            }
            if !self.verdict(&turn) {
                break;
            }
            let boundary = if turn.interrupted {
                Boundary::Interrupt
            } else {
                Boundary::TurnEnd
            };
            match self.claim(boundary) {
                Some((p, c)) => {
                    prompt = p;
                    claims = c;
                }
                None => break,
            }
        }
    }
}
