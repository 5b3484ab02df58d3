//! The REST routes: agents, runs (start, state, cancel), run events (SSE), approvals and supplemental
//! messages, health and readiness.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::extract::State;

use super::extract::{Path, Query};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::AppState;
use super::auth::Tenant;
use super::body::JsonBody;
use super::error::{ApiError, ErrorCode};
use super::ranges::ApprovalsBody;
use super::reader::{LogReader, Source};
use super::resources::{AgentResources, RunResources};
use super::runs::{RunEntry, StartRun, approval_outcome, approval_view, outcome_state};
use super::sse;
use super::views::{
    AgentList, AgentView, ApprovalList, ApprovalView, DecisionAccepted, Health, MessageAccepted, RunLinks,
    RunView,
};
use crate::driver::{DecisionKind, Policy, Timing};
use crate::recorder::Recorder;
use crate::runtime::{CallOptions, MessageOptions};
use crate::store::{RunRecord, RunState, StoreError};
use crate::vocab::McpServer;
use crate::workspace::WorkspaceSpec;

/// `GET /healthz`: the process answers.
#[utoipa::path(get, path = "/healthz", tag = "health", responses((status = 200, description = "The process answers", body = crate::views::Health)))]
pub async fn healthz() -> Json<Health> {
    Json(Health {
        status: "ok".into(),
        store: None,
    })
}

/// `GET /readyz`: the store answers and the replica takes runs.
#[utoipa::path(get, path = "/readyz", tag = "health", responses((status = 200, description = "The store answers and the replica takes runs", body = crate::views::Health), (status = 503, description = "shutting_down (draining or stopping), capacity_exhausted (`max_active` runs admitted) or store_unavailable (`Retry-After`)", body = crate::views::ErrorBody)))]
pub async fn readyz(State(state): State<Arc<AppState>>) -> Result<Json<Health>, ApiError> {
    if state.refuses_runs() {
        return Err(ApiError::shutting_down());
    }
    if state.limits.is_full() {
        return Err(ApiError::capacity_exhausted(
            state.limits.max_active().unwrap_or_default(),
        ));
    }
    state
        .store
        .list_runs("__readyz__", None, &crate::store::Page::first(1))
        .await
        .map_err(ApiError::store)?;
    Ok(Json(Health {
        status: "ready".into(),
        store: Some(state.store.backend().to_owned()),
    }))
}

fn agent_view(a: &super::agents::AgentEntry) -> AgentView {
    AgentView {
        name: a.name.clone(),
        provider: a.provider.clone(),
        descriptor: serde_json::to_value(a.descriptor()).unwrap_or(Value::Null),
        resources: a.resources.view(),
    }
}

/// `GET /v1/agents`.
#[utoipa::path(get, path = "/v1/agents", tag = "agents", responses((status = 200, description = "The agents", body = crate::views::AgentList)))]
pub async fn list_agents(State(state): State<Arc<AppState>>) -> Json<AgentList> {
    Json(AgentList {
        agents: state.agents.iter().map(agent_view).collect(),
        default: state.agents.default_agent().map(|a| a.name.clone()),
    })
}

/// `GET /v1/agents/{agent}`.
#[utoipa::path(get, path = "/v1/agents/{agent}", tag = "agents", params(("agent" = String, Path, description = "The agent name")), responses((status = 200, description = "The agent", body = crate::views::AgentView), (status = 404, description = "Unknown agent, run or thread", body = crate::views::ErrorBody)))]
pub async fn get_agent(
    State(state): State<Arc<AppState>>,
    Path(agent): Path<String>,
) -> Result<Json<AgentView>, ApiError> {
    Ok(Json(agent_view(find_agent(&state, &agent)?)))
}

