//! `POST /v1/agents/{agent}/agui` (and `POST /v1/agui` for the default agent): RunAgentInput in, a
//! `text/event-stream` of AG-UI events out, translated from the runtime's events by [`Translator`].
//!
//! The thread key comes from `threadId` ([`thread_key`], tenant-scoped by the store); the prompt is the last
//! user message, or — when the last message is a `tool` message — the frontend tool's result. Validation
//! failures before streaming are plain JSON errors (the client reports `HTTP <status>: <body>`); once
//! streaming, failures are `RUN_ERROR`. A closed connection (client abort) cancels the run. A run already
//! active on the thread is refused with `409 thread_busy`, or (per the agent's busy policy) the user
//! message is delivered to it as a supplemental message and the new AG-UI run finishes at once.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::Response;
use axum::response::sse::Event as SseEvent;
use tokio::sync::mpsc;

use super::AppState;
use super::body::parse;
use super::config::BusyPolicy;
use super::error::ApiError;
use super::runs::StartRun;
use super::sse;
use crate::agui::{AguiEvent, RunAgentInput, Translator, thread_key};
use crate::runtime::{CallOptions, MessageOptions};

/// `POST /v1/agents/{agent}/agui`.
#[utoipa::path(post, path = "/v1/agents/{agent}/agui", tag = "agui", params(("agent" = String, Path, description = "The agent name")), request_body(content = Object, content_type = "application/json", description = "An AG-UI RunAgentInput (threadId, runId, messages, tools, ...)"), responses((status = 200, description = "AG-UI events, one JSON event per SSE `data:` frame (RUN_STARTED ... RUN_FINISHED or RUN_ERROR)", content_type = "text/event-stream", body = String), (status = 400, description = "invalid_json", body = crate::server::views::ErrorBody), (status = 404, description = "Unknown agent, run or thread", body = crate::server::views::ErrorBody), (status = 409, description = "thread_busy: a run is active on the thread", body = crate::server::views::ErrorBody), (status = 422, description = "invalid_request: no user message", body = crate::server::views::ErrorBody), (status = 503, description = "shutting_down", body = crate::server::views::ErrorBody)))]
pub async fn named(
    State(state): State<Arc<AppState>>,
    Path(agent): Path<String>,
    body: Bytes,
) -> Result<Response, ApiError> {
    run(state, &agent, &body).await
}

/// `POST /v1/agui`: the default agent.
#[utoipa::path(post, path = "/v1/agui", tag = "agui", request_body(content = Object, content_type = "application/json", description = "An AG-UI RunAgentInput, for the default agent"), responses((status = 200, description = "AG-UI events over SSE", content_type = "text/event-stream", body = String), (status = 400, description = "invalid_json", body = crate::server::views::ErrorBody), (status = 404, description = "No agent is configured", body = crate::server::views::ErrorBody), (status = 409, description = "thread_busy", body = crate::server::views::ErrorBody), (status = 422, description = "invalid_request", body = crate::server::views::ErrorBody), (status = 503, description = "shutting_down", body = crate::server::views::ErrorBody)))]
pub async fn default_agent(State(state): State<Arc<AppState>>, body: Bytes) -> Result<Response, ApiError> {
    let name = state
        .agents
        .default_agent()
        .map(|a| a.name.clone())
        .ok_or_else(|| ApiError::not_found("no agent is configured"))?;
    run(state, &name, &body).await
}

fn data(ev: &AguiEvent) -> SseEvent {
    SseEvent::default().data(serde_json::to_string(ev).unwrap_or_default())
}

async fn run(state: Arc<AppState>, agent_name: &str, body: &[u8]) -> Result<Response, ApiError> {
    if state.shutdown.is_cancelled() {
        return Err(ApiError::shutting_down());
    }
    let input: RunAgentInput = parse(body)?;
    let agent = state
        .agents
        .get(agent_name)
        .ok_or_else(|| ApiError::not_found(format!("no agent named {agent_name:?}")))?;
    let prompt = match input.tool_result() {
        Some((call, content)) => format!("The result of tool call {call}: {content}"),
        None => input
            .prompt()
            .ok_or_else(|| ApiError::invalid("messages", "no user message with text"))?,
    };
    let tenant = crate::runtime::DEFAULT_TENANT;
    let key = (!input.thread_id.is_empty()).then(|| thread_key(&input.thread_id));
    let run_id = if input.run_id.is_empty() {
        format!("agui-{}", uuid::Uuid::now_v7())
    } else {
        input.run_id.clone()
    };
    let (out_tx, out_rx) = mpsc::channel::<SseEvent>(256);
    let mut translator = Translator::new(input.thread_id.clone(), run_id);

    if let Some(k) = &key
        && state.config.busy_policy == BusyPolicy::Supplement
        && let Some(active) = state.runs.active_on(tenant, &agent.name, k)
    {
        let mut opts = MessageOptions::new();
        if let Some(id) = input.last_user_id() {
            opts = opts.id(id);
        }
        active
            .stream
            .send(prompt, opts)
            .await
            .map_err(|e| ApiError::message(&e))?;
        let mut events = translator.start();
        events.extend(translator.finish(&Ok(Default::default()), None));
        for e in &events {
            let _ = out_tx.send(data(e)).await;
        }
        drop(out_tx);
        return Ok(sse::response(out_rx, state.config.keep_alive));
    }

    let (tap_tx, mut tap_rx) = mpsc::unbounded_channel();
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
                tap: Some(tap_tx),
            },
        )
        .await?;
    let shutdown = state.shutdown.clone();
    tokio::spawn(async move {
        let mut stopping = false;
        for e in translator.start() {
            if out_tx.send(data(&e)).await.is_err() {
                entry.stream.cancel();
                return;
            }
        }
        loop {
            tokio::select! {
                ev = tap_rx.recv() => {
                    let Some(ev) = ev else { break };
                    for a in translator.event(&ev) {
                        if out_tx.send(data(&a)).await.is_err() {
                            entry.stream.cancel();
                            return;
                        }
                    }
                    if translator.is_finished() {
                        return;
                    }
                }
                () = out_tx.closed() => {
                    entry.stream.cancel();
                    return;
                }
                () = shutdown.cancelled(), if !stopping => {
                    stopping = true;
                    entry.stream.cancel();
                }
            }
        }
        if !translator.is_finished() {
            for a in translator.error("internal", "the run ended without a terminal event") {
                let _ = out_tx.send(data(&a)).await;
            }
        }
    });
    Ok(sse::response(out_rx, state.config.keep_alive))
}
