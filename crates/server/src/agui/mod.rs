//! `POST /v1/agents/{agent}/agui` (and `POST /v1/agui` for the default agent): RunAgentInput in, a
//! `text/event-stream` of AG-UI events out: the run's exposed log (the records REST SSE sends, redacted
//! once by the run's pump) translated by [`Translator`], so AG-UI shows nothing REST hides.
//!
//! The thread key comes from `threadId` ([`thread_key`], tenant-scoped by the store); the prompt is the last
//! user message, or — when the last message is a `tool` message — the frontend tool's result. Validation
//! failures before streaming are plain JSON errors (the client reports `HTTP <status>: <body>`); once
//! streaming, failures are `RUN_ERROR`. A closed connection (client abort) cancels the run. A run already
//! active on the thread — or a Standby owning it — is refused with `409 thread_busy`, or (per the busy
//! policy) the user message is delivered to it as a supplemental message (to a Standby: as its input) and
//! the new AG-UI run finishes at once.
//!
//! Approvals follow the run's [`ApprovalMode`] (see [`agent_adaptor_core::agui::interrupts`]): in the interrupt and
//! tool modes the AG-UI run ends while the execution waits ("parked" in the run registry with its log
//! position); the next AG-UI request on the thread answers it (`resume[]`, or `tool` messages for the
//! decision tool calls) and streams the rest of the same execution ([`resume`]). A request on a thread
//! with a parked run that answers nothing gets `RUN_ERROR` (`interrupt_pending`), as do answers to
//! interrupts that are no longer open (`interrupt_expired`, `unknown_interrupt`).

mod forward;
mod resume;
mod tail;

use std::sync::Arc;

use axum::extract::State;
use axum::response::Response;
use axum::response::sse::Event as SseEvent;
use tokio::sync::mpsc;

use self::forward::Forward;

use super::AppState;
use super::auth::Tenant;
use super::body::parse;
use super::config::BusyPolicy;
use super::error::{ApiError, ErrorCode};
use super::extract::{Path, RawBody};
use super::runs::StartRun;
use super::sse;
use crate::runtime::{CallOptions, MessageErrorKind};
use agent_adaptor_core::agui::interrupts::request_of_call;
use agent_adaptor_core::agui::{AguiEvent, RunAgentInput, Translator, thread_key};

/// `POST /v1/agents/{agent}/agui`.
#[utoipa::path(post, path = "/v1/agents/{agent}/agui", tag = "agui", params(("agent" = String, Path, description = "The agent name")), request_body(content = Object, content_type = "application/json", description = "An AG-UI RunAgentInput (threadId, runId, messages, tools, resume, ...); `forwardedProps.approvals` = `stream` | `interrupt` | `tool` picks how approvals end the AG-UI run (default: `interrupt` when `protocolVersion` is sent, else `stream`)"), responses((status = 200, description = "AG-UI events, one JSON event per SSE `data:` frame (RUN_STARTED ... RUN_FINISHED, with an interrupt outcome when the run parks, or RUN_ERROR)", content_type = "text/event-stream", body = String), (status = 400, description = "invalid_json", body = crate::views::ErrorBody), (status = 402, description = "budget_exceeded: a budget of the tenant, agent or thread is spent (`[[budgets]]`)", body = crate::views::ErrorBody), (status = 404, description = "Unknown agent, run or thread", body = crate::views::ErrorBody), (status = 409, description = "thread_busy: a run is active on the thread", body = crate::views::ErrorBody), (status = 422, description = "invalid_request: no user message, or an unknown `forwardedProps.approvals` mode", body = crate::views::ErrorBody), (status = 503, description = "shutting_down (draining or stopping) or capacity_exhausted (the replica admits `max_active` runs; `Retry-After: 5`)", body = crate::views::ErrorBody)))]
pub async fn named(
    State(state): State<Arc<AppState>>,
    tenant: Tenant,
    Path(agent): Path<String>,
    RawBody(body): RawBody,
) -> Result<Response, ApiError> {
    run(state, &tenant, &agent, &body).await
}

/// `POST /v1/agui`: the default agent.
#[utoipa::path(post, path = "/v1/agui", tag = "agui", request_body(content = Object, content_type = "application/json", description = "An AG-UI RunAgentInput, for the default agent (see `POST /v1/agents/{agent}/agui`)"), responses((status = 200, description = "AG-UI events over SSE", content_type = "text/event-stream", body = String), (status = 400, description = "invalid_json", body = crate::views::ErrorBody), (status = 402, description = "budget_exceeded: a budget of the tenant, agent or thread is spent (`[[budgets]]`)", body = crate::views::ErrorBody), (status = 404, description = "No agent is configured", body = crate::views::ErrorBody), (status = 409, description = "thread_busy", body = crate::views::ErrorBody), (status = 422, description = "invalid_request", body = crate::views::ErrorBody), (status = 503, description = "shutting_down (draining or stopping) or capacity_exhausted (the replica admits `max_active` runs; `Retry-After: 5`)", body = crate::views::ErrorBody)))]
pub async fn default_agent(
    State(state): State<Arc<AppState>>,
    tenant: Tenant,
    RawBody(body): RawBody,
) -> Result<Response, ApiError> {
    let name = state
        .agents
        .default_agent()
        .map(|a| a.name.clone())
        .ok_or_else(|| ApiError::not_found("no agent is configured"))?;
    run(state, &tenant, &name, &body).await
}

