//! Thread routes: create, list (paged), get (status, checkpoint audit, active run), fork, archive, and the
//! thread's history across runs read through the recorder (for UI reload), plus `/metrics`.
//!
//! Create is idempotent by key: the same key with the same defaults answers 200 with the thread, with other
//! defaults 409 `thread_exists`. Fork declares a new thread whose first run starts from the parent's
//! checkpoint (the runtime's fork); a driver without session fork is refused up front with 422
//! `fork_unsupported`.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use axum::Json;
use axum::extract::State;

use super::extract::{Path, Query};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};

use super::AppState;
use super::agents::AgentEntry;
use super::auth::Tenant;
use super::body::JsonBody;
use super::declared::Declared;
use super::error::{ApiError, ErrorCode};
use super::rest::find_agent as agent;
use super::views::{
    ArchivedThread, CheckpointView, HistoryEvent, HistoryPage, ThreadDefaults, ThreadList, ThreadSummary,
    ThreadView,
};
use crate::recorder::Recorder;
use crate::store::Page;

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

/// The longest thread key.
pub const MAX_KEY: usize = 512;

/// Checks a thread key (1 to 512 bytes, no NUL) for the request field `field`.
pub fn check_key(field: &str, key: &str) -> Result<(), ApiError> {
    if key.is_empty() || key.len() > MAX_KEY {
        return Err(ApiError::invalid(field, "thread keys are 1 to 512 bytes"));
    }
    super::extract::check_id(field, key)
}

/// The checkpoint of thread `key` of `tenant` on agent `a`; a store failure is 500 `store_error`.
pub async fn checkpoint_of(
    a: &AgentEntry,
    tenant: &str,
    key: &str,
) -> Result<Option<crate::runtime::CheckpointInfo>, ApiError> {
    a.agent
        .thread(key)
        .checkpoint(tenant)
        .await
        .map_err(ApiError::store_failure)
}

async fn checkpoint(a: &AgentEntry, tenant: &str, key: &str) -> Result<Option<CheckpointView>, ApiError> {
    let c = checkpoint_of(a, tenant, key).await?;
    Ok(c.map(|c| CheckpointView {
        record_id: c.record_id,
        resume_id: c.resume_id,
        codec: c.codec,
        fingerprint: c.fingerprint,
        updated_at: c.updated_at,
        pending_persistence: c.pending_persistence,
    }))
}

/// The view of a thread, `None` when it does not exist (no checkpoint, no declaration, nothing active).
async fn view(
    state: &AppState,
    a: &AgentEntry,
    tenant: &str,
    key: &str,
) -> Result<Option<ThreadView>, ApiError> {
    let checkpoint = checkpoint(a, tenant, key).await?;
    let active_run = state
        .runs
        .active_on(tenant, &a.name, key)
        .map(|e| e.run_id.clone());
    let declared = state.declared.get(tenant, &a.name, key).await?;
    let standby = state.standbys.is_live(tenant, &a.name, key);
    if checkpoint.is_none() && active_run.is_none() && declared.is_none() && !standby {
        return Ok(None);
    }
    Ok(Some(ThreadView {
        key: key.to_owned(),
        active_run,
        checkpoint,
        forked_from: declared.as_ref().and_then(|d| d.forked_from.clone()),
        defaults: declared.map(|d| d.defaults),
        standby,
    }))
}

/// `GET /v1/agents/{agent}/threads`: the tenant's threads of this agent (another agent's threads, even
/// under the same keys, are its own), paged by key.
#[utoipa::path(get, path = "/v1/agents/{agent}/threads", tag = "threads", params(("agent" = String, Path, description = "The agent name"), ("after" = Option<String>, Query, description = "Exclusive lower bound: a thread key"), ("limit" = Option<u32>, Query, minimum = 1, maximum = 500, description = "Page size, 1 to 500 (default 50); outside the range 422 `invalid_request`")), responses((status = 200, description = "A page of this agent's threads with a persisted record (a created thread appears after its first successful run)", body = ThreadList), (status = 404, description = "Unknown agent", body = crate::views::ErrorBody), (status = 422, description = "invalid_request: `limit` out of range", body = crate::views::ErrorBody)))]
pub async fn list(
    State(state): State<Arc<AppState>>,
    tenant: Tenant,
    Path(name): Path<String>,
    Query(q): Query<PageQuery>,
) -> Result<Json<ThreadList>, ApiError> {
    agent(&state, &name)?;
    let limit = super::ranges::in_range("limit", q.limit.unwrap_or(50), 1, super::ranges::MAX_THREAD_PAGE)?;
    let page = Page {
        after: q.after,
        limit,
    };
    let records = state
        .store
        .list_threads(tenant.as_str(), &name, &page)
        .await
        .map_err(ApiError::store)?;
    let next_after = (records.len() as u32 == limit)
        .then(|| records.last().map(|r| r.key.clone()))
        .flatten();
    let threads = records
        .into_iter()
        .map(|r| ThreadSummary {
            key: r.key,
            status: serde_json::to_value(r.status)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default(),
            driver_type: r.driver_type,
            created_at: r.created_at,
            updated_at: r.updated_at,
        })
        .collect();
    Ok(Json(ThreadList { threads, next_after }))
}

