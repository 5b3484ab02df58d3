//! Run listing: `GET /v1/runs` and `GET /v1/agents/{agent}/threads/{key}/runs`, newest first, filtered by
//! state (and agent) and a creation-time window (`since`, `until`), cursor-paged. A tenant's key lists its own runs; an operator tenant's key
//! (`admin = true`) lists every tenant's. The cursor is opaque hex naming the last run of a page and a
//! fingerprint of the query and the caller's scope, so a cursor handed to another query or tenant is 422.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use utoipa::ToSchema;

use super::AppState;
use super::auth::Tenant;
use super::error::ApiError;
use super::extract::{Path, Query};
use super::recovery::STANDBY_RECORD_PREFIX;
use crate::store::{RunPosition, RunRecord, RunSearch, RunState};

/// Largest page of a run listing.
pub const MAX_RUN_PAGE: u32 = 500;
/// Default page of a run listing.
pub const DEFAULT_RUN_PAGE: u32 = 50;

/// The query of `GET /v1/runs`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunsParams {
    /// Only runs in this state.
    pub state: Option<RunState>,
    /// Only runs created at or after this time (RFC 3339).
    pub since: Option<DateTime<Utc>>,
    /// Only runs created before this time (RFC 3339).
    pub until: Option<DateTime<Utc>>,
    /// Only runs of this agent.
    pub agent: Option<String>,
    /// Page size, 1 to 500 (default 50).
    pub limit: Option<u32>,
    /// The `next_cursor` of the previous page.
    pub cursor: Option<String>,
}

/// The query of `GET /v1/agents/{agent}/threads/{key}/runs`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThreadRunsParams {
    /// Only runs in this state.
    pub state: Option<RunState>,
    /// Only runs created at or after this time (RFC 3339).
    pub since: Option<DateTime<Utc>>,
    /// Only runs created before this time (RFC 3339).
    pub until: Option<DateTime<Utc>>,
    /// Page size, 1 to 500 (default 50).
    pub limit: Option<u32>,
    /// The `next_cursor` of the previous page.
    pub cursor: Option<String>,
}

/// One run in a listing.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"run_id": "0193a1b2-7c4d-7e8f-9a0b-1c2d3e4f5a6b", "tenant": "default", "agent": "claude", "thread_key": "demo", "state": "succeeded", "created_at": "2026-01-01T12:00:00Z", "ended_at": "2026-01-01T12:00:09Z", "usage": {"input_tokens": 120, "output_tokens": 48}}))]
pub struct RunSummary {
    /// The run id.
    pub run_id: String,
    /// The tenant the run belongs to.
    pub tenant: String,
    /// The agent.
    pub agent: String,
    /// The thread key, for a run on a thread.
    pub thread_key: Option<String>,
    /// The lifecycle state (`queued`, `running`, `parked`, `succeeded`, `failed`, `cancelled`,
    /// `interrupted`).
    #[schema(value_type = String, example = "succeeded")]
    pub state: RunState,
    /// When the run started.
    pub created_at: DateTime<Utc>,
    /// When the run ended (`null` while it runs).
    pub ended_at: Option<DateTime<Utc>>,
    /// The metered usage of a finished run, as in its result (`null` when none was recorded).
    #[schema(value_type = Option<Object>)]
    pub usage: Option<Value>,
}

/// A page of runs, newest first.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RunList {
    /// The runs, newest first (by start time, then run id).
    pub runs: Vec<RunSummary>,
    /// The `cursor` of the next page, when there may be one.
    pub next_cursor: Option<String>,
}

/// What a listing selects, before paging.
struct Scope {
    tenant: Option<String>,
    agent: Option<String>,
    thread_key: Option<String>,
    state: Option<RunState>,
    since: Option<DateTime<Utc>>,
    until: Option<DateTime<Utc>>,
}

impl Scope {
    /// A fingerprint of the scope: a cursor carries it and is refused under any other.
    fn fingerprint(&self) -> String {
        let state = self.state.map(RunState::as_str);
        let window = (
            self.since.map(|t| t.timestamp_micros()),
            self.until.map(|t| t.timestamp_micros()),
        );
        let text = serde_json::to_vec(&(&self.tenant, &self.agent, &self.thread_key, state, window))
            .unwrap_or_default();
        hex::encode(&Sha256::digest(&text)[..8])
    }
}

