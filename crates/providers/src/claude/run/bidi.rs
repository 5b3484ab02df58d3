//! The bidirectional transport: one process, the `initialize` handshake before the first user frame,
//! supplemental input written as it is admitted, AfterTurn input written after each `result`, and the
//! end of the invocation at a `result` with nothing in flight and nothing claimable. A thread's kept process
//! (`persist.rs`) skips the handshake: only the user frame is written.

use crate::driver::{Boundary, FailureCode};

use super::super::wire::{Frame, InitializeInfo, InputFrame, parse_line};
use super::persist::Acquired;
use super::proc::Proc;
use super::turn::{self, Turn, TurnCtx, TurnEnd};
use super::{Exec, settle_claims};

/// Our request id for `initialize`.
pub const INITIALIZE_ID: &str = "agent-adaptor-init";

/// How a handshake ended.
enum Handshake {
    /// The CLI answered; write the first user frame.
    Ready,
    /// The CLI ended a turn before answering (e.g. an unknown `--resume` id).
    Turn(Box<Turn>),
    /// The handshake failed (recorded).
    Failed,
}

impl Exec<'_> {
    /// Reads until the `initialize` answer.
    async fn handshake(&mut self, proc: &mut Proc) -> Handshake {
        use futures::StreamExt;
        let deadline = tokio::time::sleep(self.config.handshake_timeout());
        tokio::pin!(deadline);
        loop {
            let line = tokio::select! {
                _ = self.io.cancel.cancelled() => {
                    self.fail(FailureCode::Cancelled, "cancelled");
                    return Handshake::Failed;
                }
                _ = &mut deadline => {
                    self.fail(FailureCode::AgentError, "Claude did not answer initialize in time");
                    return Handshake::Failed;
                }
                line = proc.stdout.next() => line,
            };
            let raw = match line {
                Some(Ok(l)) => match l.raw() {
                    Some(r) => r.clone(),
                    None => continue,
                },
                _ => {
                    let tail = proc.child.stderr().tail_lossy();
                    self.fail(
                        FailureCode::AgentError,
                        format!("Claude exited during the handshake: {}", tail.trim()),
                    );
                    return Handshake::Failed;
                }
            };
            match parse_line(&raw) {
                Ok(Frame::ControlResponse(r)) if r.response.request_id == INITIALIZE_ID => {
                    if !r.is_success() {
                        let why = r
                            .response
                            .error
                            .clone()
                            .unwrap_or_else(|| r.response.subtype.clone());
                        self.fail(FailureCode::AgentError, format!("initialize refused: {why}"));
                        return Handshake::Failed;
                    }
                    self.init = r.payload::<InitializeInfo>();
                    return Handshake::Ready;
                }
                Ok(f) => {
                    for ev in self.tr.frame(&f) {
                        self.io.events.emit(ev).await;
                    }
                    if let Frame::Result(r) = f {
                        return Handshake::Turn(Box::new(Turn {
                            end: TurnEnd::Result(r),
                            interrupted: false,
                            denied: false,
                            terminal: serde_json::from_slice(&raw).ok(),
                        }));
                    }
                }
                Err(e) => {
                    let ev = self.tr.invalid(&String::from_utf8_lossy(&raw), &e.to_string());
                    self.io.events.emit(ev).await;
                }
            }
        }
    }

    pub(super) async fn bidi(&mut self) {
        let resume = self.session_plan().map(|(id, f)| (id.to_owned(), f));
        let Some(Acquired {
            mut held,
            lease,
            warm,
        }) = self
            .acquire(resume.as_ref().map(|(id, f)| (id.as_str(), *f)))
            .await
        else {
            return;
        };
        let proc = &mut held.proc;
        let mut seq = 0u64;
        let ready = if warm {
            // The kept process answered `initialize` in the run that started it.
            Handshake::Ready
        } else {
            match proc.send(&InputFrame::initialize(INITIALIZE_ID)).await {
                Err(e) => {
                    self.fail(FailureCode::AgentError, format!("cannot write to Claude: {e}"));
                    Handshake::Failed
                }
                Ok(()) => self.handshake(proc).await,
            }
        };
        match ready {
            Handshake::Ready => {
                let prompt =
                    InputFrame::user_with(self.req.prompt.clone(), uuid::Uuid::new_v4().to_string(), None);
                if let Err(e) = proc.send(&prompt).await {
                    self.fail(FailureCode::AgentError, format!("cannot write to Claude: {e}"));
                } else {
                    self.turns(proc, &mut seq).await;
                }
            }
            Handshake::Turn(t) => {
                self.close_turn(&t).await;
                self.verdict(&t);
            }
            Handshake::Failed => {}
        }
        self.put_back(held, lease).await;
    }

    /// Reads turns until the invocation is done.
    async fn turns(&mut self, proc: &mut Proc, seq: &mut u64) {
        loop {
            let mut ctx = TurnCtx {
                io: self.io,
                inflight: &mut self.inflight,
                live_messages: true,
                seq: &mut *seq,
                mcp: &self.req.mcp,
            };
            let turn = turn::drive(proc, &mut self.tr, &mut ctx).await;
            self.close_turn(&turn).await;
            if !self.verdict(&turn) {
                return;
            }
            let queued = match &turn.end {
                TurnEnd::Result(r) => r.queued_turn_count.unwrap_or(0),
                _ => 0,
            };
            if !self.inflight.is_empty() || queued > 0 {
                // Written input the CLI has not run yet: it runs as the next turn by itself.
                continue;
            }
            match self.claim(Boundary::TurnEnd) {
                Some((prompt, claims)) => {
                    let uuid = uuid::Uuid::new_v4().to_string();
                    match proc
                        .send(&InputFrame::user_with(prompt, uuid.clone(), None))
                        .await
                    {
                        Ok(()) => self.inflight.push((uuid, "turn_end", claims)),
                        Err(e) => {
                            settle_claims(claims, false, "turn_end");
                            self.fail(FailureCode::AgentError, format!("cannot write to Claude: {e}"));
                            return;
                        }
                    }
                }
                None => return,
            }
        }
    }
}
