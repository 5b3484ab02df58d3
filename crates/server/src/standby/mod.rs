//! Standby over HTTP: a server-lifetime conversation handle on a thread (the runtime's
//! [`Standby`](crate::runtime::Standby)). Open it, send input (joined to the active execution as a
//! supplemental message, or starting the next one), cancel current processing, follow its events over SSE,
//! and release it.
//!
//! One live Standby per tenant, agent and thread: opening again answers the same one (200). While it lives,
//! REST and AG-UI runs on the thread are refused with 409 `thread_busy`. **Each execution is a run of the
//! registry** (`RunRegistry::adopt`), taken from the runtime's [`Standby::executions`] as it starts: the same
//! pump, exposure and batched recording as a REST run, `done` after the final commit, its approvals
//! answerable at `/v1/runs/{run_id}/approvals/{id}`, its events at `/v1/runs/{run_id}/events` and in the
//! thread's history. The Standby's SSE (`log`) reads its executions' logs in order, with the cursor
//! `<execution>:<seq>`. Releasing it, or shutting the service down, cancels its lifetime: the current
//! execution is cancelled and the thread is free again once its `done` is recorded.

mod log;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::Json;
use axum::extract::State;

use super::extract::{Path, Query};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use self::log::{Part, StandbyLog};
use super::AppState;
use super::agents::AgentEntry;
use super::auth::Tenant;
use super::body::JsonBody;
use super::error::{ApiError, ErrorCode};
use super::limits::RunSlot;
use super::recovery;
use super::rest::{EventsQuery, MessageBody, find_agent};
use super::runs::{LogItem, ThreadClaim};
use super::sse;
use super::threads::check_key;
use super::views::{MessageAccepted, StandbyView};
use crate::recorder::Recorder;
use crate::runtime::{CallOptions, Event, Standby, Stream};
use crate::store::{RunRecord, RunState};

pub use log::{Cursor, STANDBY_PARTS_MAX, parse_cursor};

/// One open Standby.
pub struct StandbyEntry {
    agent: String,
    key: String,
    standby: Standby,
    lifetime: CancellationToken,
    opened_at: DateTime<Utc>,
    /// Its executions and reports, in order.
    log: StandbyLog,
}

impl std::fmt::Debug for StandbyEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StandbyEntry")
            .field("agent", &self.agent)
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

impl StandbyEntry {
    /// The runtime's Standby handle.
    pub fn standby(&self) -> &Standby {
        &self.standby
    }

    fn view(&self) -> StandbyView {
        StandbyView {
            agent: self.agent.clone(),
            key: self.key.clone(),
            live: self.standby.is_live(),
            opened_at: self.opened_at,
            executions: self.log.executions() as u64,
            last_run_id: self.log.last_execution(),
            events_url: format!("/v1/agents/{}/threads/{}/standby/events", self.agent, self.key),
        }
    }
}

/// The open Standbys of this process, by `(tenant, agent, key)`.
#[derive(Debug, Default)]
pub struct Standbys {
    map: Mutex<HashMap<(String, String, String), Arc<StandbyEntry>>>,
}

fn id(tenant: &str, agent: &str, key: &str) -> (String, String, String) {
    (tenant.to_owned(), agent.to_owned(), key.to_owned())
}

impl Standbys {
    /// The live Standby of a thread.
    pub fn get(&self, tenant: &str, agent: &str, key: &str) -> Option<Arc<StandbyEntry>> {
        self.map
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&id(tenant, agent, key))
            .filter(|e| e.standby.is_live())
            .cloned()
    }

    /// True while a live Standby owns the thread.
    pub fn is_live(&self, tenant: &str, agent: &str, key: &str) -> bool {
        self.get(tenant, agent, key).is_some()
    }

    /// Releases every Standby (shutdown).
    pub fn release_all(&self) {
        for e in self.map.lock().unwrap_or_else(|p| p.into_inner()).drain() {
            e.1.lifetime.cancel();
        }
    }
}

