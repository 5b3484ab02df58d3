//! One provider turn: read frames until `result` while answering `can_use_tool`, watching for cancellation,
//! for interrupt-timed input, and for the situations in which CodeBuddy never sends a `result` (a refused
//! plan, an interrupt during a tool or a pending permission, an aborted model stream). Those arm a settle
//! timer; when it fires the driver ends the turn itself.

use std::pin::Pin;
use std::time::Duration;

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use serde_json::Value;
use tokio::time::Instant;

use crate::driver::process::Line;
use crate::driver::{DecisionKind, DecisionOutcome, DriverEvent, RunIo};

use super::super::decision;
use super::super::translate::Translator;
use super::super::wire::{
    CanUseTool, ContentBlock, ControlRequestBody, ControlResponse, ErrorFrame, Frame, InputFrame,
    RequestKind, ResultFrame, parse_line,
};
use super::proc::Proc;

/// How a turn ended.
#[derive(Debug)]
pub enum TurnEnd {
    /// The official end of the turn.
    Result(ResultFrame),
    /// An `error` line (e.g. an unknown `--resume` id).
    Error(ErrorFrame),
    /// Stdout closed before a `result`.
    Closed,
    /// The run was cancelled.
    Cancelled,
    /// The driver ended the turn: no `result` came within the settle time after `reason`.
    Stalled(Stall),
}

/// Why a turn was ended by the driver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stall {
    /// The model stream was aborted (CodeBuddy retries once, then waits forever).
    Aborted,
    /// A plan was refused without interrupting (CodeBuddy leaves the turn open).
    PlanRefused,
    /// An interrupt was acknowledged but no `result` followed (a tool or a permission was pending).
    Interrupted,
}

/// The outcome of [`drive`].
#[derive(Debug)]
pub struct Turn {
    /// How it ended.
    pub end: TurnEnd,
    /// An interrupt was sent for interrupt-timed input.
    pub interrupted: bool,
    /// The exact JSON of the terminal line (`result` or `error`), for `Response.raw.terminal`.
    pub terminal: Option<Value>,
}

type Pending = Pin<Box<dyn Future<Output = (String, CanUseTool, DecisionOutcome)> + Send>>;

/// Whether `f` is the synthesized "aborted" message CodeBuddy prints when the model stream breaks.
fn is_abort_marker(f: &Frame) -> bool {
    match f {
        Frame::Assistant(a) => {
            matches!(a.message.content.as_slice(), [ContentBlock::Text { text }] if text == "aborted")
        }
        _ => false,
    }
}

/// Reads one turn to its end. `interruptible` enables interrupt-timed input (control transport).
pub async fn drive(
    proc: &mut Proc,
    tr: &mut Translator,
    io: &RunIo,
    settle: Duration,
    interruptible: bool,
) -> Turn {
    let mut pending: FuturesUnordered<Pending> = FuturesUnordered::new();
    let mut deadline: Option<(Instant, Stall)> = None;
    let mut interrupted = false;
    let mut port = io.messages.clone().filter(|_| interruptible);
    let end = |end, interrupted, terminal| Turn {
        end,
        interrupted,
        terminal,
    };
    // An interrupt admitted before the turn started is honoured at once.
    let mut check_interrupt = port.as_ref().is_some_and(|p| p.pending().interrupt > 0);
    loop {
        if check_interrupt && !interrupted {
            check_interrupt = false;
            if port.as_ref().is_some_and(|p| p.pending().interrupt > 0) {
                interrupted = true;
                let _ = proc.send(&InputFrame::interrupt("agent-adaptor-interrupt")).await;
                // A pending permission is left hanging by CodeBuddy: withdraw it.
                pending.clear();
                deadline = Some((Instant::now() + settle, Stall::Interrupted));
            }
        }
        let sleep = async {
            match deadline {
                Some((at, _)) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        let changed = async {
            match port.as_mut() {
                Some(p) => p.changed().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            _ = io.cancel.cancelled() => return end(TurnEnd::Cancelled, interrupted, None),
            Some((rid, req, outcome)) = pending.next(), if !pending.is_empty() => {
                let answer = decision::answer(&req, &outcome);
                if decision::kind(&req) == DecisionKind::PlanReview
                    && matches!(outcome, DecisionOutcome::Denied { interrupt: false, .. })
                {
                    deadline = Some((Instant::now() + settle, Stall::PlanRefused));
                }
                let _ = proc.send(&InputFrame::permission(&rid, &answer)).await;
            }
            _ = sleep => {
                let stall = deadline.map_or(Stall::Interrupted, |(_, s)| s);
                return end(TurnEnd::Stalled(stall), interrupted, None);
            }
            () = changed => check_interrupt = true,
            line = proc.stdout.next() => {
                let (value, raw) = match line {
                    None | Some(Err(_)) => return end(TurnEnd::Closed, interrupted, None),
                    Some(Ok(Line::Json { value, raw })) => (value, raw),
                    Some(Ok(Line::Invalid { raw, error })) => {
                        let ev = tr.invalid(&String::from_utf8_lossy(&raw), &error);
                        io.events.emit(ev).await;
                        continue;
                    }
                    Some(Ok(Line::TooLong { len, prefix })) => {
                        let ev = tr.invalid(&String::from_utf8_lossy(&prefix), &format!("line of {len} bytes is too long"));
                        io.events.emit(ev).await;
                        continue;
                    }
                };
                let frame = match parse_line(&String::from_utf8_lossy(&raw)) {
                    Ok(f) => f,
                    Err(e) => {
                        let ev = tr.invalid(&String::from_utf8_lossy(&raw), &e.to_string());
                        io.events.emit(ev).await;
                        continue;
                    }
                };
                if is_abort_marker(&frame) {
                    deadline = Some((Instant::now() + settle, Stall::Aborted));
                } else if matches!(deadline, Some((_, Stall::Aborted))) {
                    deadline = None;
                }
                if let Frame::ControlRequest(r) = &frame {
                    match &r.request {
                        RequestKind::Known(ControlRequestBody::CanUseTool(c)) if !interrupted => {
                            let sink = io.decisions.clone();
                            let (rid, c) = (r.request_id.clone(), c.clone());
                            let req = decision::request(&c);
                            pending.push(Box::pin(async move {
                                let outcome = sink.request(req).await;
                                (rid, c, outcome)
                            }));
                        }
                        RequestKind::Known(ControlRequestBody::CanUseTool(_)) => {}
                        _ => {
                            // Nothing else was registered in `initialize`: refuse so the CLI does not wait.
                            let refusal = ControlResponse {
                                response: super::super::wire::ControlResponseBody {
                                    subtype: "error".into(),
                                    request_id: r.request_id.clone(),
                                    response: None,
                                    error: Some("not supported by agent-adaptor".into()),
                                },
                            };
                            let _ = proc.send(&InputFrame::ControlResponse(refusal)).await;
                        }
                    }
                }
                for ev in tr.frame(&frame) {
                    emit(io, ev).await;
                }
                match frame {
                    Frame::Result(r) => return end(TurnEnd::Result(r), interrupted, Some(value)),
                    Frame::Error(e) => return end(TurnEnd::Error(e), interrupted, Some(value)),
                    _ => {}
                }
            }
        }
    }
}

async fn emit(io: &RunIo, ev: DriverEvent) {
    io.events.emit(ev).await;
}