/// The cursor of the page after `run`.
fn cursor(scope: &Scope, run: &RunRecord) -> String {
    let text = serde_json::to_vec(&(
        scope.fingerprint(),
        run.created_at.timestamp_micros(),
        &run.run_id,
    ))
    .unwrap_or_default();
    hex::encode(text)
}

/// The position a cursor names; 422 for anything this query did not hand out.
fn parse_cursor(scope: &Scope, s: &str) -> Result<RunPosition, ApiError> {
    let bad = || ApiError::invalid("cursor", "not a cursor this query returned");
    let bytes = hex::decode(s).map_err(|_| bad())?;
    let (fingerprint, micros, run_id): (String, i64, String) =
        serde_json::from_slice(&bytes).map_err(|_| bad())?;
    if fingerprint != scope.fingerprint() || run_id.is_empty() {
        return Err(bad());
    }
    let created_at = DateTime::from_timestamp_micros(micros).ok_or_else(bad)?;
    Ok(RunPosition { created_at, run_id })
}

/// The summary of a stored run.
fn summary(r: RunRecord) -> RunSummary {
    let usage = r
        .result
        .as_ref()
        .and_then(|v| v.get("usage"))
        .filter(|u| !u.is_null())
        .cloned();
    RunSummary {
        ended_at: r.state.is_terminal().then_some(r.updated_at),
        run_id: r.run_id,
        tenant: r.tenant,
        agent: r.agent,
        thread_key: r.thread_key,
        state: r.state,
        created_at: r.created_at,
        usage,
    }
}

/// One page of `scope`.
async fn page(
    state: &AppState,
    scope: Scope,
    limit: Option<u32>,
    after: Option<&str>,
) -> Result<RunList, ApiError> {
    let limit = super::ranges::in_range("limit", limit.unwrap_or(DEFAULT_RUN_PAGE), 1, MAX_RUN_PAGE)?;
    if let (Some(since), Some(until)) = (scope.since, scope.until)
        && since >= until
    {
        return Err(ApiError::invalid("until", "until must be later than since"));
    }
    let before = after.map(|c| parse_cursor(&scope, c)).transpose()?;
    let search = RunSearch {
        tenant: scope.tenant.clone(),
        agent: scope.agent.clone(),
        thread_key: scope.thread_key.clone(),
        state: scope.state,
        since: scope.since,
        until: scope.until,
        before,
        limit,
    };
    let runs = state.store.search_runs(&search).await.map_err(ApiError::store)?;
    let next_cursor = (runs.len() as u32 == limit)
        .then(|| runs.last().map(|r| cursor(&scope, r)))
        .flatten();
    Ok(RunList {
        // A Standby's hold record is not a run.
        runs: runs
            .into_iter()
            .filter(|r| !r.run_id.starts_with(STANDBY_RECORD_PREFIX))
            .map(summary)
            .collect(),
        next_cursor,
    })
}

/// The tenant a caller lists: its own, or every tenant's for an operator key.
fn tenant_scope(state: &AppState, tenant: &Tenant) -> Option<String> {
    (!state.auth.is_admin(tenant.as_str())).then(|| tenant.as_str().to_owned())
}