/// What an open Standby holds until its last execution is recorded: the tenant's run slot (it holds a
/// worker and its CLI process like a parked run) and its claim on the thread.
type Held = (RunSlot, ThreadClaim);

/// Registers each execution of the Standby as a registry run and its reports as log entries, until the
/// runtime Standby ended; then waits for its last execution's `done` to be recorded, marks the log
/// complete and frees the thread and the slot.
async fn drive(
    state: Arc<AppState>,
    tenant: String,
    entry: Arc<StandbyEntry>,
    mut executions: mpsc::Receiver<Stream>,
    mut reports: mpsc::Receiver<Event>,
    held: Held,
) {
    let recorder = state
        .agents
        .get(&entry.agent)
        .map(|a| Recorder::new(state.store.clone(), tenant.as_str(), &a.name, a.exposure));
    let holding = hold_record(&state, &tenant, &entry).await;
    let mut last = None;
    let (mut more_executions, mut more_reports) = (true, true);
    while more_executions || more_reports {
        tokio::select! {
            stream = executions.recv(), if more_executions => match (stream, state.agents.get(&entry.agent)) {
                (Some(stream), Some(agent)) => {
                    let run = state
                        .runs
                        .adopt(&state.store, &state.config.owner, agent, &tenant, &entry.key, stream)
                        .await;
                    entry.log.push(Part::Execution(run.run_id.clone()));
                    last = Some(run);
                }
                (Some(stream), None) => stream.cancel(),
                (None, _) => more_executions = false,
            },
            got = reports.recv(), if more_reports => match (got, &recorder) {
                (Some(first), Some(recorder)) => {
                    let mut batch = vec![first];
                    while let Ok(e) = reports.try_recv() {
                        batch.push(e);
                    }
                    report(&entry, recorder, &batch).await;
                }
                (Some(_), None) => {}
                (None, _) => more_reports = false,
            },
        }
    }
    if let Some(run) = last {
        let mut progress = run.log.watch();
        while !progress.borrow_and_update().1 {
            if progress.changed().await.is_err() {
                break;
            }
        }
    }
    entry.log.finish();
    drop(held);
    if let Some(id) = holding
        && let Err(e) = state
            .store
            .update_run_state(&id, RunState::Cancelled, None, None)
            .await
    {
        tracing::warn!(key = %entry.key, error = %e, "could not record that the Standby released its thread");
    }
}

/// Records that this process's Standby holds the thread (a run record under
/// [`recovery::STANDBY_RECORD_PREFIX`], `running` while it is open): if the process dies, crash recovery
/// at the next start breaks the Standby's thread lease at once instead of leaving it to its TTL.
async fn hold_record(state: &AppState, tenant: &str, entry: &StandbyEntry) -> Option<String> {
    let now = Utc::now();
    let record = RunRecord {
        run_id: format!("{}{}", recovery::STANDBY_RECORD_PREFIX, uuid::Uuid::now_v7()),
        tenant: tenant.to_owned(),
        agent: entry.agent.clone(),
        thread_key: Some(entry.key.clone()),
        state: RunState::Running,
        owner: state.config.owner.clone(),
        result: None,
        error: None,
        created_at: now,
        updated_at: now,
    };
    match state.store.put_run(&record).await {
        Ok(()) => Some(record.run_id),
        Err(e) => {
            tracing::warn!(key = %entry.key, error = %e, "could not record the Standby's hold on its thread");
            None
        }
    }
}

/// Adds the Standby's own reports (outside any execution) to its log, exposed once, and records them
/// under the entry's id.
async fn report(entry: &StandbyEntry, recorder: &Recorder, events: &[Event]) {
    let id = format!("report-{}", uuid::Uuid::now_v7());
    let mut records = recorder.prepare(events);
    let items = records.iter().map(|r| Arc::new(LogItem::of(r))).collect();
    entry.log.push(Part::Report {
        id: id.clone(),
        items: Arc::new(items),
    });
    for r in &mut records {
        r.run_id.clone_from(&id);
    }
    if let Err(err) = recorder.append(records).await {
        tracing::warn!(key = %entry.key, error = %err, "recording a Standby report failed");
    }
}