/// The body of a run start.
#[derive(Debug, Default, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StartRunBody {
    /// The prompt (not empty or only whitespace).
    #[schema(min_length = 1, pattern = "\\S")]
    pub prompt: String,
    /// Model override.
    #[serde(default)]
    pub model: Option<String>,
    /// Execution timeout in milliseconds, 1 to 604800000 (7 days).
    #[serde(default)]
    #[schema(minimum = 1, maximum = 604_800_000)]
    pub timeout_ms: Option<u64>,
    /// Caller metadata.
    #[serde(default)]
    pub metadata: BTreeMap<String, String>,
    /// The approval policy (permission / plan review / question modes, timeout, fallbacks).
    #[serde(default)]
    pub approvals: Option<ApprovalsBody>,
    /// A JSON Schema the final answer must satisfy.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub schema: Option<Value>,
    /// Force a fresh provider process (no reuse of a thread's persistent process).
    #[serde(default)]
    pub spawn: bool,
    /// Instructions for this run, after the agent's own.
    #[serde(default)]
    pub instructions: Option<String>,
    /// Skills from the agent's skill library, by key.
    #[serde(default)]
    pub skills: Vec<String>,
    /// HTTP or SSE MCP servers added to the agent's (only where the agent's `allow_request.mcp` is set).
    #[serde(default)]
    #[schema(value_type = Vec<super::openapi::shapes::RequestMcpServer>)]
    pub mcp: Vec<McpServer>,
    /// The workspace spec (only where the agent's `allow_request.workspace` is set): `{"type":"shared"}`,
    /// `{"type":"driver_managed"}` or `{"type":"git_worktree","base_ref":"main","branch_template":"run/{short}"}`.
    #[serde(default, deserialize_with = "super::body::strict_workspace")]
    #[schema(value_type = Option<Object>)]
    pub workspace: Option<WorkspaceSpec>,
    /// Runtime services from the agent's `service_catalog`, by name (only where the agent's
    /// `allow_request.services` is set), added to the agent's declared services.
    #[serde(default)]
    pub services: Vec<String>,
}

impl StartRunBody {
    /// Fills what the run leaves unset from its thread's defaults (metadata: the run's keys win).
    fn inherit(&mut self, d: &super::views::ThreadDefaults) {
        if self.model.is_none() {
            self.model.clone_from(&d.model);
        }
        if self.approvals.is_none() {
            self.approvals = d.approvals.map(ApprovalsBody::from);
        }
        for (k, v) in &d.metadata {
            self.metadata.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }

    /// The call options of the run; `approval_timeout` (the service's) is the deadline of an `approvals`
    /// policy that names none.
    fn options(
        &self,
        resources: &AgentResources,
        approval_timeout: Duration,
    ) -> Result<CallOptions, ApiError> {
        if self.prompt.trim().is_empty() {
            return Err(ApiError::invalid("prompt", "the prompt is empty"));
        }
        let mut o = CallOptions::new();
        if let Some(m) = &self.model {
            o = o.model(m);
        }
        if let Some(t) = self.timeout_ms {
            let t = super::ranges::in_range("timeout_ms", t, 1, super::ranges::MAX_RUN_TIMEOUT_MS)?;
            o = o.timeout(Duration::from_millis(t));
        }
        for (k, v) in &self.metadata {
            o = o.metadata(k, v);
        }
        if let Some(a) = &self.approvals {
            let mut approvals = a.policy("approvals")?;
            if approvals.timeout.is_none_or(|t| t.millis == 0) {
                // A request that sets no deadline (absent or 0) keeps the service's, not the library's 30 s.
                approvals = approvals.with_timeout(approval_timeout);
            }
            o = o.policy(Policy {
                approvals,
                ..Default::default()
            });
        }
        if let Some(s) = &self.schema {
            let bytes = serde_json::to_vec(s).map_err(|e| ApiError::invalid("schema", e.to_string()))?;
            o = o.schema_json(&bytes, Default::default());
        }
        if self.spawn {
            o = o.spawn();
        }
        resources.apply(
            RunResources {
                instructions: self.instructions.as_deref(),
                skills: &self.skills,
                mcp: &self.mcp,
                workspace: self.workspace.as_ref(),
                services: &self.services,
            },
            o,
        )
    }
}

/// The agent called `name`, or 404.
pub fn find_agent<'a>(state: &'a AppState, name: &str) -> Result<&'a super::agents::AgentEntry, ApiError> {
    state
        .agents
        .get(name)
        .ok_or_else(|| ApiError::not_found(format!("no agent named {name:?}")))
}

