//! One provider turn: read frames until `result` while answering `can_use_tool` (and withdrawing it on
//! `control_cancel_request`), watching for cancellation, and — in the bidirectional transport — writing
//! supplemental messages as they are admitted and acknowledging them when the CLI reports delivery.

use std::collections::HashMap;
use std::pin::Pin;

use futures::StreamExt;
use futures::future::{AbortHandle, Abortable};
use futures::stream::FuturesUnordered;
use serde_json::Value;

use crate::driver::process::Line;
use crate::driver::{Ack, Boundary, ClaimedMessage, DecisionOutcome, DriverEvent, MessagePort, RunIo};
use crate::vocab::McpServer;

use super::super::decision;
use super::super::timing;
use super::super::translate::Translator;
use super::super::wire::{
    CanUseTool, CliRequest, Frame, InputFrame, LifecycleState, Priority, ResultFrame, System, parse_line,
};
use super::Inflight;
use super::proc::Proc;

/// How a turn ended.
#[derive(Debug)]
pub enum TurnEnd {
    /// The official end of the turn.
    Result(ResultFrame),
    /// Stdout closed before a `result`.
    Closed,
    /// The run was cancelled.
    Cancelled,
    /// `system/init` reported a required MCP server as not connected (the message names them).
    McpRequired(String),
}

/// The outcome of [`drive`].
#[derive(Debug)]
pub struct Turn {
    /// How it ended.
    pub end: TurnEnd,
    /// The driver sent `interrupt` during this turn (for interrupt-timed input).
    pub interrupted: bool,
    /// A decision was denied with `interrupt` (the CLI then ends the turn `aborted_tools`).
    pub denied: bool,
    /// The exact JSON of the `result` line, for `Response.raw.terminal`.
    pub terminal: Option<Value>,
}

type Pending = Pin<
    Box<dyn Future<Output = Result<(String, CanUseTool, DecisionOutcome), futures::future::Aborted>> + Send>,
>;

/// What a turn needs besides the process and the translator.
pub struct TurnCtx<'a> {
    /// The run's sinks.
    pub io: &'a RunIo,
    /// Messages written and not yet reported delivered.
    pub inflight: &'a mut Inflight,
    /// Whether supplemental input is written mid-turn (bidirectional transport).
    pub live_messages: bool,
    /// Counter for client uuids and request ids.
    pub seq: &'a mut u64,
    /// The run's MCP servers: a `required` one not `connected` at `system/init` ends the turn.
    pub mcp: &'a [McpServer],
}

impl TurnCtx<'_> {
    fn next_id(&mut self, prefix: &str) -> String {
        *self.seq += 1;
        format!("{prefix}-{}", self.seq)
    }

    /// Writes claimed messages as one user frame with a client uuid; on a write failure they fail at once.
    async fn write(
        &mut self,
        proc: &Proc,
        claims: Vec<ClaimedMessage>,
        priority: Option<Priority>,
        mechanism: &'static str,
    ) {
        if claims.is_empty() {
            return;
        }
        let text = claims
            .iter()
            .map(|c| c.text.as_str())
            .collect::<Vec<_>>()
            .join("\n\n");
        let uuid = uuid::Uuid::new_v4().to_string();
        match proc
            .send(&InputFrame::user_with(text, uuid.clone(), priority))
            .await
        {
            Ok(()) => self.inflight.push((uuid, mechanism, claims)),
            Err(_) => super::settle_claims(claims, false, mechanism),
        }
    }

    /// Acknowledges the in-flight messages among `uuids` as delivered.
    fn delivered(&mut self, uuids: &[String]) {
        let mut i = 0;
        while i < self.inflight.len() {
            if uuids.contains(&self.inflight[i].0) {
                let (_, mechanism, claims) = self.inflight.remove(i);
                for c in claims {
                    c.ack(Ack::Delivered {
                        mechanism: mechanism.into(),
                    });
                }
            } else {
                i += 1;
            }
        }
    }

    /// The CLI withdrew an in-flight message (`command_lifecycle cancelled`).
    fn withdrawn(&mut self, uuid: &str) {
        if let Some(i) = self.inflight.iter().position(|(u, _, _)| u == uuid) {
            let (_, _, claims) = self.inflight.remove(i);
            for c in claims {
                c.ack(Ack::Failed(crate::driver::MessageFailure::ProviderRejected));
            }
        }
    }
}