fn open_entry(
    state: &Arc<AppState>,
    tenant: &str,
    a: &AgentEntry,
    key: &str,
    held: Held,
) -> Arc<StandbyEntry> {
    let lifetime = state.shutdown.child_token();
    let defaults = CallOptions::new().identity(crate::driver::Identity {
        tenant: tenant.to_owned(),
        ..Default::default()
    });
    let span = super::telemetry::standby_span(&a.name, key, tenant);
    let standby = span.in_scope(|| a.agent.thread(key).standby(lifetime.clone(), defaults));
    // Both before the worker can start an execution: executions are handed over, not forwarded.
    let executions = standby.executions();
    let reports = standby.events();
    let entry = Arc::new(StandbyEntry {
        agent: a.name.clone(),
        key: key.to_owned(),
        standby,
        lifetime,
        opened_at: Utc::now(),
        log: StandbyLog::default(),
    });
    match (executions, reports) {
        (Some(executions), Some(reports)) => {
            let task = drive(
                state.clone(),
                tenant.to_owned(),
                entry.clone(),
                executions,
                reports,
                held,
            );
            tokio::spawn(tracing::Instrument::instrument(task, span));
        }
        // Another host holds this library Standby's consumers: nothing to follow here.
        _ => entry.log.finish(),
    }
    entry
}

/// Admits one more open Standby of `tenant` (`map` is the locked Standby table): `429
/// too_many_standbys` at its `max_standbys`, else one of its `max_concurrent_runs` (`429 too_many_runs`).
fn admit(
    state: &AppState,
    map: &HashMap<(String, String, String), Arc<StandbyEntry>>,
    tenant: &str,
) -> Result<RunSlot, ApiError> {
    if let Some(max) = state.limits.limits_of(tenant).standby_bound() {
        let open = map
            .iter()
            .filter(|((t, _, _), e)| t == tenant && e.standby.is_live())
            .count();
        if open >= max as usize {
            return Err(ApiError::too_many(
                ErrorCode::TooManyStandbys,
                format!("{max} Standby(s) already open for this tenant (max_standbys)"),
                1,
            ));
        }
    }
    state.limits.acquire_run(tenant)
}

fn lookup(state: &AppState, tenant: &str, agent: &str, key: &str) -> Result<Arc<StandbyEntry>, ApiError> {
    find_agent(state, agent)?;
    state
        .standbys
        .get(tenant, agent, key)
        .ok_or_else(|| ApiError::not_found(format!("no Standby on thread {key:?}")))
}