/// The public view of a run.
pub fn run_view(entry: &RunEntry) -> RunView {
    let (state, result, error) = match entry.stream.try_result() {
        Some(outcome) if entry.is_finished() => {
            let (state, result, error) = outcome_state(&outcome);
            (state, entry.metered.get().cloned().or(result), error)
        }
        _ if !entry.pending_approvals().is_empty() => (RunState::Parked, None, None),
        _ => (RunState::Running, None, None),
    };
    RunView {
        run_id: entry.run_id.clone(),
        agent: entry.agent.clone(),
        thread_key: entry.thread_key.clone(),
        state,
        result,
        error,
        created_at: entry.created_at,
        links: Some(RunLinks::of(&entry.run_id)),
    }
}

async fn start(
    state: Arc<AppState>,
    tenant: &Tenant,
    agent: &str,
    key: Option<String>,
    body: StartRunBody,
) -> Result<Response, ApiError> {
    if state.refuses_runs() {
        return Err(ApiError::shutting_down());
    }
    let a = state
        .agents
        .get(agent)
        .ok_or_else(|| ApiError::not_found(format!("no agent named {agent:?}")))?;
    let mut body = body;
    let mut fork_of = None;
    if let Some(k) = &key {
        if state.standbys.is_live(tenant.as_str(), agent, k) {
            return Err(ApiError::new(
                ErrorCode::ThreadBusy,
                "a Standby owns this thread: send through its standby route",
            ));
        }
        if let Some(decl) = state.declared.get(tenant.as_str(), agent, k).await? {
            body.inherit(&decl.defaults);
            // A fork starts from its parent until its own first run persisted a checkpoint.
            if decl.forked_from.is_some()
                && super::threads::checkpoint_of(a, tenant.as_str(), k)
                    .await?
                    .is_none()
            {
                fork_of = decl.forked_from;
            }
        }
    }
    let options = body.options(&a.resources, state.config.approval_timeout)?;
    let slot = state.limits.acquire_run(tenant.as_str())?;
    let entry = state
        .runs
        .start(
            &state.store,
            &state.config.owner,
            StartRun {
                agent: a,
                tenant: tenant.as_str(),
                thread_key: key,
                fork_of,
                prompt: body.prompt,
                options,
                slot: Some(slot),
                agui: None,
            },
        )
        .await?;
    let view = run_view(&entry);
    Ok(super::location::with(
        &super::location::run(&view.run_id),
        (StatusCode::CREATED, Json(view)),
    ))
}

/// `POST /v1/agents/{agent}/runs`: a stateless run.
#[utoipa::path(post, path = "/v1/agents/{agent}/runs", tag = "runs", params(("agent" = String, Path, description = "The agent name")), request_body = StartRunBody, responses((status = 201, description = "The run started", body = crate::views::RunView, headers(("Location" = String, description = "The run's path, `/v1/runs/{run_id}`"))), (status = 400, description = "invalid_json", body = crate::views::ErrorBody), (status = 402, description = "budget_exceeded: a budget of the tenant, agent or thread is spent (`[[budgets]]`)", body = crate::views::ErrorBody), (status = 403, description = "resource_not_allowed: the request adds a resource (MCP server, workspace, service) the agent's `allow_request` does not allow", body = crate::views::ErrorBody), (status = 404, description = "Unknown agent, run or thread", body = crate::views::ErrorBody), (status = 415, description = "unsupported_media_type", body = crate::views::ErrorBody), (status = 422, description = "invalid_request", body = crate::views::ErrorBody), (status = 503, description = "shutting_down (draining or stopping) or capacity_exhausted (the replica admits `max_active` runs; `Retry-After: 5`)", body = crate::views::ErrorBody)))]
pub async fn start_stateless(
    State(state): State<Arc<AppState>>,
    tenant: Tenant,
    Path(agent): Path<String>,
    JsonBody(body): JsonBody<StartRunBody>,
) -> Result<Response, ApiError> {
    start(state, &tenant, &agent, None, body).await
}

