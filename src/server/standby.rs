//! Standby over HTTP: a server-lifetime conversation handle on a thread (the runtime's
//! [`Standby`](crate::runtime::Standby)). Open it, send input (joined to the active execution as a
//! supplemental message, or starting the next one), cancel current processing, follow its events over SSE,
//! and release it.
//!
//! One live Standby per tenant, agent and thread: opening again answers the same one (200). While it lives,
//! REST and AG-UI runs on the thread are refused with 409 `thread_busy`. Its events (every execution, each
//! `run_started` … `done`) are recorded through the recorder like a run's (so they are in the thread's
//! history) and kept in memory for SSE, where `id:` counts the Standby's events (executions restart their
//! own sequence, so the sequence cannot be the cursor). Releasing it, or shutting the service down, cancels
//! its lifetime: the current execution is cancelled and the thread is free again.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use axum::Json;
use axum::extract::State;

use super::extract::{Path, Query};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::AppState;
use super::agents::AgentEntry;
use super::auth::Tenant;
use super::body::JsonBody;
use super::error::ApiError;
use super::limits::RunSlot;
use super::rest::{EventsQuery, MessageBody, cursor, find_agent};
use super::runs::{LogItem, ThreadClaim};
use super::sse::{self, EventLog};
use super::threads::check_key;
use super::views::{MessageAccepted, StandbyView};
use crate::recorder::{Recorder, expose};
use crate::runtime::{CallOptions, Standby};

/// How many events a Standby keeps in memory for SSE replay (older ones are in the thread history).
pub const STANDBY_LOG_MAX: usize = 10_000;

/// One open Standby.
pub struct StandbyEntry {
    agent: String,
    key: String,
    standby: Standby,
    lifetime: CancellationToken,
    opened_at: DateTime<Utc>,
    /// `(first id kept, items)`.
    log: RwLock<(u64, Vec<Arc<LogItem>>)>,
    progress: watch::Sender<(usize, bool)>,
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
        let log = self.log.read().unwrap_or_else(|p| p.into_inner());
        StandbyView {
            agent: self.agent.clone(),
            key: self.key.clone(),
            live: self.standby.is_live(),
            opened_at: self.opened_at,
            events: log.1.last().map(|i| i.seq).unwrap_or(0),
            events_url: format!("/v1/agents/{}/threads/{}/standby/events", self.agent, self.key),
        }
    }

    fn push(&self, item: LogItem) {
        {
            let mut log = self.log.write().unwrap_or_else(|p| p.into_inner());
            log.1.push(Arc::new(item));
            if log.1.len() > STANDBY_LOG_MAX {
                let drop = log.1.len() - STANDBY_LOG_MAX;
                log.1.drain(..drop);
                log.0 += drop as u64;
            }
        }
        // The counter is the number of events ever pushed (a trimmed log keeps growing it), so followers
        // see every push and re-read from their own cursor.
        self.progress.send_modify(|p| p.0 += 1);
    }
}

impl EventLog for StandbyEntry {
    fn progress(&self) -> watch::Receiver<(usize, bool)> {
        self.progress.subscribe()
    }