/// `POST /v1/agents/{agent}/threads/{key}/standby`: opens the thread's Standby (201), or answers the live one
/// (200). 409 `thread_busy` while a REST or AG-UI run is active on the thread.
#[utoipa::path(post, path = "/v1/agents/{agent}/threads/{key}/standby", tag = "standby", params(("agent" = String, Path, description = "The agent name"), ("key" = String, Path, description = "The thread key (1 to 512 bytes)")), responses((status = 201, description = "The Standby is open", body = StandbyView), (status = 200, description = "The live Standby of the thread", body = StandbyView), (status = 404, description = "Unknown agent", body = crate::views::ErrorBody), (status = 409, description = "thread_busy: a run is active on the thread", body = crate::views::ErrorBody), (status = 422, description = "invalid_request: bad key", body = crate::views::ErrorBody), (status = 429, description = "too_many_standbys or too_many_runs: the tenant's max_standbys or max_concurrent_runs is reached (an open Standby holds one run slot)", body = crate::views::ErrorBody), (status = 503, description = "shutting_down (draining or stopping) or capacity_exhausted (the replica admits `max_active` runs; `Retry-After: 5`)", body = crate::views::ErrorBody)))]
pub async fn open(
    State(state): State<Arc<AppState>>,
    tenant: Tenant,
    Path((agent, key)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    if state.refuses_runs() {
        return Err(ApiError::shutting_down());
    }
    let a = find_agent(&state, &agent)?;
    check_key("key", &key)?;
    if let Some(live) = state.standbys.get(tenant.as_str(), &agent, &key) {
        return Ok((StatusCode::OK, Json(live.view())).into_response());
    }
    let entry = {
        let mut map = state.standbys.map.lock().unwrap_or_else(|p| p.into_inner());
        let slot = id(tenant.as_str(), &agent, &key);
        match map.get(&slot).filter(|e| e.standby.is_live()) {
            Some(live) => return Ok((StatusCode::OK, Json(live.view())).into_response()),
            None => {
                // The thread first (409 beats 429), in the registry's busy table: atomic with run starts.
                let claim = state.runs.claim_for_standby(tenant.as_str(), &agent, &key)?;
                let held = (admit(&state, &map, tenant.as_str())?, claim);
                let entry = open_entry(&state, tenant.as_str(), a, &key, held);
                map.insert(slot, entry.clone());
                entry
            }
        }
    };
    Ok((StatusCode::CREATED, Json(entry.view())).into_response())
}

/// `GET /v1/agents/{agent}/threads/{key}/standby`: the live Standby.
#[utoipa::path(get, path = "/v1/agents/{agent}/threads/{key}/standby", tag = "standby", params(("agent" = String, Path, description = "The agent name"), ("key" = String, Path, description = "The thread key")), responses((status = 200, description = "The live Standby", body = StandbyView), (status = 404, description = "Unknown agent, or no Standby on the thread", body = crate::views::ErrorBody)))]
pub async fn get(
    State(state): State<Arc<AppState>>,
    tenant: Tenant,
    Path((agent, key)): Path<(String, String)>,
) -> Result<Json<StandbyView>, ApiError> {
    Ok(Json(lookup(&state, tenant.as_str(), &agent, &key)?.view()))
}

/// `DELETE /v1/agents/{agent}/threads/{key}/standby`: releases the Standby (its current execution is
/// cancelled, queued input dropped) and frees the thread.
#[utoipa::path(delete, path = "/v1/agents/{agent}/threads/{key}/standby", tag = "standby", params(("agent" = String, Path, description = "The agent name"), ("key" = String, Path, description = "The thread key")), responses((status = 200, description = "Released (`live: false`)", body = StandbyView), (status = 404, description = "Unknown agent, or no Standby on the thread", body = crate::views::ErrorBody)))]
pub async fn release(
    State(state): State<Arc<AppState>>,
    tenant: Tenant,
    Path((agent, key)): Path<(String, String)>,
) -> Result<Json<StandbyView>, ApiError> {
    let entry = lookup(&state, tenant.as_str(), &agent, &key)?;
    state
        .standbys
        .map
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .remove(&id(tenant.as_str(), &agent, &key));
    entry.lifetime.cancel();
    Ok(Json(entry.view()))
}

/// `POST /v1/agents/{agent}/threads/{key}/standby/messages`: input for the Standby. 202 means admission
/// (joined to the active execution, or starting the next one), not delivery.
#[utoipa::path(post, path = "/v1/agents/{agent}/threads/{key}/standby/messages", tag = "standby", params(("agent" = String, Path, description = "The agent name"), ("key" = String, Path, description = "The thread key")), request_body = MessageBody, responses((status = 202, description = "The input is admitted", body = MessageAccepted), (status = 400, description = "invalid_json", body = crate::views::ErrorBody), (status = 404, description = "Unknown agent, or no Standby on the thread", body = crate::views::ErrorBody), (status = 409, description = "run_finished: the Standby closed meanwhile", body = crate::views::ErrorBody), (status = 413, description = "message_too_large", body = crate::views::ErrorBody), (status = 422, description = "invalid_request or message_unsupported", body = crate::views::ErrorBody)))]
pub async fn send(
    State(state): State<Arc<AppState>>,
    tenant: Tenant,
    Path((agent, key)): Path<(String, String)>,
    JsonBody(body): JsonBody<MessageBody>,
) -> Result<Response, ApiError> {
    if body.text.trim().is_empty() {
        return Err(ApiError::invalid("text", "the message is empty"));
    }
    let entry = lookup(&state, tenant.as_str(), &agent, &key)?;
    let mut opts = CallOptions::new();
    if let Some(id) = &body.id {
        opts = opts.message_id(id);
    }
    if let Some(t) = body.timing {
        opts = opts.when(t);
    }
    let message_id = entry
        .standby
        .send(&body.text, opts)
        .await
        .map_err(|e| ApiError::message(&e))?;
    Ok((
        StatusCode::ACCEPTED,
        Json(MessageAccepted {
            message_id,
            run_id: None,
        }),
    )
        .into_response())
}

/// `POST /v1/agents/{agent}/threads/{key}/standby/cancel`: cancels current processing and drops queued
/// input; the Standby stays open.
#[utoipa::path(post, path = "/v1/agents/{agent}/threads/{key}/standby/cancel", tag = "standby", params(("agent" = String, Path, description = "The agent name"), ("key" = String, Path, description = "The thread key")), responses((status = 202, description = "Cancellation requested", body = StandbyView), (status = 404, description = "Unknown agent, or no Standby on the thread", body = crate::views::ErrorBody)))]
pub async fn cancel(
    State(state): State<Arc<AppState>>,
    tenant: Tenant,
    Path((agent, key)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    let entry = lookup(&state, tenant.as_str(), &agent, &key)?;
    entry.standby.cancel();
    Ok((StatusCode::ACCEPTED, Json(entry.view())).into_response())
}

/// `GET /v1/agents/{agent}/threads/{key}/standby/events`: SSE of every execution's events, in order; `id:`
/// is the cursor `<execution>:<seq>` (the execution's run id and its own sequence, exactly as
/// `/v1/runs/{run_id}/events` numbers it); `Last-Event-ID` / `?after=` resume after that event across the
/// Standby's executions; ends when the Standby is released and its last execution is recorded.
#[utoipa::path(get, path = "/v1/agents/{agent}/threads/{key}/standby/events", tag = "standby", params(("agent" = String, Path, description = "The agent name"), ("key" = String, Path, description = "The thread key"), ("after" = Option<String>, Query, pattern = "^[!-9;-~]{1,512}:[0-9]{1,20}$", description = "Resume after this Standby event: its cursor `<execution>:<seq>` (an `id:` of this stream: the execution's run id, a colon, its decimal sequence); anything else 422 `invalid_request`"), ("Last-Event-ID" = Option<String>, Header, pattern = "^([!-9;-~]{1,512}:[0-9]{1,20})?$", description = "Resume after this cursor (wins over `after`); empty is as if absent; anything else (a bare number, a sign, a space, non-ASCII bytes) 422 `invalid_request`")), responses((status = 200, description = "The Standby's events: `id:` `<execution>:<seq>`, `event:` kind, `data:` the exposed event JSON (the same as the run's own events route). Frames without `id:`: `gap` (`unknown_cursor`: the cursor names no execution this Standby lists, the stream starts from its oldest; `gap`/`execution_unavailable`: events that cannot be sent), `lag` (the client fell behind the live window; the missed events follow from the durable log), `error`, `shutdown`", content_type = "text/event-stream", body = String), (status = 404, description = "Unknown agent, or no Standby on the thread", body = crate::views::ErrorBody), (status = 422, description = "invalid_request: a malformed cursor", body = crate::views::ErrorBody)))]
pub async fn events(
    State(state): State<Arc<AppState>>,
    tenant: Tenant,
    Path((agent, key)): Path<(String, String)>,
    headers: HeaderMap,
    Query(query): Query<EventsQuery>,
) -> Result<Response, ApiError> {
    let cursor = log::cursor_of(&headers, &query)?;
    let entry = lookup(&state, tenant.as_str(), &agent, &key)?;
    let keep_alive = state.config.keep_alive;
    let gauge = sse::SubscriberGauge::open(state.runs.clone());
    let frames = log::follow(state, tenant, entry, cursor, gauge);
    Ok(sse::stream_response(frames, keep_alive))
}