/// `POST /v1/agents/{agent}/threads/{key}/runs`: a run on a thread.
#[utoipa::path(post, path = "/v1/agents/{agent}/threads/{key}/runs", tag = "runs", params(("agent" = String, Path, description = "The agent name"), ("key" = String, Path, description = "The thread key (1 to 512 bytes)")), request_body = StartRunBody, responses((status = 201, description = "The run started on the thread", body = crate::views::RunView, headers(("Location" = String, description = "The run's path, `/v1/runs/{run_id}`"))), (status = 400, description = "invalid_json", body = crate::views::ErrorBody), (status = 402, description = "budget_exceeded: a budget of the tenant, agent or thread is spent (`[[budgets]]`)", body = crate::views::ErrorBody), (status = 403, description = "resource_not_allowed: the request adds a resource (MCP server, workspace, service) the agent's `allow_request` does not allow", body = crate::views::ErrorBody), (status = 404, description = "Unknown agent, run or thread", body = crate::views::ErrorBody), (status = 409, description = "thread_busy", body = crate::views::ErrorBody), (status = 415, description = "unsupported_media_type", body = crate::views::ErrorBody), (status = 422, description = "invalid_request", body = crate::views::ErrorBody), (status = 503, description = "shutting_down (draining or stopping) or capacity_exhausted (the replica admits `max_active` runs; `Retry-After: 5`)", body = crate::views::ErrorBody)))]
pub async fn start_on_thread(
    State(state): State<Arc<AppState>>,
    tenant: Tenant,
    Path((agent, key)): Path<(String, String)>,
    JsonBody(body): JsonBody<StartRunBody>,
) -> Result<Response, ApiError> {
    super::threads::check_key("key", &key)?;
    start(state, &tenant, &agent, Some(key), body).await
}

/// `GET /v1/runs/{run_id}`.
#[utoipa::path(get, path = "/v1/runs/{run_id}", tag = "runs", params(("run_id" = String, Path, description = "The run id")), responses((status = 200, description = "The run", body = crate::views::RunView), (status = 404, description = "Unknown agent, run or thread", body = crate::views::ErrorBody)))]
pub async fn get_run(
    State(state): State<Arc<AppState>>,
    tenant: Tenant,
    Path(run_id): Path<String>,
) -> Result<Json<RunView>, ApiError> {
    if let Some(entry) = state.runs.get(tenant.as_str(), &run_id) {
        return Ok(Json(run_view(&entry)));
    }
    let r = stored_run(&state, &tenant, &run_id).await?;
    Ok(Json(RunView {
        run_id: r.run_id,
        agent: r.agent,
        thread_key: r.thread_key,
        state: r.state,
        result: r.result,
        error: r.error,
        created_at: r.created_at,
        links: None,
    }))
}

/// `POST /v1/runs/{run_id}/cancel`: explicit cancellation (202; 409 when already finished).
#[utoipa::path(post, path = "/v1/runs/{run_id}/cancel", tag = "runs", params(("run_id" = String, Path, description = "The run id")), responses((status = 202, description = "Cancellation requested", body = crate::views::RunView), (status = 404, description = "Unknown agent, run or thread", body = crate::views::ErrorBody), (status = 409, description = "run_finished", body = crate::views::ErrorBody)))]
pub async fn cancel_run(
    State(state): State<Arc<AppState>>,
    tenant: Tenant,
    Path(run_id): Path<String>,
) -> Result<Response, ApiError> {
    let Some(entry) = state.runs.get(tenant.as_str(), &run_id) else {
        return match state
            .store
            .get_run(tenant.as_str(), &run_id)
            .await
            .map_err(ApiError::store)?
        {
            Some(_) => Err(ApiError::new(ErrorCode::RunFinished, "the run already finished")),
            None => Err(ApiError::not_found(format!("no run {run_id:?}"))),
        };
    };
    if entry.is_finished() {
        return Err(ApiError::new(ErrorCode::RunFinished, "the run already finished"));
    }
    entry.stream.cancel();
    Ok((StatusCode::ACCEPTED, Json(run_view(&entry))).into_response())
}