    fn items(&self, _from: usize, after: u64) -> Vec<Arc<LogItem>> {
        // Ids are dense from 1: the item with id `after + 1` sits at `after - first`.
        let log = self.log.read().unwrap_or_else(|p| p.into_inner());
        let start = after.saturating_sub(log.0) as usize;
        log.1.get(start..).unwrap_or_default().to_vec()
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

/// Forwards the Standby's events into the recorder and the in-memory log until it is released.
///
/// `_held` is the tenant's run slot the Standby holds while it is open (it holds a worker and its
/// CLI process like a parked run) and its claim on the thread: both freed when the pump ends.
async fn pump(
    entry: Arc<StandbyEntry>,
    mut events: mpsc::Receiver<crate::runtime::Event>,
    recorder: Recorder,
    _held: (RunSlot, ThreadClaim),
) {
    let policy = *recorder.policy();
    let mut next = 1u64;
    let forward = |e: crate::runtime::Event, next: &mut u64| {
        entry.push(LogItem {
            seq: *next,
            kind: e.payload.type_name().to_owned(),
            data: expose(&e, &policy).to_string(),
            notice: false,
        });
        *next += 1;
        e
    };
    loop {
        tokio::select! {
            e = events.recv() => match e {
                Some(e) => {
                    let e = forward(e, &mut next);
                    if let Err(err) = recorder.record(std::slice::from_ref(&e)).await {
                        tracing::warn!(key = %entry.key, error = %err, "recording a Standby event failed");
                    }
                }
                None => break,
            },
            () = entry.lifetime.cancelled() => {
                // Let the cancelled execution's last events (its `done`) through, briefly.
                while let Ok(Some(e)) = tokio::time::timeout(Duration::from_secs(2), events.recv()).await {
                    let e = forward(e, &mut next);
                    if let Err(err) = recorder.record(std::slice::from_ref(&e)).await {
                        tracing::warn!(key = %entry.key, error = %err, "recording a Standby event failed");
                    }
                }
                break;
            }
        }
    }
    entry.progress.send_modify(|p| p.1 = true);
}

fn open_entry(
    state: &AppState,
    tenant: &str,
    a: &AgentEntry,
    key: &str,
    held: (RunSlot, ThreadClaim),
) -> Arc<StandbyEntry> {
    let lifetime = state.shutdown.child_token();
    let defaults = CallOptions::new().identity(crate::driver::Identity {
        tenant: tenant.to_owned(),
        ..Default::default()
    });
    let span = super::telemetry::standby_span(&a.name, key, tenant);
    let standby = span.in_scope(|| a.agent.thread(key).standby(lifetime.clone(), defaults));
    let events = standby.events();
    let entry = Arc::new(StandbyEntry {
        agent: a.name.clone(),
        key: key.to_owned(),
        standby,
        lifetime,
        opened_at: Utc::now(),
        log: RwLock::new((0, Vec::new())),
        progress: watch::Sender::new((0, false)),
    });
    match events {
        Some(rx) => {
            let recorder = Recorder::new(state.store.clone(), tenant, a.exposure);
            tokio::spawn(tracing::Instrument::instrument(
                pump(entry.clone(), rx, recorder, held),
                span,
            ));
        }
        None => entry.progress.send_modify(|p| p.1 = true),
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
                "too_many_standbys",
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
#[utoipa::path(post, path = "/v1/agents/{agent}/threads/{key}/standby", tag = "standby", params(("agent" = String, Path, description = "The agent name"), ("key" = String, Path, description = "The thread key (1 to 512 bytes)")), responses((status = 201, description = "The Standby is open", body = StandbyView), (status = 200, description = "The live Standby of the thread", body = StandbyView), (status = 404, description = "Unknown agent", body = crate::server::views::ErrorBody), (status = 409, description = "thread_busy: a run is active on the thread", body = crate::server::views::ErrorBody), (status = 422, description = "invalid_request: bad key", body = crate::server::views::ErrorBody), (status = 429, description = "too_many_standbys or too_many_runs: the tenant's max_standbys or max_concurrent_runs is reached (an open Standby holds one run slot)", body = crate::server::views::ErrorBody), (status = 503, description = "shutting_down", body = crate::server::views::ErrorBody)))]
pub async fn open(
    State(state): State<Arc<AppState>>,
    tenant: Tenant,
    Path((agent, key)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    if state.shutdown.is_cancelled() {
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
#[utoipa::path(get, path = "/v1/agents/{agent}/threads/{key}/standby", tag = "standby", params(("agent" = String, Path, description = "The agent name"), ("key" = String, Path, description = "The thread key")), responses((status = 200, description = "The live Standby", body = StandbyView), (status = 404, description = "Unknown agent, or no Standby on the thread", body = crate::server::views::ErrorBody)))]
pub async fn get(
    State(state): State<Arc<AppState>>,
    tenant: Tenant,
    Path((agent, key)): Path<(String, String)>,
) -> Result<Json<StandbyView>, ApiError> {
    Ok(Json(lookup(&state, tenant.as_str(), &agent, &key)?.view()))
}

/// `DELETE /v1/agents/{agent}/threads/{key}/standby`: releases the Standby (its current execution is
/// cancelled, queued input dropped) and frees the thread.
#[utoipa::path(delete, path = "/v1/agents/{agent}/threads/{key}/standby", tag = "standby", params(("agent" = String, Path, description = "The agent name"), ("key" = String, Path, description = "The thread key")), responses((status = 200, description = "Released (`live: false`)", body = StandbyView), (status = 404, description = "Unknown agent, or no Standby on the thread", body = crate::server::views::ErrorBody)))]
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
#[utoipa::path(post, path = "/v1/agents/{agent}/threads/{key}/standby/messages", tag = "standby", params(("agent" = String, Path, description = "The agent name"), ("key" = String, Path, description = "The thread key")), request_body = MessageBody, responses((status = 202, description = "The input is admitted", body = MessageAccepted), (status = 400, description = "invalid_json", body = crate::server::views::ErrorBody), (status = 404, description = "Unknown agent, or no Standby on the thread", body = crate::server::views::ErrorBody), (status = 409, description = "run_finished: the Standby closed meanwhile", body = crate::server::views::ErrorBody), (status = 413, description = "message_too_large", body = crate::server::views::ErrorBody), (status = 422, description = "invalid_request or message_unsupported", body = crate::server::views::ErrorBody)))]
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
#[utoipa::path(post, path = "/v1/agents/{agent}/threads/{key}/standby/cancel", tag = "standby", params(("agent" = String, Path, description = "The agent name"), ("key" = String, Path, description = "The thread key")), responses((status = 202, description = "Cancellation requested", body = StandbyView), (status = 404, description = "Unknown agent, or no Standby on the thread", body = crate::server::views::ErrorBody)))]
pub async fn cancel(
    State(state): State<Arc<AppState>>,
    tenant: Tenant,
    Path((agent, key)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    let entry = lookup(&state, tenant.as_str(), &agent, &key)?;
    entry.standby.cancel();
    Ok((StatusCode::ACCEPTED, Json(entry.view())).into_response())
}

/// `GET /v1/agents/{agent}/threads/{key}/standby/events`: SSE of every execution's events; `id:` counts
/// the Standby's events, `Last-Event-ID` / `?after=` resume; ends when the Standby is released.
#[utoipa::path(get, path = "/v1/agents/{agent}/threads/{key}/standby/events", tag = "standby", params(("agent" = String, Path, description = "The agent name"), ("key" = String, Path, description = "The thread key"), ("after" = Option<String>, Query, pattern = "^[0-9]{1,20}$", description = "Replay events with an id above this: decimal digits only (no sign or space), at most 18446744073709551615; else 422 `invalid_request`"), ("Last-Event-ID" = Option<String>, Header, pattern = "^[0-9]{0,20}$", description = "Resume after this id (wins over `after`): decimal digits only; empty is as if absent; anything else (a sign, a space, non-ASCII bytes) 422 `invalid_request`")), responses((status = 200, description = "The Standby's events: `id:` the Standby's event count, `event:` kind, `data:` JSON", content_type = "text/event-stream", body = String), (status = 404, description = "Unknown agent, or no Standby on the thread", body = crate::server::views::ErrorBody), (status = 422, description = "invalid_request: bad cursor", body = crate::server::views::ErrorBody)))]
pub async fn events(
    State(state): State<Arc<AppState>>,
    tenant: Tenant,
    Path((agent, key)): Path<(String, String)>,
    headers: HeaderMap,
    Query(query): Query<EventsQuery>,
) -> Result<Response, ApiError> {
    let after = cursor(&headers, &query)?;
    let entry = lookup(&state, tenant.as_str(), &agent, &key)?;
    let live = sse::follow(entry, after, state.shutdown.clone(), None);
    Ok(sse::stream_response(live, state.config.keep_alive))
}
