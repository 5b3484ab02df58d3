//! Continuing a parked run: the AG-UI request that follows an interrupt (or a decision tool call left
//! to the client) answers the run's open approval requests and streams the rest of the same execution.
//!
//! Answers come as `resume[]` entries (interrupt id = approval request id; `status: cancelled` denies)
//! or, without `resume`, as the trailing `tool` messages for the decision tool calls (`dec-<id>`). Every
//! open request must be answered at once; answering one that is already resolved is a no-op (resume is
//! idempotent). Each answer is recorded on the durable approval row first (compare-and-set, as the
//! approval POST does), then delivered to the live request. A refusal is a `RUN_STARTED` + `RUN_ERROR`
//! stream and leaves the run parked for a corrected request.

use std::sync::Arc;

use axum::response::Response;
use axum::response::sse::Event as SseEvent;
use chrono::Utc;
use tokio::sync::mpsc;

use super::forward::Forward;
use super::refused;
use super::tail::LogTail;
use crate::AppState;
use crate::runs::RunEntry;
use crate::runtime::{ApprovalError, ApprovalRequest};
use crate::sse;
use crate::store::StoreError;
use agent_adaptor_core::agui::interrupts::{Answer, answer_from, request_of_call, tool_payload};
use agent_adaptor_core::agui::{ApprovalMode, RunAgentInput, Translator};

/// Why a resume is refused: `(RUN_ERROR code, message)`.
type Refusal = (&'static str, String);

/// One answer to deliver.
struct Planned {
    req: ApprovalRequest,
    /// `None` when the request was resolved already (an idempotent repeat).
    answer: Option<Answer>,
    /// True when the answer came as `resume[]`: the decision tool call's result is then streamed
    /// (a `tool` message answer is the client's own result and is not echoed).
    show_result: bool,
}

fn expired(req: &ApprovalRequest) -> bool {
    req.deadline.is_some_and(|d| d <= Utc::now())
}

/// What this request answers, checked completely before anything is delivered.
fn plan(entry: &RunEntry, input: &RunAgentInput) -> Result<Vec<Planned>, Refusal> {
    let pending = entry.pending_approvals();
    let mut plan = Vec::new();
    if !input.resume.is_empty() {
        for r in &input.resume {
            let Some(req) = entry.approval(&r.interrupt_id) else {
                return Err((
                    "unknown_interrupt",
                    format!("no interrupt {:?} is open on this thread", r.interrupt_id),
                ));
            };
            if expired(&req) {
                return Err((
                    "interrupt_expired",
                    format!("interrupt {:?} expired", r.interrupt_id),
                ));
            }
            let cancelled = match r.status.as_str() {
                "resolved" => false,
                "cancelled" => true,
                other => {
                    return Err((
                        "invalid_resume",
                        format!("resume status {other:?}: expected \"resolved\" or \"cancelled\""),
                    ));
                }
            };
            let answer = if req.is_pending() {
                Some(
                    answer_from(&req, cancelled, r.payload.as_ref())
                        .map_err(|e| ("invalid_resume", e.to_string()))?,
                )
            } else {
                None
            };
            plan.push(Planned {
                req,
                answer,
                show_result: true,
            });
        }
    } else {
        for (call, content) in input.trailing_tool_results() {
            let Some(id) = request_of_call(&call) else {
                continue;
            };
            let Some(req) = entry.approval(id) else {
                return Err((
                    "unknown_interrupt",
                    format!("no decision {call:?} is open on this thread"),
                ));
            };
            let answer = if req.is_pending() {
                Some(
                    answer_from(&req, false, Some(&tool_payload(&content)))
                        .map_err(|e| ("invalid_resume", e.to_string()))?,
                )
            } else {
                None
            };
            plan.push(Planned {
                req,
                answer,
                show_result: false,
            });
        }
        if plan.is_empty() {
            let ids: Vec<&str> = pending.iter().map(|r| r.id.as_str()).collect();
            return Err((
                "interrupt_pending",
                format!(
                    "the run on this thread waits for {} answer(s) ({}): send them as `resume` (or as tool messages for the decision tool calls)",
                    ids.len(),
                    ids.join(", ")
                ),
            ));
        }
    }
    let missing: Vec<&str> = pending
        .iter()
        .filter(|p| !plan.iter().any(|x| x.req.id == p.id))
        .map(|p| p.id.as_str())
        .collect();
    if !missing.is_empty() {
        return Err((
            "interrupt_unanswered",
            format!(
                "every open interrupt must be answered at once; missing: {}",
                missing.join(", ")
            ),
        ));
    }
    Ok(plan)
}

/// Records and delivers one answer; a request resolved meanwhile (e.g. over the approval POST) is
/// a no-op.
async fn deliver(
    state: &AppState,
    entry: &RunEntry,
    req: &ApprovalRequest,
    answer: &Answer,
) -> Result<(), Refusal> {
    match state
        .store
        .resolve_approval(&entry.tenant, &req.id, answer.to_json())
        .await
    {
        Ok(_) | Err(StoreError::NotFound) => {}
        Err(StoreError::AlreadyResolved { .. }) => return Ok(()),
        Err(StoreError::Expired { .. }) => {
            return Err(("interrupt_expired", format!("interrupt {:?} expired", req.id)));
        }
        Err(e) => {
            let id = crate::error::log_internal_error("an interrupt's answer could not be stored", &e);
            return Err((
                "store_unavailable",
                format!("the answer could not be stored; retry (error id {id})"),
            ));
        }
    }
    let delivered = match answer {
        Answer::Approve => req.approve(),
        Answer::Deny(reason) => req.deny(reason.clone()),
        Answer::Answer(a) => req.answer(a.clone()),
    };
    match delivered {
        Ok(()) | Err(ApprovalError::Resolved) => Ok(()),
        Err(ApprovalError::Expired) => Err(("interrupt_expired", format!("interrupt {:?} expired", req.id))),
        Err(e) => Err(("invalid_resume", e.to_string())),
    }
}

/// Answers the parked run `entry` from `input` and streams the rest of it as AG-UI run `run_id`.
pub(super) async fn continue_parked(
    state: &Arc<AppState>,
    entry: Arc<RunEntry>,
    input: &RunAgentInput,
    run_id: String,
    mode: ApprovalMode,
) -> Response {
    let keep_alive = state.config.keep_alive;
    // Ids come from the execution's run id and event sequences: no collision with the paused part.
    let mut translator = Translator::new(input.thread_id.clone(), run_id);
    let Some(index) = entry.unpark() else {
        return refused(
            translator,
            "thread_busy",
            "another request is resuming the run on this thread",
            keep_alive,
        );
    };
    let planned = match plan(&entry, input) {
        Ok(p) => p,
        Err((code, message)) => {
            entry.park(index);
            return refused(translator, code, &message, keep_alive);
        }
    };
    for p in &planned {
        if let Some(answer) = &p.answer
            && let Err((code, message)) = deliver(state, &entry, &p.req, answer).await
        {
            entry.park(index);
            return refused(translator, code, &message, keep_alive);
        }
        if p.show_result {
            translator.expect_decision(&p.req.id, p.answer.as_ref().map(Answer::to_json));
        }
    }
    let (out, rx) = mpsc::channel::<SseEvent>(256);
    tokio::spawn(
        Forward {
            tap: LogTail::new(entry.clone(), index),
            entry,
            translator,
            mode,
            out,
            shutdown: state.shutdown.clone(),
        }
        .run(),
    );
    sse::response(rx, keep_alive)
}