/// `?after=` of the events route.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventsQuery {
    /// Replay events with a sequence above this.
    #[serde(default)]
    pub after: Option<String>,
}

/// The replay cursor of an events request: `Last-Event-ID` wins over `?after=`; 0 when neither is given.
/// Both are strict decimals ([`super::ranges::decimal`]: digits only, no sign or space); a header that
/// is not visible ASCII is refused like any other bad cursor (422 naming `Last-Event-ID`), never read as
/// absent. An empty `Last-Event-ID` is the EventSource spec's "no last event id": as if absent.
pub fn cursor(headers: &HeaderMap, query: &EventsQuery) -> Result<u64, ApiError> {
    let from_header = match headers.get("last-event-id").map(|v| v.as_bytes()) {
        None | Some(b"") => None,
        Some(raw) => Some(std::str::from_utf8(raw).unwrap_or("\u{fffd}")),
    };
    match (from_header, query.after.as_deref()) {
        (Some(h), _) => super::ranges::decimal("Last-Event-ID", h),
        (None, Some(a)) => super::ranges::decimal("after", a),
        (None, None) => Ok(0),
    }
}

/// A run of `tenant` as the store has it (a run no longer, or never, in memory); 404 when there is none
/// (a Standby's hold record is not a run).
async fn stored_run(state: &AppState, tenant: &Tenant, run_id: &str) -> Result<RunRecord, ApiError> {
    state
        .store
        .get_run(tenant.as_str(), run_id)
        .await
        .map_err(ApiError::store)?
        .filter(|r| !r.run_id.starts_with(super::recovery::STANDBY_RECORD_PREFIX))
        .ok_or_else(|| ApiError::not_found(format!("no run {run_id:?}")))
}

/// `GET /v1/runs/{run_id}/events`: SSE with replay.
#[utoipa::path(get, path = "/v1/runs/{run_id}/events", tag = "runs", params(("run_id" = String, Path, description = "The run id"), ("after" = Option<String>, Query, pattern = "^[0-9]{1,20}$", description = "Replay events with a sequence above this: decimal digits only (no sign or space), at most 18446744073709551615; else 422 `invalid_request`"), ("Last-Event-ID" = Option<String>, Header, pattern = "^[0-9]{0,20}$", description = "Resume after this sequence (wins over `after`): decimal digits only; empty is as if absent; anything else (a sign, a space, non-ASCII bytes) 422 `invalid_request`")), responses((status = 200, description = "The run's events: `id:` sequence, `event:` kind, `data:` JSON; replayed then followed live (one reader: the run's live window, the durable log behind it). Frames without `id:`: `lag` (the client fell behind the live window; the missed events follow from the durable log, no gap), `gap` (events the durable log cannot give back, skipped), `error` (`store_error`), `shutdown` when the service stops", content_type = "text/event-stream", body = String), (status = 404, description = "Unknown agent, run or thread", body = crate::views::ErrorBody), (status = 422, description = "invalid_request: bad cursor", body = crate::views::ErrorBody)))]
pub async fn run_events(
    State(state): State<Arc<AppState>>,
    tenant: Tenant,
    Path(run_id): Path<String>,
    headers: HeaderMap,
    Query(query): Query<EventsQuery>,
) -> Result<Response, ApiError> {
    let after = cursor(&headers, &query)?;
    let reader = run_reader(&state, &tenant, &run_id, after).await?;
    let gauge = sse::SubscriberGauge::open(state.runs.clone());
    let frames = sse::follow(reader, state.shutdown.clone(), Some(gauge));
    Ok(sse::stream_response(frames, state.config.keep_alive))
}