/// The body of `POST /v1/agents/{agent}/threads`.
#[derive(Debug, Default, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateThreadBody {
    /// The thread key (1 to 512 bytes); generated (`thr-<uuid>`) when absent.
    #[serde(default)]
    pub key: Option<String>,
    /// The model of the thread's runs (a run's own `model` wins).
    #[serde(default)]
    pub model: Option<String>,
    /// Metadata merged under each run's own.
    #[serde(default)]
    pub metadata: std::collections::BTreeMap<String, String>,
    /// The approval policy of the thread's runs (a run's own `approvals` wins).
    #[serde(default)]
    pub approvals: Option<super::ranges::ApprovalsBody>,
}

/// `POST /v1/agents/{agent}/threads`: declares a thread with run defaults. 201 when new; 200 with the thread
/// when the key exists with identical defaults (idempotent retry); 409 `thread_exists` when it exists with
/// other defaults.
#[utoipa::path(post, path = "/v1/agents/{agent}/threads", tag = "threads", params(("agent" = String, Path, description = "The agent name")), request_body = CreateThreadBody, responses((status = 201, description = "The thread is declared; its first run creates its record", body = ThreadView, headers(("Location" = String, description = "The thread's path, `/v1/agents/{agent}/threads/{key}` (segments percent-encoded)"))), (status = 200, description = "The thread exists with identical defaults", body = ThreadView), (status = 400, description = "invalid_json", body = crate::views::ErrorBody), (status = 404, description = "Unknown agent", body = crate::views::ErrorBody), (status = 409, description = "thread_exists: the key exists with other defaults", body = crate::views::ErrorBody), (status = 415, description = "unsupported_media_type", body = crate::views::ErrorBody), (status = 422, description = "invalid_request: bad key", body = crate::views::ErrorBody)))]
pub async fn create(
    State(state): State<Arc<AppState>>,
    tenant: Tenant,
    Path(name): Path<String>,
    JsonBody(body): JsonBody<CreateThreadBody>,
) -> Result<Response, ApiError> {
    let a = agent(&state, &name)?;
    let key = body
        .key
        .unwrap_or_else(|| format!("thr-{}", uuid::Uuid::now_v7()));
    check_key("key", &key)?;
    let decl = Declared {
        defaults: ThreadDefaults {
            model: body.model,
            metadata: body.metadata,
            approvals: body.approvals.map(|a| a.policy("approvals")).transpose()?,
        },
        forked_from: None,
        created_at: chrono::Utc::now(),
    };
    let existing = match view(&state, a, tenant.as_str(), &key).await? {
        None => state
            .declared
            .insert_new(tenant.as_str(), &a.name, &key, decl.clone())
            .await?
            .err(),
        Some(_) => Some(
            state
                .declared
                .get(tenant.as_str(), &a.name, &key)
                .await?
                .unwrap_or(Declared {
                    defaults: ThreadDefaults::default(),
                    ..decl.clone()
                }),
        ),
    };
    let status = match existing {
        None => StatusCode::CREATED,
        Some(old) if old.defaults == decl.defaults && old.forked_from.is_none() => StatusCode::OK,
        Some(_) => {
            return Err(ApiError::new(
                ErrorCode::ThreadExists,
                format!("thread {key:?} exists with other defaults"),
            )
            .field("key"));
        }
    };
    let v = view(&state, a, tenant.as_str(), &key)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("no thread {key:?}")))?;
    if status == StatusCode::CREATED {
        return Ok(super::location::with(
            &super::location::thread(&a.name, &key),
            (status, Json(v)),
        ));
    }
    Ok((status, Json(v)).into_response())
}