fn data(ev: &AguiEvent) -> SseEvent {
    SseEvent::default().data(serde_json::to_string(ev).unwrap_or_default())
}

/// A whole AG-UI run that is refused once streaming: `RUN_STARTED`, then `RUN_ERROR` with `code`.
fn refused(
    mut translator: Translator,
    code: &str,
    message: &str,
    keep_alive: std::time::Duration,
) -> Response {
    let events = translator.error(code, message);
    let (tx, rx) = mpsc::channel::<SseEvent>(events.len().max(1));
    for e in &events {
        let _ = tx.try_send(data(e));
    }
    sse::response(rx, keep_alive)
}

/// An AG-UI run whose user message went to a run (or Standby) already on the thread: `RUN_STARTED` then
/// `RUN_FINISHED` at once.
async fn finished_at_once(
    mut translator: Translator,
    out_tx: mpsc::Sender<SseEvent>,
    out_rx: mpsc::Receiver<SseEvent>,
    keep_alive: std::time::Duration,
) -> Response {
    let mut events = translator.start();
    events.extend(translator.finish(&Ok(Default::default()), None));
    for e in &events {
        let _ = out_tx.send(data(e)).await;
    }
    drop(out_tx);
    sse::response(out_rx, keep_alive)
}

async fn run(
    state: Arc<AppState>,
    tenant: &Tenant,
    agent_name: &str,
    body: &[u8],
) -> Result<Response, ApiError> {
    if state.refuses_runs() {
        return Err(ApiError::shutting_down());
    }
    let input: RunAgentInput = parse(body)?;
    let agent = state
        .agents
        .get(agent_name)
        .ok_or_else(|| ApiError::not_found(format!("no agent named {agent_name:?}")))?;
    let mode = input
        .approval_mode()
        .map_err(|m| ApiError::invalid("forwardedProps.approvals", m))?;
    let tenant = tenant.as_str();
    // The same identifier rule as every REST route: 1 to 512 bytes, no NUL (422 naming the field).
    for (field, id) in [("threadId", &input.thread_id), ("runId", &input.run_id)] {
        if !id.is_empty() {
            crate::extract::check_id(field, id)?;
        }
    }
    let key = (!input.thread_id.is_empty()).then(|| thread_key(&input.thread_id));
    let run_id = if input.run_id.is_empty() {
        format!("agui-{}", uuid::Uuid::now_v7())
    } else {
        input.run_id.clone()
    };
    let keep_alive = state.config.keep_alive;

    // A run parked at an interrupt on this thread: this request answers it, or is refused.
    if let Some(k) = &key
        && let Some(active) = state.runs.active_on(tenant, &agent.name, k)
        && active.is_parked()
    {
        return Ok(resume::continue_parked(&state, active, &input, run_id, mode).await);
    }
    let translator = Translator::new(input.thread_id.clone(), run_id);
    let answers_something = !input.resume.is_empty()
        || input
            .trailing_tool_results()
            .iter()
            .any(|(call, _)| request_of_call(call).is_some());
    if answers_something {
        return Ok(refused(
            translator,
            "interrupt_expired",
            "no run on this thread waits for an answer: the interrupt expired or its run already ended",
            keep_alive,
        ));
    }
    let prompt = agent_adaptor_core::agui::input_text(&input)
        .ok_or_else(|| ApiError::invalid("messages", "no user message with text"))?;
    let (out_tx, out_rx) = mpsc::channel::<SseEvent>(256);

    // A Standby owns the thread: the busy policy applies to it as to an active run.
    if let Some(k) = &key
        && let Some(standby) = state.standbys.get(tenant, &agent.name, k)
    {
        if state.config.busy_policy == BusyPolicy::Refuse {
            return Err(ApiError::new(
                ErrorCode::ThreadBusy,
                "a Standby owns this thread: send through its standby route",
            ));
        }
        let mut opts = CallOptions::new();
        if let Some(id) = input.last_user_id() {
            opts = opts.message_id(id);
        }
        standby
            .standby()
            .send(&prompt, opts)
            .await
            .map_err(|e| ApiError::message(&e))?;
        return Ok(finished_at_once(translator, out_tx, out_rx, keep_alive).await);
    }

    // An execution active on the thread (the library's AG-UI run registry tracks every run on a thread):
    // the busy policy supplements it with the user message (latest user id, human author, `Soon`).
    if let Some(k) = &key
        && state.config.busy_policy == BusyPolicy::Supplement
    {
        match state.runs.agui(tenant, &agent.name).send_active(k, &input).await {
            Ok(_) => return Ok(finished_at_once(translator, out_tx, out_rx, keep_alive).await),
            Err(e) if e.kind == MessageErrorKind::RunFinished => {}
            Err(e) => return Err(ApiError::message(&e)),
        }
    }

    let slot = state.limits.acquire_run(tenant)?;
    let entry = state
        .runs
        .start(
            &state.store,
            &state.config.owner,
            StartRun {
                agent,
                tenant,
                thread_key: key,
                fork_of: None,
                prompt,
                options: CallOptions::new(),
                slot: Some(slot),
                agui: Some(&input),
            },
        )
        .await?;
    tokio::spawn(
        Forward {
            tap: tail::LogTail::new(entry.clone(), 0),
            entry,
            translator,
            mode,
            out: out_tx,
            shutdown: state.shutdown.clone(),
        }
        .run(),
    );
    Ok(sse::response(out_rx, keep_alive))
}