/// A reader of run `run_id`'s log after `after`: from memory while the run is in this process, else
/// from the durable log (404 when the tenant has no such run).
pub async fn run_reader(
    state: &AppState,
    tenant: &Tenant,
    run_id: &str,
    after: u64,
) -> Result<LogReader, ApiError> {
    if let Some(entry) = state.runs.get(tenant.as_str(), run_id) {
        return Ok(entry.reader(after));
    }
    let run = stored_run(state, tenant, run_id).await?;
    Ok(stored_reader(state, &run, after))
}

/// A reader of a stored run's log after `after` (the run is not in this process's memory).
pub fn stored_reader(state: &AppState, run: &RunRecord, after: u64) -> LogReader {
    let exposure = state
        .agents
        .get(&run.agent)
        .map(|a| a.exposure)
        .unwrap_or_default();
    let interrupted = (run.state == crate::store::RunState::Interrupted)
        .then(|| {
            run.error
                .as_ref()
                .and_then(|e| e["details"]["last_recorded_seq"].as_u64())
        })
        .flatten();
    LogReader::new(
        Source {
            run_id: run.run_id.clone(),
            live: None,
            recorder: Recorder::new(state.store.clone(), run.tenant.as_str(), &run.agent, exposure),
            view: exposure,
            interrupted,
        },
        after,
    )
}

/// `?pending=` of the approvals route.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApprovalsQuery {
    /// Only the approvals still waiting for an answer.
    #[serde(default)]
    pub pending: Option<bool>,
}

/// `GET /v1/runs/{run_id}/approvals`: every approval of the run, live or finished, each with whether it
/// is pending and, once it ended, its `outcome` (`?pending=true` for pending ones only). The durable rows
/// are the view (the run records every ending on them); a live request that ended before its row tells
/// is shown ended, one whose row could not be written is shown from memory.
#[utoipa::path(get, path = "/v1/runs/{run_id}/approvals", tag = "approvals", params(("run_id" = String, Path, description = "The run id"), ("pending" = Option<bool>, Query, description = "`true`: only the approvals still waiting for an answer (live and finished runs alike)")), responses((status = 200, description = "The run's approvals, oldest first", body = crate::views::ApprovalList), (status = 400, description = "invalid_query", body = crate::views::ErrorBody), (status = 404, description = "Unknown agent, run or thread", body = crate::views::ErrorBody)))]
pub async fn list_approvals(
    State(state): State<Arc<AppState>>,
    tenant: Tenant,
    Path(run_id): Path<String>,
    Query(query): Query<ApprovalsQuery>,
) -> Result<Json<ApprovalList>, ApiError> {
    let entry = state.runs.get(tenant.as_str(), &run_id);
    if entry.is_none()
        && state
            .store
            .get_run(tenant.as_str(), &run_id)
            .await
            .map_err(ApiError::store)?
            .is_none()
    {
        return Err(ApiError::not_found(format!("no run {run_id:?}")));
    }
    let stored = state
        .store
        .list_approvals(tenant.as_str(), &run_id, false)
        .await
        .map_err(ApiError::store)?;
    let now = chrono::Utc::now();
    let mut approvals = stored
        .iter()
        .map(|a| {
            let mut view: ApprovalView = serde_json::from_value(a.payload.clone()).map_err(|e| {
                ApiError::store_failure(format!("a stored approval of run {run_id:?} is unreadable: {e}"))
            })?;
            view.outcome = approval_outcome(a).map(str::to_owned);
            view.pending = view.outcome.is_none();
            let live = entry.as_ref().and_then(|e| e.approval(&a.request_id));
            if view.pending && (a.deadline <= now || live.is_some_and(|r| !r.is_pending())) {
                // Ended in the runtime; the run records how on the row right after.
                view.pending = false;
                view.outcome = Some("expired".into());
            }
            Ok(view)
        })
        .collect::<Result<Vec<_>, ApiError>>()?;
    if let Some(e) = &entry {
        for req in e.pending_approvals() {
            if !stored.iter().any(|a| a.request_id == req.id) {
                approvals.push(approval_view(&req));
            }
        }
    }
    if query.pending == Some(true) {
        approvals.retain(|a| a.pending);
    }
    Ok(Json(ApprovalList { approvals }))
}