/// `GET /v1/agents/{agent}/threads/{key}`: status, checkpoint audit and the active run.
#[utoipa::path(get, path = "/v1/agents/{agent}/threads/{key}", tag = "threads", params(("agent" = String, Path, description = "The agent name"), ("key" = String, Path, description = "The thread key (1 to 512 bytes)")), responses((status = 200, description = "The thread", body = ThreadView), (status = 404, description = "Unknown agent, run or thread", body = crate::views::ErrorBody)))]
pub async fn get(
    State(state): State<Arc<AppState>>,
    tenant: Tenant,
    Path((name, key)): Path<(String, String)>,
) -> Result<Json<ThreadView>, ApiError> {
    let a = agent(&state, &name)?;
    view(&state, a, tenant.as_str(), &key)
        .await?
        .map(Json)
        .ok_or_else(|| ApiError::not_found(format!("no thread {key:?}")))
}

/// The body of a fork.
#[derive(Debug, Default, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ForkBody {
    /// The new thread's key (1 to 512 bytes); generated (`thr-<uuid>`) when absent.
    #[serde(default)]
    pub key: Option<String>,
}

/// `POST /v1/agents/{agent}/threads/{key}/fork`: declares a new thread whose first run starts from this
/// thread's checkpoint; the parent is never modified.
#[utoipa::path(post, path = "/v1/agents/{agent}/threads/{key}/fork", tag = "threads", params(("agent" = String, Path, description = "The agent name"), ("key" = String, Path, description = "The parent thread's key")), request_body = ForkBody, responses((status = 201, description = "The fork is declared; its first run starts from the parent's checkpoint", body = ThreadView, headers(("Location" = String, description = "The thread's path, `/v1/agents/{agent}/threads/{key}` (segments percent-encoded)"))), (status = 400, description = "invalid_json", body = crate::views::ErrorBody), (status = 404, description = "Unknown agent, or the parent has no checkpoint", body = crate::views::ErrorBody), (status = 409, description = "thread_exists: the new key is taken", body = crate::views::ErrorBody), (status = 422, description = "fork_unsupported: the driver cannot fork sessions; invalid_request: bad key", body = crate::views::ErrorBody)))]
pub async fn fork(
    State(state): State<Arc<AppState>>,
    tenant: Tenant,
    Path((name, parent)): Path<(String, String)>,
    JsonBody(body): JsonBody<ForkBody>,
) -> Result<Response, ApiError> {
    let a = agent(&state, &name)?;
    if !a.descriptor().sessions.fork {
        return Err(ApiError::new(
            ErrorCode::ForkUnsupported,
            format!("the {} driver cannot fork sessions", a.provider),
        ));
    }
    if checkpoint(a, tenant.as_str(), &parent).await?.is_none() {
        return Err(ApiError::not_found(format!(
            "thread {parent:?} has no checkpoint to fork"
        )));
    }
    let key = body
        .key
        .unwrap_or_else(|| format!("thr-{}", uuid::Uuid::now_v7()));
    check_key("key", &key)?;
    let taken = || ApiError::new(ErrorCode::ThreadExists, format!("thread {key:?} exists")).field("key");
    if view(&state, a, tenant.as_str(), &key).await?.is_some() {
        return Err(taken());
    }
    let decl = Declared {
        defaults: state
            .declared
            .get(tenant.as_str(), &a.name, &parent)
            .await?
            .map(|d| d.defaults)
            .unwrap_or_default(),
        forked_from: Some(parent),
        created_at: chrono::Utc::now(),
    };
    state
        .declared
        .insert_new(tenant.as_str(), &a.name, &key, decl)
        .await?
        .map_err(|_| taken())?;
    let v = view(&state, a, tenant.as_str(), &key)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("no thread {key:?}")))?;
    Ok(super::location::with(
        &super::location::thread(&a.name, &key),
        (StatusCode::CREATED, Json(v)),
    ))
}