/// Reads one turn to its end.
pub async fn drive(proc: &mut Proc, tr: &mut Translator, ctx: &mut TurnCtx<'_>) -> Turn {
    let io = ctx.io;
    let mut pending: FuturesUnordered<Pending> = FuturesUnordered::new();
    let mut aborts: HashMap<String, AbortHandle> = HashMap::new();
    let mut interrupted = false;
    let mut denied = false;
    let mut port: Option<MessagePort> = io.messages.clone().filter(|_| ctx.live_messages);
    let end = |end, interrupted, denied, terminal| Turn {
        end,
        interrupted,
        denied,
        terminal,
    };
    // Input admitted before the turn started is handled at once.
    let mut check = port.is_some();
    loop {
        if check {
            check = false;
            if let Some(p) = &port {
                if p.pending().interrupt > 0 && !interrupted {
                    let claims = p.claim(Boundary::Interrupt);
                    if !claims.is_empty() {
                        interrupted = true;
                        let rid = ctx.next_id("interrupt");
                        let _ = proc.send(&InputFrame::interrupt(rid)).await;
                        ctx.write(proc, claims, None, "interrupt").await;
                    }
                }
                if p.pending().soon > 0 {
                    let claims = p.claim(Boundary::InTurn);
                    ctx.write(proc, claims, Some(Priority::Next), "in_turn").await;
                }
            }
        }
        let changed = async {
            match port.as_mut() {
                Some(p) => p.changed().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            _ = io.cancel.cancelled() => return end(TurnEnd::Cancelled, interrupted, denied, None),
            Some(done) = pending.next(), if !pending.is_empty() => {
                let Ok((rid, req, outcome)) = done else { continue };
                aborts.remove(&rid);
                denied |= matches!(outcome, DecisionOutcome::Denied { interrupt: true, .. });
                let answer = decision::answer(&req, &outcome);
                let _ = proc.send(&InputFrame::permission(rid, answer)).await;
            }
            () = changed => check = true,
            line = proc.stdout.next() => {
                let read_at = timing::stamp();
                let raw = match line {
                    None | Some(Err(_)) => return end(TurnEnd::Closed, interrupted, denied, None),
                    Some(Ok(Line::Json { raw, .. })) => raw,
                    Some(Ok(Line::Invalid { raw, error })) => {
                        let ev = tr.invalid(&String::from_utf8_lossy(&raw), &error);
                        io.events.emit(ev).await;
                        continue;
                    }
                    Some(Ok(Line::TooLong { len, prefix })) => {
                        let ev = tr.invalid(
                            &String::from_utf8_lossy(&prefix),
                            &format!("line of {len} bytes is too long"),
                        );
                        io.events.emit(ev).await;
                        continue;
                    }
                };
                let frame = match parse_line(&raw) {
                    Ok(f) => f,
                    Err(e) => {
                        let ev = tr.invalid(&String::from_utf8_lossy(&raw), &e.to_string());
                        io.events.emit(ev).await;
                        continue;
                    }
                };
                let parsed_at = timing::stamp();
                match &frame {
                    Frame::ControlRequest(r) => match &r.request {
                        CliRequest::CanUseTool(c) => {
                            let sink = io.decisions.clone();
                            let (rid, c) = (r.request_id.clone(), c.clone());
                            let req = decision::request(&c);
                            let (handle, reg) = AbortHandle::new_pair();
                            aborts.insert(rid.clone(), handle);
                            pending.push(Box::pin(Abortable::new(
                                async move {
                                    let outcome = sink.request(req).await;
                                    (rid, c, outcome)
                                },
                                reg,
                            )));
                        }
                        CliRequest::Other { subtype, .. } => {
                            // Nothing else was registered in `initialize`: refuse so the CLI does not wait.
                            let refusal = InputFrame::error_response(
                                r.request_id.clone(),
                                format!("{subtype} is not supported by agent-adaptor"),
                            );
                            let _ = proc.send(&refusal).await;
                        }
                    },
                    Frame::ControlCancelRequest(c) => {
                        // The CLI withdrew its request: drop the decision (the host sees it expire).
                        if let Some(h) = aborts.remove(&c.request_id) {
                            h.abort();
                        }
                    }
                    Frame::System(System::Status(s)) if s.status.as_deref() == Some("requesting") => {
                        if let Some(uuids) = &s.user_message_uuids {
                            ctx.delivered(uuids);
                        }
                    }
                    Frame::CommandLifecycle(l) => match l.state {
                        LifecycleState::Started | LifecycleState::Completed => {
                            ctx.delivered(std::slice::from_ref(&l.command_uuid));
                        }
                        LifecycleState::Cancelled => ctx.withdrawn(&l.command_uuid),
                        _ => {}
                    },
                    _ => {}
                }
                for ev in tr.frame(&frame) {
                    emit(io, ev).await;
                }
                timing::record(read_at, parsed_at, &frame);
                if let Frame::System(System::Init(i)) = &frame
                    && let Some(why) = unavailable_required(ctx.mcp, &i.mcp_servers)
                {
                    return end(TurnEnd::McpRequired(why), interrupted, denied, None);
                }
                if let Frame::Result(r) = frame {
                    for h in aborts.into_values() {
                        h.abort();
                    }
                    let value = serde_json::from_slice(&raw).ok();
                    return end(TurnEnd::Result(r), interrupted, denied, value);
                }
            }
        }
    }
}

/// The required servers of `mcp` whose `system/init` status is not `connected`, as a sentence; `None`
/// when every required server connected.
pub fn unavailable_required(mcp: &[McpServer], statuses: &[Value]) -> Option<String> {
    let missing: Vec<String> = mcp
        .iter()
        .filter(|s| s.required)
        .filter_map(|s| {
            let status = statuses
                .iter()
                .find(|v| v["name"] == s.name.as_str())
                .and_then(|v| v["status"].as_str())
                .unwrap_or("absent");
            (status != "connected").then(|| format!("{} ({status})", s.name))
        })
        .collect();
    (!missing.is_empty()).then(|| format!("required MCP server not connected: {}", missing.join(", ")))
}

async fn emit(io: &RunIo, ev: DriverEvent) {
    io.events.emit(ev).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_required_servers_that_did_not_connect_are_named() {
        let mut a = McpServer::sse("a", "http://127.0.0.1:1/sse");
        a.required = true;
        let mut b = McpServer::stdio("b", "node", vec![]);
        b.required = true;
        let c = McpServer::http("c", "http://127.0.0.1:2/mcp");
        let ok = serde_json::json!([{"name": "a", "status": "connected"}, {"name": "b", "status": "connected"},
            {"name": "c", "status": "failed"}]);
        assert_eq!(
            unavailable_required(&[a.clone(), b.clone(), c.clone()], ok.as_array().unwrap()),
            None
        );
        let bad =
            serde_json::json!([{"name": "a", "status": "failed"}, {"name": "c", "status": "connected"}]);
        assert_eq!(
            unavailable_required(&[a, b, c], bad.as_array().unwrap()).as_deref(),
            Some("required MCP server not connected: a (failed), b (absent)")
        );
    }
}