/// True when a stored approval was answered (as opposed to ended unanswered: expired or cancelled).
fn answered(a: &crate::store::Approval) -> bool {
    matches!(approval_outcome(a), Some("approved" | "denied" | "answered"))
}

/// The body of an approval answer.
#[derive(Debug, Clone, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub struct DecisionBody {
    /// `approve`, `deny` or `answer`.
    pub decision: Decision,
    /// The reason of a denial.
    #[serde(default)]
    pub reason: Option<String>,
    /// The answer to a question: a choice key or free text.
    #[serde(default)]
    pub answer: Option<String>,
}

/// What the host decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Approve a permission or plan review.
    Approve,
    /// Deny any request.
    Deny,
    /// Answer a question.
    Answer,
}

/// `POST /v1/runs/{run_id}/approvals/{id}`: answers exactly once (409 duplicate, 410 expired, 422 wrong
/// kind, 404 unknown).
#[utoipa::path(post, path = "/v1/runs/{run_id}/approvals/{id}", tag = "approvals", params(("run_id" = String, Path, description = "The run id"), ("id" = String, Path, description = "The approval id")), request_body = DecisionBody, responses((status = 200, description = "The decision is delivered", body = crate::views::DecisionAccepted), (status = 400, description = "invalid_json", body = crate::views::ErrorBody), (status = 404, description = "Unknown agent, run or thread", body = crate::views::ErrorBody), (status = 409, description = "approval_resolved", body = crate::views::ErrorBody), (status = 410, description = "approval_expired or approval_unavailable", body = crate::views::ErrorBody), (status = 422, description = "approval_kind_mismatch or invalid_request", body = crate::views::ErrorBody)))]
pub async fn decide(
    State(state): State<Arc<AppState>>,
    tenant: Tenant,
    Path((run_id, id)): Path<(String, String)>,
    JsonBody(body): JsonBody<DecisionBody>,
) -> Result<Json<DecisionAccepted>, ApiError> {
    let entry = state.runs.get(tenant.as_str(), &run_id);
    let live = entry.as_ref().and_then(|e| e.approval(&id));
    let Some(req) = live else {
        // Not live here: answer from the durable record.
        if state
            .store
            .get_run(tenant.as_str(), &run_id)
            .await
            .map_err(ApiError::store)?
            .is_none()
        {
            return Err(ApiError::not_found(format!("no run {run_id:?}")));
        }
        let stored = state
            .store
            .list_approvals(tenant.as_str(), &run_id, false)
            .await
            .map_err(ApiError::store)?;
        return match stored.into_iter().find(|a| a.request_id == id) {
            None => Err(ApiError::not_found(format!(
                "no approval {id:?} on run {run_id:?}"
            ))),
            Some(a) if answered(&a) => Err(ApiError::approval(&crate::runtime::ApprovalError::Resolved)),
            Some(_) => Err(ApiError::approval(&crate::runtime::ApprovalError::Expired)),
        };
    };
    let question = req.kind == DecisionKind::Question;
    match body.decision {
        Decision::Approve if question => {
            return Err(ApiError::approval(&crate::runtime::ApprovalError::KindMismatch {
                kind: req.kind,
                response: "approve",
            }));
        }
        Decision::Answer if !question => {
            return Err(ApiError::approval(&crate::runtime::ApprovalError::KindMismatch {
                kind: req.kind,
                response: "answer",
            }));
        }
        Decision::Answer if body.answer.as_deref().unwrap_or("").is_empty() => {
            return Err(ApiError::invalid(
                "answer",
                "an answer needs a choice key or text",
            ));
        }
        _ => {}
    }
    if !req.is_pending() {
        // Answered or expired in the runtime already: tell which from the durable record.
        let stored = state
            .store
            .list_approvals(tenant.as_str(), &run_id, false)
            .await
            .map_err(ApiError::store)?;
        let resolved = stored.iter().any(|a| a.request_id == id && answered(a));
        return Err(ApiError::approval(&if resolved {
            crate::runtime::ApprovalError::Resolved
        } else {
            crate::runtime::ApprovalError::Expired
        }));
    }
    let decision = serde_json::to_value(&body).unwrap_or(Value::Null);
    match state
        .store
        .resolve_approval(tenant.as_str(), &id, decision.clone())
        .await
    {
        Ok(_) => {}
        Err(StoreError::AlreadyResolved { .. }) => {
            return Err(ApiError::approval(&crate::runtime::ApprovalError::Resolved));
        }
        Err(StoreError::Expired { .. }) => {
            return Err(ApiError::approval(&crate::runtime::ApprovalError::Expired));
        }
        Err(StoreError::NotFound) => {}
        Err(e) => return Err(ApiError::store(e)),
    }
    let answered = match body.decision {
        Decision::Approve => req.approve(),
        Decision::Deny => req.deny(body.reason.clone().unwrap_or_else(|| "denied by the host".into())),
        Decision::Answer => req.answer(body.answer.clone().unwrap_or_default()),
    };
    answered.map_err(|e| ApiError::approval(&e))?;
    Ok(Json(DecisionAccepted {
        id,
        run_id,
        decision: body,
    }))
}

