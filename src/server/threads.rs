//! Thread routes: list (paged), get (status, checkpoint audit, active run), archive, and the thread's
//! history across runs read through the recorder (for UI reload), plus `/metrics`.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use axum::Json;
use axum::extract::{Path, Query, State};
use serde::Deserialize;
use serde_json::{Value, json};

use super::AppState;
use super::auth::Tenant;
use super::error::ApiError;
use crate::recorder::Recorder;
use crate::store::Page;

fn agent<'a>(state: &'a AppState, name: &str) -> Result<&'a super::agents::AgentEntry, ApiError> {
    state
        .agents
        .get(name)
        .ok_or_else(|| ApiError::not_found(format!("no agent named {name:?}")))
}

/// Paging of a listing.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PageQuery {
    /// Exclusive lower bound (a thread key, or a cursor for history).
    #[serde(default)]
    pub after: Option<String>,
    /// Page size (default 50, at most 500).
    #[serde(default)]
    pub limit: Option<u32>,
}

/// `GET /v1/agents/{agent}/threads`: the tenant's threads, paged by key.
#[utoipa::path(get, path = "/v1/agents/{agent}/threads", tag = "threads", params(("agent" = String, Path, description = "The agent name"), ("after" = Option<String>, Query, description = "Exclusive lower bound: a thread key"), ("limit" = Option<u32>, Query, description = "Page size (default 50, at most 500)")), responses((status = 200, description = "A page of threads", body = crate::server::openapi::ThreadList), (status = 404, description = "Unknown agent, run or thread", body = crate::server::openapi::ErrorBody)))]
pub async fn list(
    State(state): State<Arc<AppState>>,
    tenant: Tenant,
    Path(name): Path<String>,
    Query(q): Query<PageQuery>,
) -> Result<Json<Value>, ApiError> {
    agent(&state, &name)?;
    let limit = q.limit.unwrap_or(50).clamp(1, 500);
    let page = Page {
        after: q.after,
        limit,
    };
    let records = state
        .store
        .list_threads(tenant.as_str(), &page)
        .await
        .map_err(ApiError::store)?;
    let next = (records.len() as u32 == limit)
        .then(|| records.last().map(|r| r.key.clone()))
        .flatten();
    let threads: Vec<Value> = records
        .iter()
        .map(|r| {
            json!({ "key": r.key, "status": r.status, "driver_type": r.driver_type,
                    "created_at": r.created_at, "updated_at": r.updated_at })
        })
        .collect();
    Ok(Json(json!({ "threads": threads, "next_after": next })))
}

/// `GET /v1/agents/{agent}/threads/{key}`: status, checkpoint audit and the active run.
#[utoipa::path(get, path = "/v1/agents/{agent}/threads/{key}", tag = "threads", params(("agent" = String, Path, description = "The agent name"), ("key" = String, Path, description = "The thread key (1 to 512 bytes)")), responses((status = 200, description = "The thread", body = crate::server::openapi::ThreadView), (status = 404, description = "Unknown agent, run or thread", body = crate::server::openapi::ErrorBody)))]
pub async fn get(
    State(state): State<Arc<AppState>>,
    tenant: Tenant,
    Path((name, key)): Path<(String, String)>,
) -> Result<Json<Value>, ApiError> {
    let a = agent(&state, &name)?;
    let checkpoint = a
        .agent
        .thread(&key)
        .checkpoint(tenant.as_str())
        .await
        .map_err(|e| {
            ApiError::new(
                axum::http::StatusCode::INTERNAL_SERVER_ERROR,
                "store_error",
                e.to_string(),
            )
        })?;
    let active = state
        .runs
        .active_on(tenant.as_str(), &name, &key)
        .map(|e| e.run_id.clone());
    if checkpoint.is_none() && active.is_none() {
        return Err(ApiError::not_found(format!("no thread {key:?}")));
    }
    Ok(Json(json!({
        "key": key,
        "active_run": active,
        "checkpoint": checkpoint.map(|c| json!({
            "record_id": c.record_id, "resume_id": c.resume_id, "codec": c.codec,
            "fingerprint": c.fingerprint, "updated_at": c.updated_at,
            "pending_persistence": c.pending_persistence,
        })),
    })))
}

/// `POST /v1/agents/{agent}/threads/{key}/archive`.
#[utoipa::path(post, path = "/v1/agents/{agent}/threads/{key}/archive", tag = "threads", params(("agent" = String, Path, description = "The agent name"), ("key" = String, Path, description = "The thread key (1 to 512 bytes)")), responses((status = 200, description = "The thread is archived", body = crate::server::openapi::ArchivedThread), (status = 404, description = "Unknown agent, run or thread", body = crate::server::openapi::ErrorBody), (status = 409, description = "thread_busy", body = crate::server::openapi::ErrorBody)))]
pub async fn archive(
    State(state): State<Arc<AppState>>,
    tenant: Tenant,
    Path((name, key)): Path<(String, String)>,
) -> Result<Json<Value>, ApiError> {
    agent(&state, &name)?;
    if state.runs.active_on(tenant.as_str(), &name, &key).is_some() {
        return Err(ApiError::new(
            axum::http::StatusCode::CONFLICT,
            "thread_busy",
            "a run is active on this thread",
        ));
    }
    let r = state
        .store
        .archive(tenant.as_str(), &key)
        .await
        .map_err(ApiError::store)?;
    Ok(Json(json!({ "key": r.key, "status": r.status })))
}