/// `POST /v1/agents/{agent}/threads/{key}/archive`.
#[utoipa::path(post, path = "/v1/agents/{agent}/threads/{key}/archive", tag = "threads", params(("agent" = String, Path, description = "The agent name"), ("key" = String, Path, description = "The thread key (1 to 512 bytes)")), responses((status = 200, description = "The thread is archived", body = ArchivedThread), (status = 404, description = "Unknown agent, run or thread", body = crate::views::ErrorBody), (status = 409, description = "thread_busy", body = crate::views::ErrorBody)))]
pub async fn archive(
    State(state): State<Arc<AppState>>,
    tenant: Tenant,
    Path((name, key)): Path<(String, String)>,
) -> Result<Json<ArchivedThread>, ApiError> {
    agent(&state, &name)?;
    if state.runs.active_on(tenant.as_str(), &name, &key).is_some()
        || state.standbys.is_live(tenant.as_str(), &name, &key)
    {
        return Err(ApiError::new(
            ErrorCode::ThreadBusy,
            "a run or a Standby is active on this thread",
        ));
    }
    let declared = state.declared.remove(tenant.as_str(), &name, &key).await?;
    match state.store.archive(tenant.as_str(), &name, &key).await {
        Ok(r) => Ok(Json(ArchivedThread {
            key: r.key,
            status: "archived".into(),
        })),
        Err(crate::store::StoreError::NotFound) if declared => Ok(Json(ArchivedThread {
            key,
            status: "archived".into(),
        })),
        Err(e) => Err(ApiError::store(e)),
    }
}

/// `GET /v1/agents/{agent}/threads/{key}/events`: the thread's recorded history across runs, by cursor.
#[utoipa::path(get, path = "/v1/agents/{agent}/threads/{key}/events", tag = "threads", params(("agent" = String, Path, description = "The agent name"), ("key" = String, Path, description = "The thread key (1 to 512 bytes)"), ("after" = Option<String>, Query, pattern = "^[0-9]{1,20}$", description = "Cursor: events after this one (decimal digits only) (at most 18446744073709551615)"), ("limit" = Option<u32>, Query, minimum = 1, maximum = 1000, description = "Page size, 1 to 1000 (default 200); outside the range 422 `invalid_request`")), responses((status = 200, description = "The thread history across runs", body = HistoryPage), (status = 404, description = "Unknown agent, run or thread", body = crate::views::ErrorBody), (status = 422, description = "invalid_request: bad cursor", body = crate::views::ErrorBody)))]
pub async fn history(
    State(state): State<Arc<AppState>>,
    tenant: Tenant,
    Path((name, key)): Path<(String, String)>,
    Query(q): Query<PageQuery>,
) -> Result<Json<HistoryPage>, ApiError> {
    let a = agent(&state, &name)?;
    let after = q
        .after
        .as_deref()
        .map(|s| super::ranges::decimal("after", s))
        .transpose()?;
    let limit = super::ranges::in_range(
        "limit",
        q.limit.unwrap_or(200),
        1,
        super::ranges::MAX_HISTORY_PAGE,
    )?;
    let recorder = Recorder::new(state.store.clone(), tenant.as_str(), &a.name, a.exposure);
    let records = recorder
        .since(&key, after, limit, &a.exposure)
        .await
        .map_err(ApiError::store)?;
    if records.is_empty() && after.is_none() && !exists(&state, a, tenant.as_str(), &key).await? {
        return Err(ApiError::not_found(format!("no thread {key:?}")));
    }
    let next_after = records.last().map(|r| r.cursor);
    let events = records
        .into_iter()
        .map(|r| HistoryEvent {
            cursor: r.cursor,
            run_id: r.run_id,
            sequence: r.sequence,
            kind: r.kind,
            event: r.json,
        })
        .collect();
    Ok(Json(HistoryPage { events, next_after }))
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
    Ok(checkpoint_of(a, tenant, key).await?.is_some())
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
         # HELP agent_adaptor_record_waits_total Times a run's pump waited for the store (its unrecorded backlog was full).\n# TYPE agent_adaptor_record_waits_total counter\n\
         agent_adaptor_record_waits_total {}\n\
         # HELP agent_adaptor_approvals_pending Pending approvals.\n# TYPE agent_adaptor_approvals_pending gauge\n\
         agent_adaptor_approvals_pending {}\n\
         # HELP agent_adaptor_sse_subscribers Open SSE streams.\n# TYPE agent_adaptor_sse_subscribers gauge\n\
         agent_adaptor_sse_subscribers {}\n",
        m.started.load(Ordering::Relaxed),
        live.len() - parked,
        parked,
        m.events.load(Ordering::Relaxed),
        m.record_failures.load(Ordering::Relaxed),
        m.record_waits.load(Ordering::Relaxed),
        pending,
        m.subscribers.load(Ordering::Relaxed),
    );
    let body = body
        + &m.latency.render()
        + &state.retention.render()
        + &state.ip_limits.render()
        + &state.connections.render()
        + &state.webhooks.render()
        + &super::capacity::render(
            state.limits.total_active(),
            state.limits.max_active().unwrap_or_default(),
            state.limits.refused(),
        );
    (
        [(axum::http::header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        body,
    )
}