/// The body of a supplemental message.
#[derive(Debug, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MessageBody {
    /// The text (not empty or only whitespace).
    #[schema(min_length = 1, pattern = "\\S")]
    pub text: String,
    /// The message id (idempotency key); generated when absent.
    #[serde(default)]
    pub id: Option<String>,
    /// `soon` (default), `interrupt` or `after_turn`.
    #[serde(default)]
    #[schema(value_type = Option<super::openapi::shapes::MessageTiming>, example = "soon")]
    pub timing: Option<Timing>,
}

/// `POST /v1/runs/{run_id}/messages`: 202 with the message id on admission.
#[utoipa::path(post, path = "/v1/runs/{run_id}/messages", tag = "runs", params(("run_id" = String, Path, description = "The run id")), request_body = MessageBody, responses((status = 202, description = "The message is admitted", body = crate::views::MessageAccepted), (status = 400, description = "invalid_json", body = crate::views::ErrorBody), (status = 403, description = "messages_disabled", body = crate::views::ErrorBody), (status = 404, description = "Unknown agent, run or thread", body = crate::views::ErrorBody), (status = 409, description = "run_finished or run_cancelled", body = crate::views::ErrorBody), (status = 413, description = "message_too_large", body = crate::views::ErrorBody), (status = 422, description = "invalid_request or message_unsupported", body = crate::views::ErrorBody)))]
pub async fn post_message(
    State(state): State<Arc<AppState>>,
    tenant: Tenant,
    Path(run_id): Path<String>,
    JsonBody(body): JsonBody<MessageBody>,
) -> Result<Response, ApiError> {
    if body.text.trim().is_empty() {
        return Err(ApiError::invalid("text", "the message is empty"));
    }
    let Some(entry) = state.runs.get(tenant.as_str(), &run_id) else {
        return match state
            .store
            .get_run(tenant.as_str(), &run_id)
            .await
            .map_err(ApiError::store)?
        {
            Some(_) => Err(ApiError::new(ErrorCode::RunFinished, "the run already finished")),
            None => Err(ApiError::not_found(format!("no run {run_id:?}"))),
        };
    };
    let mut opts = MessageOptions::new();
    if let Some(id) = &body.id {
        opts = opts.id(id);
    }
    if let Some(t) = body.timing {
        opts = opts.when(t);
    }
    let id = entry
        .stream
        .send(body.text, opts)
        .await
        .map_err(|e| ApiError::message(&e))?;
    Ok((
        StatusCode::ACCEPTED,
        Json(MessageAccepted {
            message_id: id,
            run_id: Some(run_id),
        }),
    )
        .into_response())
}