/// `GET /v1/agents/{agent}/threads/{key}/events`: the thread's recorded history across runs, by cursor.
#[utoipa::path(get, path = "/v1/agents/{agent}/threads/{key}/events", tag = "threads", params(("agent" = String, Path, description = "The agent name"), ("key" = String, Path, description = "The thread key (1 to 512 bytes)"), ("after" = Option<u64>, Query, description = "Cursor: events after this one"), ("limit" = Option<u32>, Query, description = "Page size (default 200, at most 1000)")), responses((status = 200, description = "The thread history across runs", body = crate::server::openapi::HistoryPage), (status = 404, description = "Unknown agent, run or thread", body = crate::server::openapi::ErrorBody), (status = 422, description = "invalid_request: bad cursor", body = crate::server::openapi::ErrorBody)))]
pub async fn history(
    State(state): State<Arc<AppState>>,
    tenant: Tenant,
    Path((name, key)): Path<(String, String)>,
    Query(q): Query<PageQuery>,
) -> Result<Json<Value>, ApiError> {
    let a = agent(&state, &name)?;
    let after = match q.after.as_deref() {
        None => None,
        Some(s) => Some(
            s.parse::<u64>()
                .map_err(|_| ApiError::invalid("after", "expected a cursor"))?,
        ),
    };
    let limit = q.limit.unwrap_or(200).clamp(1, 1000);
    let recorder = Recorder::new(state.store.clone(), tenant.as_str(), a.exposure);
    let records = recorder
        .since(&key, after, limit, &a.exposure)
        .await
        .map_err(ApiError::store)?;
    if records.is_empty() && after.is_none() && !exists(&state, a, tenant.as_str(), &key).await? {
        return Err(ApiError::not_found(format!("no thread {key:?}")));
    }
    let next = records.last().map(|r| r.cursor);
    let events: Vec<Value> = records
        .into_iter()
        .map(|r| json!({ "cursor": r.cursor, "run_id": r.run_id, "sequence": r.sequence, "kind": r.kind, "event": r.json }))
        .collect();
    Ok(Json(json!({ "events": events, "next_after": next })))
}

/// True when `tenant` has the thread `key` (a checkpoint or an active run): an empty history of a thread
/// that exists is `200`, of one that does not (or is another tenant's) `404`.
async fn exists(
    state: &AppState,
    a: &super::agents::AgentEntry,
    tenant: &str,
    key: &str,
) -> Result<bool, ApiError> {
    if state.runs.active_on(tenant, &a.name, key).is_some() {
        return Ok(true);
    }
    let checkpoint = a.agent.thread(key).checkpoint(tenant).await.map_err(|e| {
        ApiError::new(
            axum::http::StatusCode::INTERNAL_SERVER_ERROR,
            "store_error",
            e.to_string(),
        )
    })?;
    Ok(checkpoint.is_some())
}

/// `GET /metrics`: Prometheus text.
#[utoipa::path(get, path = "/metrics", tag = "health", responses((status = 200, description = "Prometheus text exposition", content_type = "text/plain; version=0.0.4", body = String)))]
pub async fn metrics(
    State(state): State<Arc<AppState>>,
) -> ([(axum::http::HeaderName, &'static str); 1], String) {
    let m = &state.runs.metrics;
    let live = state.runs.live();
    let parked = live.iter().filter(|r| !r.pending_approvals().is_empty()).count();
    let pending: usize = live.iter().map(|r| r.pending_approvals().len()).sum();
    let body = format!(
        "# HELP agent_adaptor_runs_started_total Runs started.\n# TYPE agent_adaptor_runs_started_total counter\n\
         agent_adaptor_runs_started_total {}\n\
         # HELP agent_adaptor_runs Runs by state in this process.\n# TYPE agent_adaptor_runs gauge\n\
         agent_adaptor_runs{{state=\"running\"}} {}\nagent_adaptor_runs{{state=\"parked\"}} {}\n\
         # HELP agent_adaptor_events_recorded_total Events recorded.\n# TYPE agent_adaptor_events_recorded_total counter\n\
         agent_adaptor_events_recorded_total {}\n\
         # HELP agent_adaptor_record_failures_total Event batches the store refused.\n# TYPE agent_adaptor_record_failures_total counter\n\
         agent_adaptor_record_failures_total {}\n\
         # HELP agent_adaptor_approvals_pending Pending approvals.\n# TYPE agent_adaptor_approvals_pending gauge\n\
         agent_adaptor_approvals_pending {}\n\
         # HELP agent_adaptor_sse_subscribers Open SSE streams.\n# TYPE agent_adaptor_sse_subscribers gauge\n\
         agent_adaptor_sse_subscribers {}\n",
        m.started.load(Ordering::Relaxed),
        live.len() - parked,
        parked,
        m.events.load(Ordering::Relaxed),
        m.record_failures.load(Ordering::Relaxed),
        pending,
        m.subscribers.load(Ordering::Relaxed),
    );
    let body = body + &state.retention.render();
    (
        [(axum::http::header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        body,
    )
}