/// `GET /v1/runs`: the caller's runs, newest first.
#[utoipa::path(get, path = "/v1/runs", tag = "runs", params(("state" = Option<String>, Query, description = "Only runs in this state: queued, running, parked, succeeded, failed, cancelled or interrupted"), ("since" = Option<String>, Query, format = DateTime, description = "Only runs created at or after this time (RFC 3339)"), ("until" = Option<String>, Query, format = DateTime, description = "Only runs created before this time (RFC 3339; later than `since`)"), ("agent" = Option<String>, Query, description = "Only runs of this agent"), ("limit" = Option<u32>, Query, minimum = 1, maximum = 500, description = "Page size, 1 to 500 (default 50)"), ("cursor" = Option<String>, Query, description = "The `next_cursor` of the previous page (of the same query)")), responses((status = 200, description = "A page of runs, newest first", body = RunList), (status = 400, description = "invalid_query: an unknown parameter or state, or a time that is not RFC 3339", body = crate::views::ErrorBody), (status = 422, description = "invalid_request: `limit` out of range, `until` not later than `since`, or a `cursor` of another query", body = crate::views::ErrorBody)))]
pub async fn list(
    State(state): State<Arc<AppState>>,
    tenant: Tenant,
    Query(q): Query<RunsParams>,
) -> Result<Json<RunList>, ApiError> {
    let scope = Scope {
        tenant: tenant_scope(&state, &tenant),
        agent: q.agent,
        thread_key: None,
        state: q.state,
        since: q.since,
        until: q.until,
    };
    Ok(Json(page(&state, scope, q.limit, q.cursor.as_deref()).await?))
}

/// `GET /v1/agents/{agent}/threads/{key}/runs`: the runs of one thread, newest first.
#[utoipa::path(get, path = "/v1/agents/{agent}/threads/{key}/runs", tag = "runs", params(("agent" = String, Path, description = "The agent name"), ("key" = String, Path, description = "The thread key"), ("state" = Option<String>, Query, description = "Only runs in this state: queued, running, parked, succeeded, failed, cancelled or interrupted"), ("since" = Option<String>, Query, format = DateTime, description = "Only runs created at or after this time (RFC 3339)"), ("until" = Option<String>, Query, format = DateTime, description = "Only runs created before this time (RFC 3339; later than `since`)"), ("limit" = Option<u32>, Query, minimum = 1, maximum = 500, description = "Page size, 1 to 500 (default 50)"), ("cursor" = Option<String>, Query, description = "The `next_cursor` of the previous page (of the same query)")), responses((status = 200, description = "A page of the thread's runs, newest first", body = RunList), (status = 400, description = "invalid_query: an unknown parameter or state, or a time that is not RFC 3339", body = crate::views::ErrorBody), (status = 404, description = "Unknown agent", body = crate::views::ErrorBody), (status = 422, description = "invalid_request: `limit` out of range, `until` not later than `since`, or a `cursor` of another query", body = crate::views::ErrorBody)))]
pub async fn list_thread(
    State(state): State<Arc<AppState>>,
    tenant: Tenant,
    Path((agent, key)): Path<(String, String)>,
    Query(q): Query<ThreadRunsParams>,
) -> Result<Json<RunList>, ApiError> {
    super::rest::find_agent(&state, &agent)?;
    let scope = Scope {
        tenant: tenant_scope(&state, &tenant),
        agent: Some(agent),
        thread_key: Some(key),
        state: q.state,
        since: q.since,
        until: q.until,
    };
    Ok(Json(page(&state, scope, q.limit, q.cursor.as_deref()).await?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope(tenant: Option<&str>) -> Scope {
        Scope {
            tenant: tenant.map(str::to_owned),
            agent: None,
            thread_key: None,
            state: Some(RunState::Succeeded),
            since: None,
            until: None,
        }
    }

    #[test]
    fn cursors_round_trip_only_under_their_own_scope() {
        let run = RunRecord {
            run_id: "r-1".into(),
            tenant: "acme".into(),
            agent: "a".into(),
            thread_key: None,
            state: RunState::Succeeded,
            owner: "o".into(),
            result: None,
            error: None,
            created_at: crate::store::now(),
            updated_at: crate::store::now(),
        };
        let c = cursor(&scope(Some("acme")), &run);
        let pos = parse_cursor(&scope(Some("acme")), &c).unwrap();
        assert_eq!((pos.created_at, pos.run_id.as_str()), (run.created_at, "r-1"));
        assert_eq!(
            parse_cursor(&scope(Some("other")), &c).unwrap_err().code.as_str(),
            "invalid_request"
        );
        assert_eq!(
            parse_cursor(&scope(None), &c).unwrap_err().code.as_str(),
            "invalid_request"
        );
        assert_eq!(
            parse_cursor(&scope(Some("acme")), "zz")
                .unwrap_err()
                .code
                .as_str(),
            "invalid_request"
        );
    }
}
